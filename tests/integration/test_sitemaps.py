"""Sitemaps on the local test web (issue 15): pages that only a gzipped sitemap index
reaches are crawled, politely and once; ``--no-sitemaps`` leaves them alone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import ScopeConfig
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl, query

WARCIO = Path(sys.executable).parent / "warcio"
SPEC = WebSpec(seed=11, hosts=8, pages_per_host=12, sitemap_hosts=2, guessed_sitemap_hosts=1)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def test_pages_only_a_gzipped_sitemap_index_lists_are_crawled(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    orphans = site.orphans()
    assert orphans
    run = crawl(site, tmp_path)
    report = site.report()
    assert run.outcome.reason == "exhausted"
    assert report.missing == ()
    assert report.robots_violations == 0
    assert report.concurrent_violations == 0
    assert report.repeated_fetches == 0
    assert report.ok()
    db = run.out / "crawl.db"
    pages = {url for (url,) in query(db, "SELECT url FROM pages WHERE purpose = 'page'")}
    assert orphans <= pages
    listed = dict(query(db, "SELECT url, lastmod FROM sitemap_entries"))
    assert all(listed[url] for url in orphans)  # each with its <lastmod>
    sitemaps = query(db, "SELECT url, level, entries, error FROM sitemaps WHERE entries > 0")
    assert {level for _, level, _, _ in sitemaps} == {0, 1}  # a robots.txt index, its parts
    assert all(error is None for _, _, _, error in sitemaps)
    for path in sorted((run.out / "warc").glob("*.warc.gz")):
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0


def test_sitemaps_are_not_documents(site: ThreadedTestWeb, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, max_pages=10_000)
    db = run.out / "crawl.db"
    stored = query(
        db, "SELECT count(*) FROM pages WHERE purpose = 'page' AND status = 200 AND error IS NULL"
    )
    assert run.outcome.stats.pages == stored[0][0]
    maps = query(db, "SELECT count(*) FROM pages WHERE purpose = 'sitemap' AND status = 200")
    assert maps[0][0] >= 3 * SPEC.sitemap_hosts  # an index and two parts per host


def test_no_sitemaps_leaves_the_orphans(site: ThreadedTestWeb, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, scope=ScopeConfig(max_depth=25, sitemaps=False))
    db = run.out / "crawl.db"
    fetched = {url for (url,) in query(db, "SELECT url FROM pages")}
    assert not fetched & site.orphans()
    assert not any("sitemap" in url for url in fetched)
    assert site.report().missing == tuple(sorted(site.orphans()))
