"""MetadataDB: round trips, batching, the crawl frontier's leftovers, the link graph, faults."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.metadata import MetadataDB
from gossamer.store.rows import PageRow, page_row
from gossamer.store.schema import SCHEMA_VERSION
from gossamer.store.warc import WarcLocation


def row(url: str, status: int = 200, **changes: object) -> PageRow:
    values: dict[str, object] = {
        "url": url,
        "url_id": hashlib.sha1(url.encode()).hexdigest(),
        "doc_id": hashlib.sha1(url.encode() + b"!").hexdigest(),
        "status": status,
        "content_type": "text/html",
        "length": 1234,
        "fetched_at": 1_700_000_000.5,
        "elapsed": 0.25,
        "depth": 1,
        "referrer": "http://a.test/",
        "warc_file": "gossamer-20231114221320-00000.warc.gz",
        "warc_offset": 339,
        "warc_length": 812,
        "error": None,
        "host": "a.test",
    }
    values.update(changes)
    return PageRow(**values)  # type: ignore[arg-type]


def committed(path: Path, sql: str) -> list[tuple[object, ...]]:
    """What another reader of the file sees: only committed rows."""
    with sqlite3.connect(path) as other:
        return other.execute(sql).fetchall()


def test_page_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    failed = row("http://a.test/down", status=0, doc_id=None, length=None, error="timeout")
    with MetadataDB(path) as db:
        db.add_page(row("http://a.test/"))
        db.add_page(failed)
    with MetadataDB(path) as db:  # reopening is how a crawl resumes
        assert db.page("http://a.test/") == row("http://a.test/")
        assert db.page("http://a.test/down") == failed
        assert db.page("http://a.test/none") is None
        assert db.page_count() == 2


def test_schema_settings_and_meta(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path, clock=lambda: 42.0).close()
    assert committed(path, "PRAGMA journal_mode") == [("wal",)]
    meta = {key: value for key, value in committed(path, "SELECT key, value FROM meta")}
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["created_at"] == "42.0"
    assert meta["gossamer_version"]


def test_rows_are_written_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    db = MetadataDB(path, batch_size=3)
    for i in (1, 2):
        db.add_page(row(f"http://a.test/{i}"))
        db.end_exchange()
    assert committed(path, "SELECT count(*) FROM pages") == [(0,)]
    db.add_page(row("http://a.test/3"))
    assert committed(path, "SELECT count(*) FROM pages") == [(0,)]  # mid-exchange: no cut
    db.end_exchange()
    assert committed(path, "SELECT count(*) FROM pages") == [(3,)]
    db.add_page(row("http://a.test/4"))
    db.flush()
    assert committed(path, "SELECT count(*) FROM pages") == [(4,)]
    db.close()


def test_a_url_answered_only_429_or_503_is_still_to_fetch(tmp_path: Path) -> None:
    # The crawl fetches such a URL again after Retry-After; killed before that, a resume
    # must queue it again, not take it for done.
    urls = [f"http://a.test/{name}" for name in ("busy", "unavailable", "gone", "ok")]
    with MetadataDB(tmp_path / "crawl.db") as db:
        db.add_discovered((url, "a.test", 1, "http://a.test/") for url in urls)
        db.add_page(row(urls[0], status=429))
        db.add_page(row(urls[1], status=503))
        db.add_page(row(urls[2], status=404))
        db.add_page(row(urls[3], status=429))
        db.add_page(row(urls[3], status=200))  # the retry answered
        db.flush()
        assert list(db.uncrawled_urls()) == urls[:2]
        assert db.prepare_resume() == {"a.test": 2}


def test_uncrawled_is_discovered_minus_crawled(tmp_path: Path) -> None:
    discovered = [f"http://a.test/{i}" for i in range(10)]
    with MetadataDB(tmp_path / "crawl.db", batch_size=4) as db:
        db.add_discovered((url, "a.test", 1, "http://a.test/") for url in discovered)
        db.add_discovered([(discovered[0], "a.test", 5, "http://elsewhere.test/")])  # repeat
        for url in discovered[::3]:
            db.add_page(row(url))
        assert list(db.crawled_urls()) == discovered[::3]
        assert list(db.uncrawled_urls()) == [u for u in discovered if u not in discovered[::3]]
        assert db.discovered_count() == 10
    # The first discovery wins.
    assert committed(
        tmp_path / "crawl.db", f"SELECT depth, referrer FROM urls WHERE url = '{discovered[0]}'"
    ) == [(1, "http://a.test/")]


def test_link_graph_round_trip(tmp_path: Path) -> None:
    graph = {
        f"http://a.test/{i}": [f"http://{host}.test/{j}" for j in range(5) for host in "ab"]
        for i in range(20)
    }
    with MetadataDB(tmp_path / "crawl.db", batch_size=7) as db:
        for source, targets in graph.items():
            db.add_links(source, targets + targets[:3])  # repeats within a page collapse
        expected = {(s, t) for s, targets in graph.items() for t in targets}
        assert set(db.links()) == expected
        assert db.link_count() == len(expected)
        # Link targets get ids, but were never queued, so they are not "discovered".
        assert db.discovered_count() == 0
        assert list(db.uncrawled_urls()) == []


def test_link_target_later_discovered_takes_its_details(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db") as db:
        db.add_links("http://a.test/", ["http://a.test/x"])
        db.flush()
        db.add_discovered([("http://a.test/x", "a.test", 2, "http://a.test/")])
        assert list(db.uncrawled_urls()) == ["http://a.test/x"]
    assert committed(tmp_path / "crawl.db", "SELECT host, depth FROM urls WHERE depth = 2") == [
        ("a.test", 2)
    ]


def test_links_are_stored_as_integer_ids(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    with MetadataDB(path) as db:
        db.add_links("http://a.test/", ["http://a.test/x", "http://a.test/y"])
    assert committed(path, "SELECT typeof(src), typeof(dst) FROM links") == [
        ("integer", "integer"),
        ("integer", "integer"),
    ]


def test_page_row_from_fetch_result() -> None:
    result = FetchResult(
        url="http://a.test/",
        status=200,
        body=b"gzipped",
        content=b"<html></html>",
        content_type="text/html",
        started_at=10.0,
        elapsed=0.5,
    )
    built = page_row(result, WarcLocation("w.warc.gz", 5, 6), depth=0, referrer=None, host="a.test")
    assert built.url_id == hashlib.sha1(b"http://a.test/").hexdigest()
    assert built.doc_id == hashlib.sha1(b"<html></html>").hexdigest()
    assert (built.length, built.warc_file, built.warc_offset, built.warc_length) == (
        7,
        "w.warc.gz",
        5,
        6,
    )
    failed = page_row(
        FetchResult(url="http://a.test/", status=0, error="dns"),
        None,
        depth=0,
        referrer=None,
        host="a.test",
    )
    assert (failed.doc_id, failed.warc_file, failed.error) == (None, None, "dns")


def test_corrupt_file_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    path.write_bytes(b"this is not a database at all, just garbage " * 100)
    with pytest.raises(StoreError, match="corrupt or is not a SQLite database"):
        MetadataDB(path)


def test_foreign_database_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE customers (name TEXT)")
    with pytest.raises(StoreError, match="not a Gossamer crawl database"):
        MetadataDB(path)


def test_other_schema_version_raises_store_error(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path).close()
    with sqlite3.connect(path) as other:
        other.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="schema version 99"):
        MetadataDB(path)


def test_uncreatable_file_raises_store_error(tmp_path: Path) -> None:
    (tmp_path / "crawl.db").mkdir()  # a folder where the file should be
    with pytest.raises(StoreError, match="cannot open crawl database"):
        MetadataDB(tmp_path / "crawl.db")


def test_full_disk_raises_store_error_and_keeps_rows(tmp_path: Path) -> None:
    db = MetadataDB(tmp_path / "crawl.db", batch_size=10_000)
    # Cap the file at its current size: SQLite then reports SQLITE_FULL, as on a full disk.
    pages = db._conn.execute("PRAGMA page_count").fetchone()[0]  # test hook: private handle
    db._conn.execute(f"PRAGMA max_page_count = {pages}")
    for i in range(200):
        db.add_page(row(f"http://a.test/{i}"))
    with pytest.raises(StoreError, match="the disk is full"):
        db.flush()
    db._conn.execute("PRAGMA max_page_count = 1000000")
    db.flush()  # the rows were kept, so space freed later lets the batch through
    assert db.page_count() == 200
    db.close()
