"""The ``trap_families`` table of ``crawl.db`` (issue 27): written with the batches, read back
in the order first written, the smaller depth kept, and added to older databases."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gossamer.store.families import MERGE_FAMILIES
from gossamer.store.metadata import MetadataDB
from gossamer.store.schema import SCHEMA_VERSION


def _rows(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT family, host, depth FROM trap_families ORDER BY rowid"
        ).fetchall()
    finally:
        conn.close()


def test_families_round_trip_and_keep_the_smaller_depth(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    with MetadataDB(path) as db:
        db.add_family("a.test/cal/#/#", "a.test", 7)
        db.add_family("b.test/p/#", "b.test", 2)
        db.add_family("a.test/cal/#/#", "a.test", 9)  # deeper: changes nothing
        db.add_family("b.test/p/#", "b.test", 1)  # shallower: kept
        assert list(db.trap_families()) == [
            ("a.test/cal/#/#", "a.test", 7),
            ("b.test/p/#", "b.test", 1),
        ]
    with MetadataDB(path) as db:  # and in the next process
        assert list(db.trap_families()) == [
            ("a.test/cal/#/#", "a.test", 7),
            ("b.test/p/#", "b.test", 1),
        ]


def test_families_go_in_with_the_batch_of_their_exchange(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    with MetadataDB(path, batch_size=2) as db:
        db.add_discovered([("http://a.test/cal/2", "a.test", 2, "http://a.test/cal/1")])
        db.add_family("a.test/cal/#", "a.test", 1)
        db.end_exchange()  # the batch is not full: nothing written yet
        assert _rows(path) == []
        db.add_discovered([("http://a.test/cal/3", "a.test", 3, "http://a.test/cal/2")])
        db.end_exchange()  # full: both exchanges in one transaction
        assert _rows(path) == [("a.test/cal/#", "a.test", 1)]
        db.start_writer()
        db.add_family("c.test/x/#", "c.test", 4)
        db.flush()  # on the writer thread
        assert _rows(path)[-1] == ("c.test/x/#", "c.test", 4)


def test_a_version_three_database_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE trap_families")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    conn.close()
    with MetadataDB(path) as db:
        assert db.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert list(db.trap_families()) == []
        db.add_family("a.test/cal/#", "a.test", 1)
        assert list(db.trap_families()) == [("a.test/cal/#", "a.test", 1)]


def test_merging_keeps_every_family_at_its_smallest_depth(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "one.db") as one:
        one.add_family("a.test/cal/#", "a.test", 5)
        one.add_family("b.test/p/#", "b.test", 3)
    with MetadataDB(tmp_path / "two.db") as two:
        two.add_family("a.test/cal/#", "a.test", 2)
        two.add_family("c.test/q/#", "c.test", 8)
    conn = sqlite3.connect(tmp_path / "one.db")
    try:
        conn.execute("ATTACH DATABASE ? AS src", (str(tmp_path / "two.db"),))
        with conn:
            conn.execute(MERGE_FAMILIES)
        rows = conn.execute("SELECT family, depth FROM trap_families ORDER BY family").fetchall()
    finally:
        conn.close()
    assert rows == [("a.test/cal/#", 2), ("b.test/p/#", 3), ("c.test/q/#", 8)]
