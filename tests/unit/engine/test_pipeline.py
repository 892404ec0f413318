"""Small pure pieces of the pipeline."""

from __future__ import annotations

import contextlib
import email.utils
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.recorder import PARSE_LIMIT, Recorder
from gossamer.engine.backlog import build_frontier
from gossamer.engine.pipeline import Pipeline
from gossamer.fetch import FetchResult
from gossamer.frontier import Frontier, Job, retry_after
from gossamer.robots import RobotsRules
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from tests.unit.engine.visits import Visits


def test_retry_after_forms() -> None:
    assert retry_after("120", 0.0) == 120.0
    assert retry_after(None, 0.0) is None
    assert retry_after("soon", 0.0) is None
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    value = retry_after(date, now)
    assert value is not None and 29.0 <= value <= 31.0


def test_links_come_from_the_first_parse_limit_bytes_only(tmp_path: Path) -> None:
    config = CrawlConfig(seeds=tmp_path / "s", out=tmp_path)
    stats = CrawlStats()
    db = MetadataDB(tmp_path / "crawl.db")
    frontier = build_frontier(config.politeness, stats)
    admitter = Admitter(config.scope, frontier=frontier, stats=stats, db=db)
    recorder = Recorder(admitter=admitter, stats=stats, db=db)
    filler = b"<p>" + b"x" * PARSE_LIMIT + b"</p>"
    body = b'<html><a href="/early">e</a>' + filler + b'<a href="/late">l</a></html>'
    page = FetchResult(
        url="http://a.test/",
        status=200,
        response_headers=(("Content-Type", "text/html"),),
        body=body,
        content=body,
        content_type="text/html",
    )
    assert recorder.record_page(Job(url=page.url, host="a.test"), page, None)
    assert frontier.seen("http://a.test/early")
    assert not frontier.seen("http://a.test/late")
    db.close()


class Clock:
    """An injected clock for the frontier and the pipeline: time moves when the test says."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def clocked(
    tmp_path: Path, politeness: PolitenessConfig
) -> Iterator[tuple[Visits, Frontier, CrawlStats, Clock]]:
    """A pipeline and a frontier on one injected clock, with real stores in ``tmp_path``."""
    config = CrawlConfig(seeds=tmp_path / "s", out=tmp_path, politeness=politeness)
    clock, stats = Clock(), CrawlStats()
    frontier = Frontier(
        delay=politeness.delay,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=1.0,
        robots_retries=1,
        stats=stats,
        clock=clock,
    )
    db, cdxj = MetadataDB(tmp_path / "crawl.db"), CdxjWriter(tmp_path / "index.cdxj")
    pipeline = Pipeline(
        config,
        frontier=frontier,
        stats=stats,
        warc=WarcStore(tmp_path),
        cdxj=cdxj,
        db=db,
        clock=clock,
    )
    try:
        yield Visits(config, frontier, pipeline, stats), frontier, stats, clock
    finally:
        cdxj.close()
        db.close()


def admit_with_rules(visits: Visits, frontier: Frontier, url: str) -> None:
    assert visits.admit(url, 0, None)
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    frontier.set_robots(robots.url.removesuffix("/robots.txt"), RobotsRules.allow_all())
    frontier.done(robots, success=True)


def test_a_429_backs_its_host_off_for_retry_after_capped_at_max_backoff(tmp_path: Path) -> None:
    politeness = PolitenessConfig(delay=0.0, max_retries=2, max_backoff=1.2)
    with clocked(tmp_path, politeness) as (visits, frontier, stats, clock):
        url = "http://storm.test/"
        admit_with_rules(visits, frontier, url)
        tries = []
        while (job := frontier.pop_ready()) is not None or frontier.next_wake() is not None:
            if job is None:
                # The host sleeps exactly the capped Retry-After (30 s asked, 1.2 s allowed).
                assert frontier.next_wake() == pytest.approx(1.2)
                wake = clock.now + 1.2
                clock.now = wake - 1e-6
                assert frontier.pop_ready() is None
                clock.now = wake
                continue
            tries.append(job.retries)
            storm = FetchResult(
                url=url,
                status=429,
                response_headers=(("Retry-After", "30"), ("Content-Type", "text/html")),
                content_type="text/html",
            )
            visits.page(job, storm)
        assert tries == [0, 1, 2]  # retried max_retries times, then given up
        assert stats.errors["http_429"] == 3
        assert frontier.exhausted


def test_server_errors_in_a_row_double_the_wait_and_a_success_resets_it(tmp_path: Path) -> None:
    politeness = PolitenessConfig(delay=0.0, max_backoff=3600.0)
    with clocked(tmp_path, politeness) as (visits, frontier, _, clock):
        urls = [f"http://flaky.test/{n}" for n in range(6)]  # one left to wait for
        admit_with_rules(visits, frontier, urls[0])
        for url in urls[1:]:
            assert visits.admit(url, 0, None)
        waits = []
        for status in (500, 500, 500, 200, 500):
            job = frontier.pop_ready()
            assert job is not None and not job.robots
            visits.page(job, FetchResult(url=job.url, status=status, content_type="text/html"))
            wait = frontier.next_wake()
            waits.append(wait)
            clock.now += wait or 0.0
        # 1 s (the floor), doubled per error in a row; no wait after a success, then 1 s again.
        assert waits == [1.0, 2.0, 4.0, None, 1.0]
