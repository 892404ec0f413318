"""The terminal progress line: the rate of the last minute once there is one, and the ETA
towards the page target or the time limit, whichever comes first."""

from __future__ import annotations

import pytest

from gossamer.config import PolitenessConfig
from gossamer.crawling.progress import Progress, clock
from gossamer.engine.backlog import build_frontier
from gossamer.stats import CrawlStats

START = 1_000_000.0


def line_at(stats: CrawlStats, at: float, targets: tuple[int | None, float | None]) -> str:
    frontier = build_frontier(PolitenessConfig(), stats)
    return Progress(stats, frontier, enabled=False, targets=targets).line(START + at)


def crawled(pages_by_second: list[int]) -> CrawlStats:
    """A crawl sampled once a second, ``pages_by_second[i]`` pages stored by second ``i``."""
    stats = CrawlStats(started=START)
    for second, pages in enumerate(pages_by_second):
        stats.pages = pages
        stats.sample(START + second)
    return stats


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(None, "--"), (0.4, "0s"), (42.0, "42s"), (185.0, "3m05s"), (3720.0, "1h02m")],
)
def test_clock(seconds: float | None, shown: str) -> None:
    assert clock(seconds) == shown


def test_the_eta_is_the_page_target_at_the_rate_of_the_last_minute() -> None:
    # 10 pages/s for the first 100 s, then 2 pages/s: the last minute says 2.
    pages = [10 * s for s in range(101)] + [1000 + 2 * s for s in range(1, 61)]
    stats = crawled(pages)
    line = line_at(stats, 160, (1600, None))
    assert "1120 pages" in line
    assert "    2.0 p/s" in line
    assert line.endswith("ETA  4m00s")  # 480 pages left at 2 pages/s


def test_a_nearer_time_limit_is_the_eta() -> None:
    stats = crawled([0, 5, 10, 15, 20])
    assert line_at(stats, 4, (1000, 64.0)).endswith("ETA  1m00s")  # 196 s to the target
    assert line_at(stats, 4, (30, 64.0)).endswith("ETA     2s")  # the target first


def test_no_target_no_eta_and_a_young_crawl_has_its_overall_rate() -> None:
    stats = CrawlStats(started=START)
    stats.pages = 3
    line = line_at(stats, 0.5, (None, None))
    assert "ETA" not in line
    assert "    6.0 p/s" in line  # no sample a second old yet: pages over the time so far
    assert line_at(stats, 0.5, (10, None)).endswith("ETA     1s")
