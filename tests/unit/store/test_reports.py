"""write_reports: every report agrees with the database and the stats, and replaces atomically."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.errors import StoreError
from gossamer.stats import CrawlStats
from gossamer.store.metadata import MetadataDB
from gossamer.store.reports import ending_line, summary_line, write_reports

from .test_metadata import row

STARTED = 1_700_000_000.0
NOW = STARTED + 7_300.0  # two hours and a bit into the crawl


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    database = MetadataDB(tmp_path / "crawl.db")
    discovered = [f"http://a.test/{i}" for i in range(6)] + ["http://b.test/"]
    database.add_discovered((url, url.split("/")[2], 1, None) for url in discovered)
    database.add_page(row("http://a.test/0", fetched_at=STARTED + 1))
    database.add_page(row("http://a.test/1", status=404, fetched_at=STARTED + 2))
    database.add_page(
        row("http://b.test/", status=0, error="timeout", host="b.test", fetched_at=STARTED + 3)
    )
    yield database
    database.close()


@pytest.fixture
def stats() -> CrawlStats:
    crawl = CrawlStats(started=STARTED, concurrency=16, max_in_flight=5)
    crawl.pages, crawl.requests, crawl.responses = 1, 4, 3
    crawl.bytes, crawl.fetch_time = 3_000_000, 0.75
    crawl.robots_requests = 1
    crawl.statuses.update({200: 2, 404: 1})
    crawl.record_error("timeout", "b.test")
    a_host = crawl.host("a.test")
    a_host.pages, a_host.bytes, a_host.time_spent, a_host.robots_status = 1, 3_000_000, 0.5, "rules"
    crawl.host("c.test").pages = 3
    crawl.hourly.update({0: 1, 2: 5})
    return crawl


def read(directory: Path, name: str) -> str:
    return (directory / "reports" / name).read_text(encoding="utf-8")


def test_crawled_and_uncrawled_lists_agree_with_db(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    crawled = read(tmp_path, "crawled.txt").splitlines()
    assert crawled == [
        "http://a.test/0\t200",
        "http://a.test/1\t404",
        "http://b.test/\terror:timeout",
    ]
    assert [line.split("\t")[0] for line in crawled] == list(db.crawled_urls())
    uncrawled = read(tmp_path, "discovered-not-crawled.txt").splitlines()
    assert uncrawled == list(db.uncrawled_urls()) == [f"http://a.test/{i}" for i in range(2, 6)]


def test_stats_json_is_the_snapshot(tmp_path: Path, stats: CrawlStats, db: MetadataDB) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    assert json.loads(read(tmp_path, "stats.json")) == json.loads(json.dumps(stats.snapshot(NOW)))


def test_stats_text_ends_with_the_summary(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    lines = read(tmp_path, "stats.txt").splitlines()
    assert lines[-1] == (
        "Crawled 1 in 7300.00 seconds (at most 5 simultaneous requests, 16 configured),"
        " 0.25000 s average per page"
    )
    assert "pages: 1" in lines
    assert "bytes: 3000000 (2.9 MiB)" in lines
    assert "errors: 1 (timeout: 1)" in lines
    assert "average time per request: 0.25000 s" in lines
    assert "distinct domains: 2" in lines
    assert "duration: 7300.00 s" in lines


def test_summary_line_without_pages() -> None:
    assert summary_line(0, 1.5, 1, 4, 0.0) == (
        "Crawled 0 in 1.50 seconds (at most 1 simultaneous requests, 4 configured),"
        " 0.00000 s average per page"
    )


def test_summary_line_of_an_engine_that_does_not_count_the_reached_concurrency() -> None:
    # --engine threads leaves max_in_flight at 0: the line says only what was configured.
    assert summary_line(3, 2.0, 0, 16, 0.5) == (
        "Crawled 3 in 2.00 seconds (16 simultaneous requests configured),"
        " 0.50000 s average per page"
    )


def test_every_reason_to_stop_reads_as_words() -> None:
    assert ending_line("exhausted") == "stopped: exhausted (no URL left to fetch)"
    assert ending_line("target") == "stopped: target (the --max-pages target was reached)"
    # A stop asked for by ``gossamer ctl stop`` (or the Crawl page) is no "stopped: stopped".
    assert ending_line("stopped").startswith("stopped: on request (gossamer ctl stop")
    assert ending_line("something new") == "stopped: something new"


def test_hourly_lists_every_hour(tmp_path: Path, stats: CrawlStats, db: MetadataDB) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    assert read(tmp_path, "hourly.tsv") == "hour\tpages\n0\t1\n1\t0\n2\t5\n"


def test_domains_sorted_by_pages(tmp_path: Path, stats: CrawlStats, db: MetadataDB) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    header, *rows = [line.split("\t") for line in read(tmp_path, "domains.tsv").splitlines()]
    assert header == [
        "host",
        "pages",
        "bytes",
        "time_spent",
        "errors",
        "robots_status",
        "seeds",
        "depths",
        "in_visit",
    ]
    assert rows == [
        ["c.test", "3", "0", "0.000", "0", "unknown", "", "", "0"],
        ["a.test", "1", "3000000", "0.500", "0", "rules", "", "1:1", "0"],
        ["b.test", "0", "0", "0.000", "1", "unknown", "", "", "0"],
    ]


def test_domains_list_level_zero_urls_pages_per_depth_and_hosts_in_visit(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    # Two seed forms of a.test at depth 0 (a seed and where it redirected), a sitemap queued
    # at depth 0 that is no seed, and pages at depths 0 and 2 besides the one at depth 1.
    seeds = [("http://a.test/", "a.test", 0, None), ("https://a.test/", "a.test", 0, None)]
    db.add_discovered([*seeds, ("http://a.test/sitemap.xml", "a.test", 0, None)])
    db.add_sitemap("http://a.test/sitemap.xml", "a.test", 0)
    db.add_page(row("https://a.test/", depth=0))
    db.add_page(row("http://a.test/deep", depth=2))
    db.add_page(row("http://a.test/gone", status=404, depth=2))  # not a stored page
    rows = write_reports(tmp_path, stats, db, now=NOW, visiting={"a.test"})
    lines = {
        line.split("\t")[0]: line.split("\t") for line in read(tmp_path, "domains.tsv").splitlines()
    }
    assert lines["a.test"][6:] == ["http://a.test/ https://a.test/", "0:1 1:1 2:1", "1"]
    assert lines["b.test"][8] == "0"
    assert [(r.host, r.in_visit) for r in rows] == [
        ("c.test", False),
        ("a.test", True),
        ("b.test", False),
    ]


def test_domains_table_holds_the_same_figures_as_the_report(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    db.add_discovered([("http://d.test/", "d.test", 0, None)])  # a seed not fetched yet
    stats.host("a.test").time_spent = 0.12345
    db.put_domains(write_reports(tmp_path, stats, db, now=NOW, visiting={"d.test"}))
    db.flush()
    conn = sqlite3.connect(tmp_path / "crawl.db")
    try:
        table = conn.execute(
            "SELECT host, pages, bytes, time_spent, errors, robots_status, seeds, depths,"
            " in_visit FROM domains"
        ).fetchall()
    finally:
        conn.close()
    report = [line.split("\t") for line in read(tmp_path, "domains.tsv").splitlines()[1:]]
    assert sorted(_as_text(values) for values in table) == sorted(report)
    assert ["d.test", "0", "0", "0.000", "0", "unknown", "http://d.test/", "", "1"] in report


def _as_text(values: tuple[object, ...]) -> list[str]:
    host, pages, size, spent, errors, robots, seeds, depths, in_visit = values
    assert isinstance(spent, float)
    return (
        [str(v) for v in (host, pages, size)]
        + [f"{spent:.3f}"]
        + [str(v) for v in (errors, robots, seeds, depths, in_visit)]
    )


def test_reports_get_the_mode_of_the_warc_files_and_the_database(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    # WARC files are opened as any file is: rw-rw-rw- less the umask (mkstemp gives rw-------).
    (tmp_path / "warc").mkdir()
    warc = tmp_path / "warc" / "gossamer-20231114221320-00000.warc.gz"
    warc.open("ab").close()
    write_reports(tmp_path, stats, db, now=NOW)
    write_reports(tmp_path, stats, db, now=NOW)  # a rewrite too
    want = stat.S_IMODE(warc.stat().st_mode)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "reports").iterdir()}
    assert len(modes) == 7
    assert set(modes.values()) == {want}
    umask = os.umask(0)
    os.umask(umask)
    if umask & 0o022 == 0o022:  # then SQLite's rw-r--r-- for a new database is the same
        assert stat.S_IMODE((tmp_path / "crawl.db").stat().st_mode) == want


def test_rewrite_replaces_and_leaves_no_temp_files(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    db.add_page(row("http://a.test/2", fetched_at=STARTED + 4))
    write_reports(tmp_path, stats, db, now=NOW)
    assert "http://a.test/2\t200" in read(tmp_path, "crawled.txt").splitlines()
    assert "http://a.test/2" not in read(tmp_path, "discovered-not-crawled.txt")
    names = sorted(path.name for path in (tmp_path / "reports").iterdir())
    assert names == [
        "crawled.txt",
        "discovered-not-crawled.txt",
        "domains.tsv",
        "hourly.tsv",
        "sitemaps.tsv",
        "stats.json",
        "stats.txt",
    ]


def test_failure_midway_keeps_the_previous_report(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_reports(tmp_path, stats, db, now=NOW)
    before = read(tmp_path, "crawled.txt")

    def broken() -> Iterator[tuple[str, int, str | None]]:
        yield "http://a.test/half-written", 200, None
        raise StoreError("cannot read crawl database: disk I/O error")

    monkeypatch.setattr(db, "page_statuses", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        write_reports(tmp_path, stats, db, now=NOW)
    assert read(tmp_path, "crawled.txt") == before
    assert not [p for p in (tmp_path / "reports").iterdir() if p.name.startswith(".")]


def test_unwritable_reports_folder_raises_store_error(
    tmp_path: Path, stats: CrawlStats, db: MetadataDB
) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "reports").write_text("a file where the folder should be")
    with pytest.raises(StoreError, match="cannot create reports folder"):
        write_reports(tmp_path / "out", stats, db, now=NOW)


def test_sitemaps_from_robots_are_listed(tmp_path: Path, stats: CrawlStats, db: MetadataDB) -> None:
    stats.sitemaps["https://a.test"] = ["https://a.test/sitemap.xml", "https://a.test/news.xml"]
    write_reports(tmp_path, stats, db, now=NOW)
    assert read(tmp_path, "sitemaps.tsv") == (
        "host\tsitemap\n"
        "https://a.test\thttps://a.test/sitemap.xml\n"
        "https://a.test\thttps://a.test/news.xml\n"
    )
