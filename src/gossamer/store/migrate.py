"""Upgrades of ``crawl.db`` written by earlier versions of Gossamer, run when it is opened.

Role in the data flow: :class:`gossamer.store.MetadataDB` calls :func:`upgrade` before it
reads or writes anything else, so every other module sees the current schema only. Each step
runs in one transaction: a crash half-way leaves the old version, and the next open tries
again.

* 1 -> 2: the ``host`` columns held the origin (``scheme://host:port``); they now hold the
  host name, the politeness key (see :mod:`gossamer.urls.parts`). robots.txt answers are kept
  in a ``robots`` table, so a resumed crawl does not fetch rules that are still valid.
"""

from __future__ import annotations

import sqlite3

from gossamer.store.connect import transaction
from gossamer.urls import host_of

__all__ = ["ROBOTS_TABLE", "upgrade"]

ROBOTS_TABLE = """
CREATE TABLE robots (
    origin TEXT PRIMARY KEY,
    status INTEGER NOT NULL,  -- the final HTTP status of the robots.txt fetch
    body BLOB NOT NULL,       -- the decoded robots.txt (empty unless 2xx)
    fetched_at REAL NOT NULL  -- wall-clock seconds; the rules expire robots_ttl later
);
"""


def _name(value: str | None) -> str | None:
    return host_of(value) if value and "://" in value else value


def _one_to_two(conn: sqlite3.Connection) -> None:
    conn.create_function("gossamer_host_name", 1, _name, deterministic=True)
    conn.execute(ROBOTS_TABLE)
    for table in ("pages", "urls"):
        conn.execute(f"UPDATE {table} SET host = gossamer_host_name(host) WHERE host LIKE '%://%'")


_STEPS = {"1": ("2", _one_to_two)}


def upgrade(conn: sqlite3.Connection, version: str) -> str:
    """Bring a database at ``version`` to the newest version it can reach; that version."""
    while version in _STEPS:
        target, step = _STEPS[version]
        with transaction(conn):
            step(conn)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (target,))
        version = target
    return version
