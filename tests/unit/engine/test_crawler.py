"""The crawl loop: why a crawl stops, the page target, owned tasks and threads, store faults.

Each test crawls a small generated web served on loopback (``ThreadedTestWeb``).
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.crawling import progress as progress_module
from gossamer.engine import Crawler, CrawlOutcome
from gossamer.engine import crawler as crawler_module
from gossamer.engine import reporter as reporter_module
from gossamer.engine.backlog import build_frontier
from gossamer.errors import StoreError
from gossamer.seeds import parse_seeds
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.store import writer as writer_module
from gossamer.store.writes import Batch, UrlIds
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import Role

from ...integration.conftest import local_config, query

LIMIT = 60.0  # seconds any of these crawls may take; a hang fails instead of blocking the run


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    spec = WebSpec(seed=11, hosts=4, pages_per_host=12, seed_hosts=4, special_hosts=False)
    with ThreadedTestWeb(build_web(spec)) as running:
        yield running


def configure(site: ThreadedTestWeb, tmp: Path, seeds: list[str], **changes: object) -> CrawlConfig:
    path = tmp / "seeds.txt"
    path.write_text("".join(f"{url}\n" for url in seeds), encoding="utf-8")
    return local_config(path, tmp / "out", **changes)


def run(config: CrawlConfig) -> CrawlOutcome:
    async def bounded() -> CrawlOutcome:
        crawler = Crawler(config, parse_seeds(config.seeds.read_text(encoding="utf-8")))
        async with asyncio.timeout(LIMIT):
            return await crawler.run()

    return asyncio.run(bounded())


def stored_pages(out: Path) -> int:
    sql = "SELECT count(*) FROM pages WHERE purpose = 'page' AND status BETWEEN 200 AND 299"
    (count,) = query(out / "crawl.db", sql)[0]
    assert isinstance(count, int)
    return count


def own_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("gossamer-")]


def test_an_exhausted_crawl_ends_at_once_however_long_the_report_period(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    # The reporter waits for the end of the crawl, not for its next period.
    config = configure(site, tmp_path, site.seeds(), report_interval=3600.0)
    outcome = run(config)
    assert outcome.reason == "exhausted"
    assert outcome.stats.pages == stored_pages(config.out) > 0
    crawled = (config.out / "reports" / "crawled.txt").read_text().splitlines()
    assert len(crawled) == query(config.out / "crawl.db", "SELECT count(*) FROM pages")[0][0]
    assert own_threads() == []  # the writer and report threads were joined


def test_dispatch_stops_at_the_page_target(site: ThreadedTestWeb, tmp_path: Path) -> None:
    config = configure(site, tmp_path, site.seeds(), max_pages=7)
    outcome = run(config)
    assert outcome.reason == "target"
    # Not one page more: page jobs are dispatched only while pages + in flight < target.
    assert outcome.stats.pages == stored_pages(config.out) == 7


def test_the_time_limit_stops_the_crawl(site: ThreadedTestWeb, tmp_path: Path) -> None:
    config = configure(site, tmp_path, site.seeds(), time_limit=0.0)
    outcome = run(config)
    assert outcome.reason == "time"
    assert outcome.stats.pages < len(site.expected())
    assert (config.out / "reports" / "stats.json").is_file()


def test_an_unavailable_robots_txt_is_left_to_a_resume(tmp_path: Path) -> None:
    spec = WebSpec(seed=5, hosts=6, pages_per_host=8)
    with ThreadedTestWeb(build_web(spec)) as site:
        broken = site.web.hosts_with(Role.ROBOTS_ERROR)[0]
        seeds = [*site.seeds(), site.web.url(broken, "/", site.port)]
        # The RFC's retry is a minute away; the crawl leaves the host after robots_wait.
        politeness = PolitenessConfig(delay=0.0, robots_retry_delay=60.0, robots_wait=0.2)
        config = configure(site, tmp_path, seeds, politeness=politeness)
        outcome = run(config)
    assert outcome.reason == "exhausted" and outcome.stats.pages > 0
    assert outcome.stats.deferred == [f"http://{broken}:{site.port}"]


def test_reports_are_rewritten_on_their_own_thread_during_the_crawl(
    site: ThreadedTestWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = reporter_module.write_reports

    def recorded(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reporter_module, "write_reports", recorded)
    # A delay per host keeps the crawl going for several report periods.
    politeness = PolitenessConfig(delay=0.05, robots_retry_delay=0.2, robots_retries=1)
    config = configure(
        site, tmp_path, site.seeds()[:1], report_interval=0.05, politeness=politeness
    )
    outcome = run(config)
    assert outcome.reason == "exhausted"
    assert len(threads) >= 2  # at least one periodic report, and the final one
    assert all(name.startswith("gossamer-reports") for name in threads)
    saved = query(config.out / "crawl.db", "SELECT value FROM meta WHERE key = 'stats'")
    assert f'"pages": {outcome.stats.pages},' in str(saved[0][0])


def test_a_store_fault_stops_the_crawl_and_is_raised(
    site: ThreadedTestWeb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits = iter(range(1_000_000))
    real = writer_module.commit

    def full_disk_after_two(
        conn: sqlite3.Connection, batch: Batch, ids: UrlIds | None = None
    ) -> None:
        if next(commits) >= 2:
            raise sqlite3.OperationalError("database or disk is full")
        real(conn, batch, ids)

    monkeypatch.setattr(writer_module, "commit", full_disk_after_two)
    # Small batches, so the writer thread commits (and fails) in the middle of the crawl.
    monkeypatch.setattr(crawler_module, "MetadataDB", functools.partial(MetadataDB, batch_size=3))
    config = configure(site, tmp_path, site.seeds())
    with pytest.raises(StoreError, match="the disk is full"):
        run(config)
    assert own_threads() == []
    # The crawl stopped early, and what it wrote is kept: the WARC files lead the database.
    assert stored_pages(config.out) < len(site.expected())
    assert list((config.out / "warc").glob("gossamer-*.warc.gz"))


def test_the_progress_painter_ends_with_the_crawl(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress_module, "REFRESH", 0.001)
    ending = asyncio.Event()
    stats = CrawlStats()
    painter = progress_module.Progress(
        stats, build_frontier(PolitenessConfig(), stats), enabled=True
    )
    paints = 0
    real = painter.line

    def line(now: float | None = None) -> str:
        nonlocal paints
        paints += 1
        if paints == 3:
            ending.set()  # the crawl ends while the painter is between two repaints
        return real(now)

    monkeypatch.setattr(painter, "line", line)

    async def paint() -> None:
        async with asyncio.timeout(LIMIT):
            await painter.run(ending)

    asyncio.run(paint())
    assert paints == 3
    painter.close()
    assert capsys.readouterr().err.count("\r") == 4  # three repaints and the last line
