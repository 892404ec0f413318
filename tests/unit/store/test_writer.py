"""Write-behind: batches commit on the writer thread, in order, whole; reads wait for them."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from gossamer.errors import StoreError
from gossamer.store import writer as writer_module
from gossamer.store.metadata import MetadataDB
from gossamer.store.writes import Batch, UrlIds

from .test_metadata import row


def committed(path: Path, sql: str) -> list[tuple[object, ...]]:
    """What another reader of the file sees; closed at once, so it holds no snapshot."""
    with closing(sqlite3.connect(path)) as other:
        return other.execute(sql).fetchall()


class Gate:
    """Holds every commit of the writer thread until it is opened."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.open = threading.Event()
        self.commits = 0
        real = writer_module.commit

        def held(conn: sqlite3.Connection, batch: Batch, ids: UrlIds | None = None) -> None:
            assert threading.current_thread().name == "gossamer-db-writer"
            self.open.wait()
            real(conn, batch, ids)
            self.commits += 1

        monkeypatch.setattr(writer_module, "commit", held)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Gate:
    return Gate(monkeypatch)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    opened = MetadataDB(tmp_path / "crawl.db", batch_size=2)
    opened.start_writer()
    yield opened
    opened.close()


def writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gossamer-db-writer"]


def test_a_full_batch_is_committed_behind_the_caller(db: MetadataDB, gate: Gate) -> None:
    for i in range(2):
        db.add_page(row(f"http://a.test/{i}"))
        db.end_exchange()  # returns at once: the writer is held
    assert committed(db.path, "SELECT count(*) FROM pages") == [(0,)]
    gate.open.set()
    db.flush()
    assert committed(db.path, "SELECT count(*) FROM pages") == [(2,)]
    assert gate.commits == 1


def test_a_batch_is_cut_only_at_the_end_of_an_exchange(db: MetadataDB, gate: Gate) -> None:
    gate.open.set()
    handed_over = db._writer.latest if db._writer else -1  # test hook: private handle
    db.add_page(row("http://a.test/"))
    db.add_discovered([(f"http://a.test/{i}", "a.test", 1, "http://a.test/") for i in range(5)])
    db.add_links("http://a.test/", [f"http://a.test/{i}" for i in range(5)])
    assert handed_over == 0 and db._writer and db._writer.latest == 0  # over size, mid-exchange
    db.end_exchange()
    assert db._writer.latest == 1
    db.flush()
    assert committed(db.path, "SELECT count(*) FROM pages") == [(1,)]
    assert committed(db.path, "SELECT count(*) FROM links") == [(5,)]


def test_the_backlog_waits_for_the_rows_it_was_counted_from(db: MetadataDB, gate: Gate) -> None:
    spilled = [(f"http://a.test/{i}", "a.test", 1, None) for i in range(5)]
    db.add_discovered(spilled, spilled=True)
    db.add_page(row("http://b.test/"))
    db.end_exchange()  # handed to the held writer
    db.add_discovered([("http://a.test/late", "a.test", 1, None)], spilled=True)  # still buffered
    assert committed(db.path, "SELECT count(*) FROM urls") == [(0,)]
    threading.Thread(target=gate.open.set).start()
    loaded = db.backlog("a.test", 0, 100)
    assert [row[1] for row in loaded] == [url for url, *_ in spilled] + ["http://a.test/late"]
    assert db.backlog("b.test", 0, 100) == []  # a host that never spilled waits for nothing


def test_every_read_sees_every_row_added_before_it(db: MetadataDB, gate: Gate) -> None:
    db.add_discovered([(f"http://a.test/{i}", "a.test", 1, None) for i in range(3)])
    db.add_page(row("http://a.test/0"))
    db.end_exchange()
    db.set_meta("note", "queued behind the batch")
    threading.Thread(target=gate.open.set).start()
    assert list(db.uncrawled_urls()) == ["http://a.test/1", "http://a.test/2"]
    assert list(db.queued_urls()) == [f"http://a.test/{i}" for i in range(3)]
    assert db.get_meta("note") == "queued behind the batch"


def test_close_commits_what_was_handed_over_and_joins_the_thread(tmp_path: Path) -> None:
    db = MetadataDB(tmp_path / "crawl.db", batch_size=1)
    db.start_writer()
    assert len(writer_threads()) == 1
    for i in range(20):
        db.add_page(row(f"http://a.test/{i}"))
        db.end_exchange()
    db.close()
    assert writer_threads() == []
    assert committed(tmp_path / "crawl.db", "SELECT count(*) FROM pages") == [(20,)]


def test_a_fault_reaches_the_owner_and_the_rows_are_kept_for_a_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = writer_module.commit
    failures = iter([True])

    def full_once(conn: sqlite3.Connection, batch: Batch, ids: UrlIds | None = None) -> None:
        if next(failures, False):
            raise sqlite3.OperationalError("database or disk is full")
        real(conn, batch, ids)

    monkeypatch.setattr(writer_module, "commit", full_once)
    heard: list[StoreError] = []
    db = MetadataDB(tmp_path / "crawl.db", batch_size=1)
    db.start_writer(on_fault=heard.append)
    db.add_page(row("http://a.test/1"))
    db.end_exchange()
    with pytest.raises(StoreError, match="the disk is full"):
        db.flush()
    assert [str(exc) for exc in heard] == [
        f"cannot write crawl database {db.path}: the disk is full"
    ]
    db.add_page(row("http://a.test/2"))
    with pytest.raises(StoreError, match="the disk is full"):
        db.end_exchange()  # every later hand-over says so too
    db.stop_writer()  # the failed batch comes back to the buffer, before the newer rows
    assert writer_threads() == []
    db.flush()  # inline now, and the space is back
    assert list(db.crawled_urls()) == ["http://a.test/1", "http://a.test/2"]
    db.close()


def test_rows_spilled_before_the_writer_started_are_waited_for(tmp_path: Path, gate: Gate) -> None:
    db = MetadataDB(tmp_path / "crawl.db")
    spilled = [(f"http://a.test/{i}", "a.test", 0, None) for i in range(3)]
    db.add_discovered(spilled, spilled=True)  # seeds beyond the memory window, say
    db.start_writer()
    threading.Thread(target=gate.open.set).start()
    assert [row[1] for row in db.backlog("a.test", 0, 10)] == [url for url, *_ in spilled]
    db.close()
