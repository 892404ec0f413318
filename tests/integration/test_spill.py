"""Spill and refill in a live crawl: with a frontier window of two jobs per host, most URLs
wait in ``crawl.db``'s ``urls`` table and come back as their host's window empties."""

from __future__ import annotations

from pathlib import Path

import pytest

import gossamer.engine.backlog
from gossamer.config import PolitenessConfig
from gossamer.engine.backlog import build_frontier
from gossamer.frontier import Backlog, Frontier
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl, query

WINDOW = 2


def test_a_small_window_spills_to_disk_and_still_crawls_every_url_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Frontier] = []

    def small_window(
        politeness: PolitenessConfig,
        stats: CrawlStats,
        *,
        backlog: Backlog | None = None,
        sites: SiteRules | None = None,
        to_the_end: bool = False,
    ) -> Frontier:
        # The crawler's own frontier, database backlog and all, with a window of two.
        frontier = build_frontier(
            politeness, stats, backlog=backlog, window=WINDOW, sites=sites, to_the_end=to_the_end
        )
        built.append(frontier)
        return frontier

    monkeypatch.setattr(gossamer.engine.backlog, "build_frontier", small_window)
    web = build_web(WebSpec(seed=11, hosts=8, pages_per_host=20, latency=0.0))
    with ThreadedTestWeb(web) as site:
        run = crawl(site, tmp_path)
        report = site.report()
        expected = site.expected()
    assert len(built) == 1
    assert run.outcome.reason == "exhausted"
    # Every URL the test web expects, each fetched once.
    assert report.missing == ()
    assert report.repeated_fetches == 0
    assert report.ok(), report.summary()
    db = run.out / "crawl.db"
    spilled = {str(u) for (u,) in query(db, "SELECT url FROM urls WHERE spilled = 1")}
    [(queued,)] = query(db, "SELECT count(*) FROM urls WHERE discovered_at IS NOT NULL")
    fetched = [str(u) for (u,) in query(db, "SELECT url FROM pages")]
    assert len(spilled) > int(str(queued)) // 2  # most URLs waited on disk
    assert len(fetched) == len(set(fetched))
    # Spilled URLs came back from disk: those the site allows were all fetched; the others
    # were refused by robots.txt as they were loaded.
    assert len(spilled & expected) > len(spilled) // 2
    assert spilled & expected <= set(fetched)
    assert 0 < len(spilled - set(fetched)) <= run.outcome.stats.skipped_robots
