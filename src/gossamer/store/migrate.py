"""Upgrades of ``crawl.db`` written by earlier versions of Gossamer, run when it is opened.

Role in the data flow: :class:`gossamer.store.MetadataDB` calls :func:`upgrade` before it
reads or writes anything else, so every other module sees the current schema only. Each step
runs in one transaction: a crash half-way leaves the old version, and the next open tries
again.

* 1 -> 2: the ``host`` columns held the origin (``scheme://host:port``); they now hold the
  host name, the politeness key (see :mod:`gossamer.urls.parts`). robots.txt answers are kept
  in a ``robots`` table, so a resumed crawl does not fetch rules that are still valid.
* 2 -> 3: sitemaps (``sitemaps``: each one found, where from, what it gave) and the
  ``<lastmod>`` of the URLs they list (``sitemap_entries``); seed 001's domain registry
  (``domains``: one row per host, rewritten with the reports).
* 3 -> 4: trap families (``trap_families``).
* 4 -> 5: the recrawl schedule (``schedule``: per fetched page, its validators, when it was
  last asked and what it answered, its revisit interval and when a recrawl still wants it),
  started from the pages already fetched, so an older crawl can be recrawled too.
* 5 -> 6: ``pages.render``: how a page was rendered in a browser, or that it looked
  script-built and was not (``gossamer.render``); NULL for every page before.
"""

from __future__ import annotations

import sqlite3

from gossamer.store.connect import transaction
from gossamer.store.families import FAMILIES_TABLE
from gossamer.urls import host_of

__all__ = ["DOMAINS_TABLE", "ROBOTS_TABLE", "SCHEDULE_TABLE", "SITEMAP_TABLES", "upgrade"]

ROBOTS_TABLE = """
CREATE TABLE robots (
    origin TEXT PRIMARY KEY,
    status INTEGER NOT NULL,  -- the final HTTP status of the robots.txt fetch
    body BLOB NOT NULL,       -- the decoded robots.txt (empty unless 2xx)
    fetched_at REAL NOT NULL  -- wall-clock seconds; the rules expire robots_ttl later
);
"""

SITEMAP_TABLES = """
CREATE TABLE sitemaps (
    url TEXT PRIMARY KEY,
    owner TEXT NOT NULL,      -- the host whose URLs it may list (of the robots.txt naming it)
    level INTEGER NOT NULL,   -- 0: named by robots.txt or guessed, n: listed by a level n-1 index
    found_at REAL NOT NULL,
    entries INTEGER,          -- URLs or sitemaps it listed, once fetched
    error TEXT                -- the first problem met reading it, once fetched
);
CREATE TABLE sitemap_entries (
    url TEXT PRIMARY KEY,
    sitemap TEXT NOT NULL,    -- the first sitemap that listed it
    lastmod TEXT              -- its <lastmod>, as written there
);
"""

DOMAINS_TABLE = """
CREATE TABLE domains (
    host TEXT PRIMARY KEY,
    seeds TEXT NOT NULL,          -- its level-0 URLs (seed forms), separated by spaces
    pages INTEGER NOT NULL,       -- stored pages (2xx)
    depths TEXT NOT NULL,         -- stored pages per link depth: 'depth:count' by spaces
    in_visit INTEGER NOT NULL,    -- 1 while requests to it are in flight or handed out
    time_spent REAL NOT NULL,     -- seconds of fetch time
    bytes INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    robots_status TEXT NOT NULL,  -- what its robots.txt said, as in reports/domains.tsv
    updated_at REAL NOT NULL      -- wall-clock seconds of the report that wrote the row
);
"""

# One row per page URL fetched (issue 31), written with its ``pages`` row. ``answer`` is what
# the last request said: 'new' (a first fetch), 'not_modified' (304), 'unchanged' (200, same
# content), 'changed', 'gone' (404/410), 'failed' (no usable answer; the old row stays).
SCHEDULE_TABLE = """
CREATE TABLE schedule (
    url TEXT PRIMARY KEY,
    etag TEXT,                -- validators of the content the pages row holds
    last_modified TEXT,
    checked_at REAL NOT NULL, -- wall-clock start of the last request, whatever it answered
    changed_at REAL NOT NULL, -- of the last request that brought new content
    interval REAL NOT NULL,   -- seconds from checked_at to due_at (the adaptive schedule)
    due_at REAL NOT NULL,
    answer TEXT NOT NULL,
    received INTEGER NOT NULL, -- body bytes the last request brought (0 for a 304)
    wanted_at REAL            -- start of the recrawl that still wants it (NULL: none)
);
CREATE INDEX schedule_wanted ON schedule (wanted_at) WHERE wanted_at IS NOT NULL;
"""


def _name(value: str | None) -> str | None:
    return host_of(value) if value and "://" in value else value


def _one_to_two(conn: sqlite3.Connection) -> None:
    conn.create_function("gossamer_host_name", 1, _name, deterministic=True)
    conn.execute(ROBOTS_TABLE)
    for table in ("pages", "urls"):
        conn.execute(f"UPDATE {table} SET host = gossamer_host_name(host) WHERE host LIKE '%://%'")


def _two_to_three(conn: sqlite3.Connection) -> None:
    for statement in (SITEMAP_TABLES + DOMAINS_TABLE).split(";"):  # (no ";" in the comments)
        if statement.strip():
            conn.execute(statement)


def _three_to_four(conn: sqlite3.Connection) -> None:
    # (IF NOT EXISTS: tests make older files by dropping the newer tables of a new one.)
    conn.execute(FAMILIES_TABLE.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))


# The pages a crawl of an earlier version fetched, due a day after their fetch (the default
# first interval) with no validators known: a recrawl asks them unconditionally and tells a
# change by the content's digest.
_SCHEDULE_FROM_PAGES = """
INSERT OR IGNORE INTO schedule
SELECT url, NULL, NULL, fetched_at, fetched_at, 86400.0, fetched_at + 86400.0, 'new',
       coalesce(length, 0), NULL
FROM pages
WHERE purpose = 'page' AND status BETWEEN 200 AND 399 AND fetched_at IS NOT NULL
"""


def _four_to_five(conn: sqlite3.Connection) -> None:
    for statement in SCHEDULE_TABLE.split(";"):
        if statement.strip():
            conn.execute(
                statement.replace(" TABLE ", " TABLE IF NOT EXISTS ", 1).replace(
                    " INDEX ", " INDEX IF NOT EXISTS ", 1
                )
            )
    conn.execute(_SCHEDULE_FROM_PAGES)


def _five_to_six(conn: sqlite3.Connection) -> None:
    columns = {row[1] for row in conn.execute("PRAGMA table_info(pages)")}
    if "render" not in columns:
        conn.execute("ALTER TABLE pages ADD COLUMN render TEXT")


_STEPS = {
    "1": ("2", _one_to_two),
    "2": ("3", _two_to_three),
    "3": ("4", _three_to_four),
    "4": ("5", _four_to_five),
    "5": ("6", _five_to_six),
}


def upgrade(conn: sqlite3.Connection, version: str) -> str:
    """Bring a database at ``version`` to the newest version it can reach; that version."""
    while version in _STEPS:
        target, step = _STEPS[version]
        with transaction(conn):
            step(conn)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (target,))
        version = target
    return version
