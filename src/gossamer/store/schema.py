"""Store stage, the shape of ``crawl.db``: its tables, its version, and the check on opening.

Data flow: :class:`~gossamer.store.metadata.MetadataDB` calls :func:`prepare_schema` before
anything else touches the file, so a foreign or damaged file is refused before anything (even
the journal mode) is written to it, and an older one is upgraded (``migrate``). Every query on
``crawl.db`` lives in this package: ``writes`` writes, ``reads`` reads.

The link graph stores integer ids, not URL text: ``links(src, dst)`` holds ``urls.id``
values, and the ``link_urls`` view joins them back to ``(from_url, to_url)``. A link target
that was never queued still gets a ``urls`` row, with ``discovered_at`` NULL, so it has an id
without counting as discovered.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from gossamer import __version__
from gossamer.errors import StoreError
from gossamer.store.families import FAMILIES_TABLE
from gossamer.store.migrate import (
    DOMAINS_TABLE,
    ROBOTS_TABLE,
    SCHEDULE_TABLE,
    SITEMAP_TABLES,
    upgrade,
)

__all__ = ["SCHEMA_VERSION", "UNFETCHED", "prepare_schema"]

SCHEMA_VERSION = 6

_SCHEMA = (
    """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    url TEXT PRIMARY KEY,
    url_id TEXT NOT NULL,
    doc_id TEXT,
    status INTEGER NOT NULL,
    content_type TEXT,
    length INTEGER,
    fetched_at REAL,
    elapsed REAL,
    depth INTEGER,
    referrer TEXT,
    warc_file TEXT,
    warc_offset INTEGER,
    warc_length INTEGER,
    error TEXT,
    host TEXT,  -- the host name (politeness key), not the origin
    purpose TEXT NOT NULL DEFAULT 'page',  -- 'page', 'robots', 'sitemap', 'resource'
    render TEXT  -- 'rendered', 'unsettled', 'failed', 'hint' (gossamer.render), or NULL
);
-- An explicit INTEGER PRIMARY KEY keeps ids stable across VACUUM; links depend on them.
CREATE TABLE urls (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    host TEXT,
    depth INTEGER,
    referrer TEXT,
    discovered_at REAL,
    spilled INTEGER NOT NULL DEFAULT 0  -- 1: queued on disk only (beyond the memory window)
);
CREATE INDEX urls_backlog ON urls (host, id) WHERE spilled = 1;
CREATE TABLE links (
    src INTEGER NOT NULL,
    dst INTEGER NOT NULL,
    PRIMARY KEY (src, dst)
) WITHOUT ROWID;
CREATE VIEW link_urls AS
    SELECT s.url AS from_url, d.url AS to_url
    FROM links JOIN urls AS s ON s.id = links.src JOIN urls AS d ON d.id = links.dst;
"""
    + ROBOTS_TABLE
    + SITEMAP_TABLES
    + DOMAINS_TABLE
    + FAMILIES_TABLE
    + SCHEDULE_TABLE
)

# A queued URL with no final answer yet (a condition on ``urls``): no ``pages`` row, or only
# 429 and 503 answers, which the crawl fetches again after the wait they ask for. A crawl
# killed during that wait must not take such a URL for done when it resumes. A page a
# recrawl still wants (``schedule.wanted_at``) is queued again the same way.
UNFETCHED = (
    "discovered_at IS NOT NULL AND (NOT EXISTS (SELECT 1 FROM pages WHERE pages.url = urls.url"
    " AND (pages.status IS NULL OR pages.status NOT IN (429, 503)))"
    " OR EXISTS (SELECT 1 FROM schedule WHERE schedule.url = urls.url"
    " AND schedule.wanted_at IS NOT NULL))"
)


def prepare_schema(conn: sqlite3.Connection, path: Path, created_at: Callable[[], float]) -> None:
    """Create the tables in an empty file, or check (and upgrade) the ones there."""
    tables = {
        name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    if not tables:
        conn.executescript(f"BEGIN;\n{_SCHEMA}\nCOMMIT;")
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [
                ("schema_version", str(SCHEMA_VERSION)),
                ("created_at", repr(created_at())),
                ("gossamer_version", __version__),
            ],
        )
        return
    version = None
    if "meta" in tables:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = row[0] if row else None
    if version is None or not {"pages", "urls", "links"} <= tables:
        raise StoreError(f"{path} is not a Gossamer crawl database")
    version = upgrade(conn, version)
    if version != str(SCHEMA_VERSION):
        raise StoreError(
            f"{path} has schema version {version}; this Gossamer reads version {SCHEMA_VERSION}"
        )
