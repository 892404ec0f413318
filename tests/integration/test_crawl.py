"""Crawl the local test web and judge it from the server side and from the outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.config import ScopeConfig
from gossamer.testweb import AuditReport, ThreadedTestWeb, WebSpec, build_web

from .conftest import CrawlRun, crawl, query

WARCIO = Path(sys.executable).parent / "warcio"
# A little latency makes overlapping requests to one host visible to the audit.
SPEC = WebSpec(seed=3, hosts=24, pages_per_host=25, latency=0.003)


@dataclass(frozen=True, slots=True)
class AuditedCrawl(CrawlRun):
    report: AuditReport  # the server's verdict, taken when the crawl ended


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    """A fresh server per test: its audit sees only that test's crawl."""
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


@pytest.fixture(scope="module")
def full_crawl(tmp_path_factory: pytest.TempPathFactory) -> AuditedCrawl:
    """One complete crawl, read by several tests; its server lives and dies with it."""
    with ThreadedTestWeb(build_web(SPEC)) as site:
        run = crawl(site, tmp_path_factory.mktemp("full"))
        return AuditedCrawl(run.outcome, run.out, site.report())


def test_crawl_is_polite_and_complete(full_crawl: AuditedCrawl) -> None:
    report = full_crawl.report
    assert full_crawl.outcome.reason == "exhausted"
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    assert report.crawl_delay_violations == 0
    assert report.repeated_fetches == 0
    assert report.missing == ()
    assert report.ok()


def test_every_response_is_archived_and_indexed(full_crawl: CrawlRun) -> None:
    warcs = sorted((full_crawl.out / "warc").glob("*.warc.gz"))
    assert warcs
    responses: list[str] = []
    revisits: list[str] = []
    for path in warcs:
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0
        with path.open("rb") as stream:
            for r in ArchiveIterator(stream):
                if r.rec_type in ("response", "revisit"):
                    responses.append(r.rec_headers.get_header("WARC-Target-URI"))
                if r.rec_type == "revisit":
                    revisits.append(r.rec_headers.get_header("WARC-Target-URI"))
    # The test web's /copy/ pages share one body: all but the first are revisit records.
    assert any("/copy" in url for url in revisits)
    archived = query(
        full_crawl.out / "crawl.db", "SELECT url FROM pages WHERE warc_file IS NOT NULL"
    )
    assert {u for (u,) in archived} == set(responses)
    cdxj = (full_crawl.out / "index.cdxj").read_text().splitlines()
    assert len(cdxj) == len(responses)
    assert cdxj == sorted(cdxj)


def test_database_rows_point_at_their_warc_records(full_crawl: CrawlRun) -> None:
    rows = query(
        full_crawl.out / "crawl.db",
        "SELECT url, warc_file, warc_offset FROM pages WHERE warc_file IS NOT NULL LIMIT 50",
    )
    for url, name, offset in rows:
        with (full_crawl.out / "warc" / str(name)).open("rb") as stream:
            stream.seek(int(str(offset)))
            record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type in ("response", "revisit")
            assert record.rec_headers.get_header("WARC-Target-URI") == url


def test_cdxj_indexer_rebuilds_the_same_index_with_revisits(full_crawl: CrawlRun) -> None:
    warcs = sorted((full_crawl.out / "warc").glob("*.warc.gz"))
    rebuilt = full_crawl.out.parent / f"{full_crawl.out.name}-rebuilt.cdxj"
    indexer = Path(sys.executable).parent / "cdxj-indexer"
    with rebuilt.open("w") as out:
        command = [str(indexer), "--sort", "--dir-root", str(warcs[0].parent), *map(str, warcs)]
        assert subprocess.run(command, stdout=out, check=False).returncode == 0
    theirs = rebuilt.read_text().splitlines()
    ours = (full_crawl.out / "index.cdxj").read_text().splitlines()
    assert '"mime": "warc/revisit"' in "\n".join(ours)
    assert ours == theirs


def test_reports_agree_with_the_database(full_crawl: CrawlRun) -> None:
    reports = full_crawl.out / "reports"
    stats = json.loads((reports / "stats.json").read_text())
    db = full_crawl.out / "crawl.db"
    crawled = (reports / "crawled.txt").read_text().splitlines()
    assert len(crawled) == query(db, "SELECT count(*) FROM pages")[0][0]
    pages = query(
        db,
        "SELECT count(*) FROM pages WHERE status BETWEEN 200 AND 299 AND error IS NULL"
        " AND (content_type LIKE 'text/html%' OR content_type LIKE 'application/pdf%')",
    )[0][0]
    assert stats["pages"] == pages == full_crawl.outcome.stats.pages
    uncrawled = (reports / "discovered-not-crawled.txt").read_text().splitlines()
    fetched = {u for (u,) in query(db, "SELECT url FROM pages")}
    assert not set(uncrawled) & fetched
    summary = (reports / "stats.txt").read_text().splitlines()[-1]
    assert summary.startswith(f"Crawled {stats['pages']} in ")
    assert "simultaneous requests" in summary
    domains = (reports / "domains.tsv").read_text().splitlines()
    assert len(domains) - 1 == len(full_crawl.outcome.stats.hosts)
    links = query(db, "SELECT count(*) FROM links")[0][0]
    assert links > stats["pages"]


def test_robots_outcomes_follow_rfc_9309(full_crawl: CrawlRun) -> None:
    domains = (full_crawl.out / "reports" / "domains.tsv").read_text()
    assert "allow-all (404)" in domains
    assert "given up (500)" in domains or "disallow-all (500)" in domains
    assert "crawl-delay" in domains


def test_page_target_is_exact(site: ThreadedTestWeb, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, max_pages=37)
    assert run.outcome.reason == "target"
    assert run.outcome.stats.pages == 37
    stats = json.loads((run.out / "reports" / "stats.json").read_text())
    assert stats["pages"] == 37


def test_depth_limit_is_respected(site: ThreadedTestWeb, tmp_path: Path) -> None:
    run = crawl(site, tmp_path, scope=ScopeConfig(max_depth=0))
    depths = query(run.out / "crawl.db", "SELECT max(depth) FROM pages")
    assert depths[0][0] == 0
    assert run.outcome.stats.skipped_other > 0
