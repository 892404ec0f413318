"""Sitemaps as URL sources (issue 15): named by robots.txt or guessed, read when fetched,
their URLs admitted like links, what they listed kept in crawl.db, and resumable."""

from __future__ import annotations

import gzip
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.crawling.sitemaps import MAX_LEVEL
from gossamer.engine.backlog import build_frontier
from gossamer.engine.pipeline import Pipeline
from gossamer.fetch import FetchResult
from gossamer.frontier import Frontier, Job
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from tests.unit.engine.visits import Visits


class Rig:
    def __init__(self, tmp: Path, *, sitemaps: bool = True) -> None:
        self.tmp = tmp
        self.config = CrawlConfig(
            seeds=tmp / "s",
            out=tmp,
            politeness=PolitenessConfig(delay=0.0),
            scope=ScopeConfig(sitemaps=sitemaps, max_depth=1),
        )
        self.stats = CrawlStats()
        self.db = MetadataDB(tmp / "crawl.db")
        self.cdxj = CdxjWriter(tmp / "index.cdxj")
        self.warc = WarcStore(tmp / "warc")
        self.frontier: Frontier = build_frontier(self.config.politeness, self.stats)
        self.pipeline = self._pipeline()

    def _pipeline(self) -> Pipeline:
        pipeline = Pipeline(
            self.config,
            frontier=self.frontier,
            stats=self.stats,
            warc=self.warc,
            cdxj=self.cdxj,
            db=self.db,
        )
        self.visits = Visits(self.config, self.frontier, pipeline, self.stats)
        return pipeline

    def close(self) -> None:
        self.warc.close()
        self.cdxj.close()
        self.db.close()

    def start(self, url: str, robots: bytes | None) -> None:
        """Queue ``url`` and answer its origin's robots.txt (``None``: 404)."""
        self.pipeline.admit(url, 0, None)
        job = self.frontier.pop_ready()
        assert job is not None and job.robots
        status = 404 if robots is None else 200
        self.visits.robots(job, [reply(job.url, status, robots or b"")])

    def queued(self) -> list[str]:
        """Pop every ready job (finishing it without a fetch); their URLs in order."""
        urls = []
        while (job := self.frontier.pop_ready()) is not None:
            urls.append(job.url)
            self.frontier.done(job, success=True)
        return urls

    def fetch(self, url: str, status: int, body: bytes = b"", **headers: str) -> None:
        """Answer the queued job for ``url`` as the server would have."""
        job = self._take(url)
        self.visits.page(job, reply(url, status, body, **headers))

    def _take(self, url: str) -> Job:
        """The job for ``url``; jobs ahead of it go to the back of their host's queue."""
        for _ in range(self.frontier.pending + 1):
            job = self.frontier.pop_ready()
            assert job is not None, f"{url} is not queued"
            if job.url == url:
                return job
            self.frontier.retry(job)
            self.frontier.done(job, success=True)
        raise AssertionError(f"{url} is not queued")

    def rows(self, sql: str) -> list[tuple[object, ...]]:
        self.db.flush()
        conn = sqlite3.connect(self.tmp / "crawl.db")
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()


def reply(url: str, status: int, body: bytes = b"", **headers: str) -> FetchResult:
    return FetchResult(
        url=url,
        status=status,
        response_headers=tuple(headers.items()),
        body=body,
        content=body,
        content_type=headers.get("Content-Type", "application/xml"),
        started_at=time.time(),
    )


def urlset(*locs: str, lastmod: str = "2026-11-01") -> bytes:
    items = "".join(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod></url>" for loc in locs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</urlset>'
    ).encode()


def index(*locs: str) -> bytes:
    items = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return (
        f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>'
    ).encode()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    made = Rig(tmp_path)
    yield made
    made.close()


def test_a_robots_txt_without_sitemap_lines_leads_to_the_conventional_one(rig: Rig) -> None:
    rig.start("http://a.test/", b"User-agent: *\nDisallow: /private\n")
    assert rig.queued() == ["http://a.test/", "http://a.test/sitemap.xml"]


def test_a_missing_robots_txt_also_leads_to_sitemap_xml(rig: Rig) -> None:
    rig.start("http://a.test/", None)
    assert "http://a.test/sitemap.xml" in rig.queued()


def test_sitemap_lines_are_queued_instead_of_the_guess(rig: Rig) -> None:
    robots = b"Sitemap: /maps/one.xml\nSitemap: http://a.test/maps/two.xml.gz\n"
    rig.start("http://a.test/", robots)
    assert rig.queued() == [
        "http://a.test/",
        "http://a.test/maps/one.xml",
        "http://a.test/maps/two.xml.gz",
    ]
    assert sorted(rig.rows("SELECT url, owner, level FROM sitemaps")) == [
        ("http://a.test/maps/one.xml", "a.test", 0),
        ("http://a.test/maps/two.xml.gz", "a.test", 0),
    ]


def test_a_sitemap_on_another_host_is_counted_not_fetched(rig: Rig) -> None:
    rig.start("http://a.test/", b"Sitemap: http://cdn.test/a-map.xml\n")
    assert rig.queued() == ["http://a.test/"]
    assert rig.stats.errors["sitemap_other_host"] == 1


def test_listed_urls_are_admitted_one_hop_deeper_with_their_lastmod(rig: Rig) -> None:
    rig.start("http://a.test/", b"Sitemap: http://a.test/map.xml\n")
    body = urlset("http://a.test/only-here", "http://a.test/", "http://b.test/elsewhere")
    rig.fetch("http://a.test/map.xml", 200, body)
    assert rig.queued() == ["http://a.test/", "http://a.test/only-here"]
    assert rig.stats.pages == 0  # a sitemap is not a page
    assert rig.stats.errors["sitemap_foreign_url"] == 1
    assert rig.rows("SELECT url, depth, referrer FROM urls WHERE url LIKE '%only-here'") == [
        ("http://a.test/only-here", 1, "http://a.test/map.xml")
    ]
    assert sorted(rig.rows("SELECT url, sitemap, lastmod FROM sitemap_entries")) == [
        ("http://a.test/", "http://a.test/map.xml", "2026-11-01"),
        ("http://a.test/only-here", "http://a.test/map.xml", "2026-11-01"),
    ]
    assert rig.db.lastmod("http://a.test/only-here") == "2026-11-01"
    assert rig.rows("SELECT purpose FROM pages WHERE url = 'http://a.test/map.xml'") == [
        ("sitemap",)
    ]
    assert rig.rows("SELECT entries, error FROM sitemaps") == [(3 - 1, None)]


def test_an_index_of_gzipped_sitemaps_reaches_their_urls(rig: Rig) -> None:
    rig.start("http://a.test/", b"Sitemap: http://a.test/index.xml\n")
    rig.fetch("http://a.test/index.xml", 200, index("/part-1.xml.gz", "/part-2.xml.gz"))
    part = gzip.compress(urlset("http://a.test/p1"))
    rig.fetch("http://a.test/part-1.xml.gz", 200, part, **{"Content-Type": "application/gzip"})
    part = gzip.compress(urlset("http://a.test/p2"))
    rig.fetch("http://a.test/part-2.xml.gz", 200, part, **{"Content-Type": "application/gzip"})
    assert rig.queued() == ["http://a.test/", "http://a.test/p1", "http://a.test/p2"]
    assert sorted(rig.rows("SELECT url, level FROM sitemaps")) == [
        ("http://a.test/index.xml", 0),
        ("http://a.test/part-1.xml.gz", 1),
        ("http://a.test/part-2.xml.gz", 1),
    ]


def test_indexes_nest_only_so_deep(rig: Rig) -> None:
    rig.start("http://a.test/", b"Sitemap: http://a.test/i0.xml\n")
    for level in range(MAX_LEVEL):
        rig.fetch(f"http://a.test/i{level}.xml", 200, index(f"/i{level + 1}.xml"))
    rig.fetch(f"http://a.test/i{MAX_LEVEL}.xml", 200, index("/too-deep.xml"))
    assert "http://a.test/too-deep.xml" not in rig.queued()
    assert rig.stats.errors["sitemap_nesting"] == 1


def test_a_missing_guessed_sitemap_is_no_error_but_bad_xml_is(rig: Rig) -> None:
    rig.start("http://a.test/", None)
    before = dict(rig.stats.errors)  # the robots.txt 404
    rig.fetch("http://a.test/sitemap.xml", 404)
    assert rig.stats.errors == before
    rig.start("http://b.test/", None)
    rig.fetch(
        "http://b.test/sitemap.xml",
        200,
        b"<urlset><url><loc>http://b.test/x</loc></url><url><loc>http",
    )
    assert rig.stats.errors["sitemap_bad_xml"] == 1
    assert "http://b.test/x" in rig.queued()  # what came before the break still counts


def test_a_redirected_sitemap_is_read_where_it_lands(rig: Rig) -> None:
    rig.start("http://a.test/", None)
    rig.fetch("http://a.test/sitemap.xml", 301, Location="/maps/main.xml")
    rig.fetch("http://a.test/maps/main.xml", 200, urlset("http://a.test/found"))
    assert "http://a.test/found" in rig.queued()


def test_no_sitemaps_turns_it_all_off(tmp_path: Path) -> None:
    rig = Rig(tmp_path, sitemaps=False)
    try:
        rig.start("http://a.test/", b"Sitemap: http://a.test/map.xml\n")
        assert rig.queued() == ["http://a.test/"]
        assert rig.rows("SELECT count(*) FROM sitemaps") == [(0,)]
    finally:
        rig.close()


def test_which_urls_are_sitemaps_survives_a_restart(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.start("http://a.test/", b"Sitemap: http://a.test/map.xml\n")
    rig.db.flush()
    # A new process: its pipeline learns the sitemaps from crawl.db, not from the job.
    again = Rig.__new__(Rig)
    again.__dict__.update(rig.__dict__)
    again.frontier = build_frontier(rig.config.politeness, rig.stats)
    again.pipeline = again._pipeline()
    again.pipeline.admit("http://a.test/map.xml", 0, None)
    job = again.frontier.pop_ready()  # robots.txt first, on a new frontier
    assert job is not None and job.robots
    again.visits.robots(job, [reply(job.url, 200, b"Sitemap: http://a.test/map.xml\n")])
    again.fetch("http://a.test/map.xml", 200, urlset("http://a.test/listed"))
    assert "http://a.test/listed" in again.queued()
    rig.close()
