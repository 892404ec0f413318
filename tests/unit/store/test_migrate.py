"""crawl.db written by an earlier Gossamer is upgraded in place when opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gossamer.store.metadata import MetadataDB
from gossamer.store.reads import CrawlRecords
from gossamer.store.schema import SCHEMA_VERSION


def _version_one(path: Path) -> None:
    """A database as schema 1 left it: origins in the host columns, no robots table."""
    MetadataDB(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE robots")
        conn.execute("DROP TABLE sitemaps")
        conn.execute("DROP TABLE sitemap_entries")
        conn.execute("DROP TABLE domains")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        conn.executemany(
            "INSERT INTO urls (url, host, depth, discovered_at, spilled) VALUES (?, ?, 0, 1.0, 1)",
            [
                ("https://a.test:8443/x", "https://a.test:8443"),
                ("http://a.test/y", "http://a.test"),
                ("http://[::1]:8080/z", "http://[::1]:8080"),
            ],
        )
        conn.execute(
            "INSERT INTO pages (url, url_id, status, host) VALUES ('http://a.test/', 'i', 200,"
            " 'http://a.test')"
        )
    conn.close()


def test_schema_one_is_upgraded_to_host_names_and_a_robots_table(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    _version_one(path)
    with MetadataDB(path) as db:
        assert db.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert db.backlog_counts() == {"a.test": 2, "[::1]": 1}
        assert list(db.robots_answers()) == []
        db.add_robots("http://a.test", 200, b"User-agent: *\n", 5.0)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT host FROM pages").fetchall() == [("a.test",)]
        assert conn.execute("SELECT count(*) FROM robots").fetchone() == (1,)
    finally:
        conn.close()


def test_an_upgraded_database_opens_again_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    _version_one(path)
    MetadataDB(path).close()
    with MetadataDB(path) as db:
        assert db.backlog_counts() == {"a.test": 2, "[::1]": 1}


def test_schema_two_gains_the_sitemap_and_domain_tables(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path).close()
    conn = sqlite3.connect(path)
    fresh = _columns(conn, "domains")
    with conn:
        conn.execute("DROP TABLE sitemaps")
        conn.execute("DROP TABLE sitemap_entries")
        conn.execute("DROP TABLE domains")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.close()
    with MetadataDB(path) as db:
        assert db.get_meta("schema_version") == str(SCHEMA_VERSION)
        db.add_sitemap("http://a.test/sitemap.xml", "a.test", 0)
        db.read_sitemap("http://a.test/sitemap.xml", None, [("http://a.test/x", "2026-01-02")])
        db.flush()
        assert list(db.sitemaps()) == [("http://a.test/sitemap.xml", "a.test", 0)]
        assert db.lastmod("http://a.test/x") == "2026-01-02"
    conn = sqlite3.connect(path)
    try:
        # The upgrade makes the same table a new database starts with.
        assert _columns(conn, "domains") == fresh
    finally:
        conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    return conn.execute(f"PRAGMA table_info({table})").fetchall()


def test_schema_five_is_read_as_it_is_and_upgraded_when_opened(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path).close()
    conn = sqlite3.connect(path)
    with conn:
        # the pages table as schema 5 made it: every column but render
        columns = ", ".join(
            row[1] for row in conn.execute("PRAGMA table_info(pages)") if row[1] != "render"
        )
        conn.execute(f"CREATE TABLE old AS SELECT {columns} FROM pages")
        conn.execute("DROP TABLE pages")
        conn.execute("ALTER TABLE old RENAME TO pages")
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
        conn.execute(
            "INSERT INTO pages (url, url_id, status, host) VALUES ('http://a.test/', 'i', 200,"
            " 'a.test')"
        )
    conn.close()
    # read-only (search, serve): nothing is written, the new column reads as none
    with CrawlRecords(path) as records:
        row = records.page("http://a.test/")
        assert row is not None and row.status == 200 and row.render is None
    with MetadataDB(path) as db:  # a crawl's own opening upgrades it
        assert db.get_meta("schema_version") == str(SCHEMA_VERSION) == "6"
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT url, render FROM pages").fetchall() == [
            ("http://a.test/", None)
        ]
    finally:
        conn.close()
