"""The crawl loop's robots.txt and fault handling in one process (issues 9 and 10): robots
answers per origin, kept in crawl.db, reused across redirects; faults of this machine are not
the host's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.engine.backlog import build_frontier
from gossamer.engine.pipeline import Pipeline
from gossamer.fetch import FetchResult
from gossamer.frontier import Frontier, Job, RobotsState
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from tests.unit.engine.visits import Visits


class Rig:
    def __init__(self, tmp: Path) -> None:
        # Sitemaps off: these tests count the jobs robots.txt answers leave queued.
        self.config = CrawlConfig(
            seeds=tmp / "s",
            out=tmp,
            politeness=PolitenessConfig(delay=0.0, max_retries=2),
            scope=ScopeConfig(sitemaps=False),
        )
        self.stats = CrawlStats()
        self.db = MetadataDB(tmp / "crawl.db")
        self.cdxj = CdxjWriter(tmp / "index.cdxj")
        self.warc = WarcStore(tmp / "warc")
        self.frontier: Frontier = build_frontier(self.config.politeness, self.stats)
        self.pipeline = Pipeline(
            self.config,
            frontier=self.frontier,
            stats=self.stats,
            warc=self.warc,
            cdxj=self.cdxj,
            db=self.db,
        )
        self.visits = Visits(self.config, self.frontier, self.pipeline, self.stats)

    def close(self) -> None:
        self.warc.close()
        self.cdxj.close()
        self.db.close()

    def robots_job(self, url: str) -> Job:
        """Queue ``url`` and return the robots.txt job it leads to (pages before it done)."""
        self.pipeline.admit(url, 0, None)
        while (job := self.frontier.pop_ready()) is not None and not job.robots:
            self.frontier.done(job, success=True)
        assert job is not None
        return job


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    made = Rig(tmp_path)
    yield made
    made.close()


def answer(url: str, status: int, body: bytes = b"", **headers: str) -> FetchResult:
    return FetchResult(
        url=url,
        status=status,
        response_headers=tuple(headers.items()),
        body=body,
        content=body,
        content_type="text/plain",
        started_at=time.time(),
    )


def test_robots_answers_are_kept_per_origin(rig: Rig) -> None:
    job = rig.robots_job("https://a.test/page")
    rig.visits.robots(job, [answer("https://a.test/robots.txt", 200, b"User-agent: *\n")])
    job = rig.robots_job("http://a.test:8080/page")
    rig.visits.robots(job, [answer("http://a.test:8080/robots.txt", 404)])
    kept = {origin: (status, body) for origin, status, body, _ in rig.db.robots_answers()}
    assert kept == {
        "https://a.test": (200, b"User-agent: *\n"),
        "http://a.test:8080": (404, b""),
    }


def test_an_unavailable_answer_is_not_kept(rig: Rig) -> None:
    job = rig.robots_job("http://a.test/page")
    rig.visits.robots(job, [answer("http://a.test/robots.txt", 503)])
    assert list(rig.db.robots_answers()) == []
    assert rig.stats.hosts["a.test"].robots_status == "deferred (robots.txt 503)"


def test_a_redirect_to_a_known_robots_txt_reuses_its_answer(rig: Rig) -> None:
    job = rig.robots_job("https://a.test/page")
    rig.visits.robots(job, [answer("https://a.test/robots.txt", 200, b"User-agent: *\n")])
    assert rig.visits.seam.knows_robots("https://a.test/robots.txt")
    assert not rig.visits.seam.knows_robots("http://a.test/robots.txt")
    # http://a.test/robots.txt redirects to the https one, which the fetcher did not follow.
    job = rig.robots_job("http://a.test/other")
    moved = answer("http://a.test/robots.txt", 301, Location="https://a.test/robots.txt")
    rig.visits.robots(job, [moved])
    assert rig.frontier.robots_rules("http://a.test") is rig.frontier.robots_rules("https://a.test")


def test_a_redirect_ending_on_another_origins_robots_txt_answers_for_both(rig: Rig) -> None:
    job = rig.robots_job("http://a.test/page")
    hops = [
        answer("http://a.test/robots.txt", 301, Location="https://a.test/robots.txt"),
        answer("https://a.test/robots.txt", 200, b"User-agent: *\nDisallow: /x\n"),
    ]
    rig.visits.robots(job, hops)
    rules = rig.frontier.robots_rules("https://a.test")
    assert rules is not None and not rules.is_allowed("/x")
    assert rig.frontier.robots_rules("http://a.test") is rules


def test_a_local_fault_on_robots_txt_never_gives_the_origin_up(rig: Rig) -> None:
    job = rig.robots_job("http://a.test/page")
    fault = FetchResult(url=job.url, status=0, error="local_fault")
    for _ in range(rig.config.politeness.robots_retries + 3):
        rig.visits.robots(job, [fault])
        robots = rig.frontier.host("a.test").origins["http://a.test"]
        assert robots.state is RobotsState.UNKNOWN  # retried later, never GIVEN_UP
        robots.state = RobotsState.FETCHING  # as if handed out again
        rig.frontier.host("a.test").robots_fetching += 1
        rig.frontier.host("a.test").in_flight += 1
    assert rig.stats.errors["local_fault"] == rig.config.politeness.robots_retries + 3
    assert rig.db.page_count() == 0  # nothing about the host was recorded


def test_a_local_fault_on_a_page_leaves_it_unfetched_and_queued_again(rig: Rig) -> None:
    job = rig.robots_job("http://a.test/page")
    rig.visits.robots(job, [answer("http://a.test/robots.txt", 404)])
    page = rig.frontier.pop_ready()
    assert page is not None and page.url == "http://a.test/page"
    errors_before = rig.stats.hosts["a.test"].errors  # the 404 of robots.txt
    rig.visits.page(page, FetchResult(url=page.url, status=0, error="local_fault"))
    assert rig.frontier.pending == 1  # back in the queue
    assert rig.frontier.host("a.test").errors_in_row == 0  # not held against the host
    assert list(rig.db.uncrawled_urls()) == ["http://a.test/page"]
    assert rig.stats.hosts["a.test"].errors == errors_before
