"""Store stage, writing ``crawl.db``: a batch of rows and the one transaction that commits it.

Data flow: the pipeline's rows collect in a :class:`Batch` (``MetadataDB``); a batch is
committed by :func:`commit`, inline or on the writer thread (``writer``). Each batch is one
``BEGIN IMMEDIATE`` transaction: worker processes sharing the file queue for the write lock
instead of failing half-way, and a crash leaves every batch either whole or absent.

Rows go in up to ``_CHUNK`` at a time, as one multi-row ``VALUES`` statement, not one
statement per row (``executemany``): SQLite then does the work of a chunk in one call, with
the GIL released throughout, so a writer thread neither hands the GIL back and forth with the
event loop once per row nor pays Python's per-row overhead. Rows of one statement are applied
in order, exactly as the same rows one statement each would be.

Links are stored as pairs of ``urls`` ids. :class:`UrlIds` remembers the id of every URL a
committed batch touched (ids never change once a row exists), so a link between URLs met
before is one row of two integers: no ``urls`` lookup by text, and no ``INSERT OR IGNORE``
of a node that is already there. New URLs are inserted in the same order as before, so they
get the same ids, and the file holds exactly the same rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from itertools import chain

from gossamer.generations import Generations
from gossamer.store.connect import transaction
from gossamer.store.families import PUT_FAMILY
from gossamer.store.schema import UNFETCHED

__all__ = ["Batch", "UrlIds", "commit", "delete_pages", "requeue_unfetched"]

Discovered = tuple[str, str, int, str | None, float, int]  # url, host, depth, ref, time, spilled

_CHUNK = 256  # rows per statement at most (a power of two, see ``_insert``)
_ROWS = "{rows}"  # where a statement template takes its ``(?, ...), (?, ...)`` rows

_INSERT_PAGE = "INSERT OR REPLACE INTO pages VALUES {rows}"
# First discovery wins; a row made earlier only as a link target takes the details.
_INSERT_DISCOVERED = """
INSERT INTO urls (url, host, depth, referrer, discovered_at, spilled) VALUES {rows}
ON CONFLICT (url) DO UPDATE SET
    host = excluded.host, depth = excluded.depth, referrer = excluded.referrer,
    discovered_at = excluded.discovered_at, spilled = excluded.spilled
WHERE urls.discovered_at IS NULL
"""
_INSERT_NODE = "INSERT OR IGNORE INTO urls (url) VALUES {rows}"
_INSERT_LINK_IDS = "INSERT OR IGNORE INTO links (src, dst) VALUES {rows}"
_SELECT_IDS = "SELECT url, id FROM urls WHERE url IN ({marks})"
_INSERT_ROBOTS = "INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?)"
_INSERT_SITEMAP = "INSERT OR IGNORE INTO sitemaps (url, owner, level, found_at) VALUES (?, ?, ?, ?)"
_READ_SITEMAP = "UPDATE sitemaps SET entries = ?, error = ? WHERE url = ?"
_INSERT_ENTRY = "INSERT OR IGNORE INTO sitemap_entries VALUES {rows}"
_PUT_DOMAIN = (
    "INSERT OR REPLACE INTO domains (host, seeds, pages, depths, in_visit, time_spent, bytes,"
    " errors, robots_status, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SET_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
_UNLINK = "DELETE FROM links WHERE src = (SELECT id FROM urls WHERE url = ?)"
_PUT_SCHEDULE = "INSERT OR REPLACE INTO schedule VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
# A recrawl starting at ?1 wants every page asked before it (?2 = 1), or those due by then
# (?2 = 0) and those whose sitemap <lastmod> is later than their last fetch (listed in the
# temporary table ``sitemap_due`` by the caller).
_WANT = """
UPDATE schedule SET wanted_at = ?1
WHERE wanted_at IS NULL AND checked_at < ?1
  AND (?2 OR due_at <= ?1 OR url IN (SELECT url FROM temp.sitemap_due))
"""
_DELETE_PAGE = (
    "DELETE FROM pages WHERE url = ? AND warc_file = ? AND warc_offset = ?"
    " RETURNING url, host, depth, referrer, purpose"
)


@dataclass(slots=True)
class Batch:
    """Rows committed together. Cut only at the end of an exchange, so a page's row and the
    rows of the links and redirect it led to are never in different transactions."""

    pages: list[tuple[object, ...]] = field(default_factory=list)
    discovered: list[Discovered] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    robots: list[tuple[str, int, bytes, float]] = field(default_factory=list)
    meta: list[tuple[str, str]] = field(default_factory=list)
    sitemaps: list[tuple[str, str, int, float]] = field(default_factory=list)  # found
    sitemaps_read: list[tuple[int, str | None, str]] = field(default_factory=list)
    entries: list[tuple[str, str, str | None]] = field(default_factory=list)  # url, map, lastmod
    domains: list[tuple[object, ...]] = field(default_factory=list)  # whole ``domains`` rows
    families: list[tuple[str, str, int]] = field(default_factory=list)  # family, host, depth
    # Pages whose out-links a new version replaces or a gone page drops: deleted before
    # this batch's links are written.
    unlinked: list[str] = field(default_factory=list)
    schedule: list[tuple[object, ...]] = field(default_factory=list)  # whole ``schedule`` rows

    @property
    def size(self) -> int:
        """What the batch size limit is compared with: the longest list of rows."""
        return max(len(self.pages), len(self.discovered), len(self.links), len(self.entries))

    def empty(self) -> bool:
        return not (
            self.pages
            or self.discovered
            or self.links
            or self.robots
            or self.meta
            or self.sitemaps
            or self.sitemaps_read
            or self.entries
            or self.domains
            or self.families
            or self.unlinked
            or self.schedule
        )

    def extend(self, later: Batch) -> None:
        """Append the rows of a batch that was cut after this one (a retry after a fault)."""
        self.pages.extend(later.pages)
        self.discovered.extend(later.discovered)
        self.links.extend(later.links)
        self.robots.extend(later.robots)
        self.meta.extend(later.meta)
        self.sitemaps.extend(later.sitemaps)
        self.sitemaps_read.extend(later.sitemaps_read)
        self.entries.extend(later.entries)
        self.domains.extend(later.domains)
        self.families.extend(later.families)
        self.unlinked.extend(later.unlinked)
        self.schedule.extend(later.schedule)


KNOWN_IDS = 1 << 16  # URL ids UrlIds keeps per generation (about 10 MB for two)


class UrlIds:
    """The ``urls`` id of URLs that committed batches touched, in two generations of up to
    ``capacity`` each (``generations.Generations``).

    Only ids of committed rows are kept: ``commit`` hands them over after its COMMIT, so a
    batch rolled back leaves nothing behind. Any id kept stays true, since rows of ``urls``
    are never deleted and their ids never change (``INTEGER PRIMARY KEY``).
    """

    def __init__(self, capacity: int = KNOWN_IDS) -> None:
        self._ids: Generations[str, int] = Generations(capacity)

    def get(self, url: str) -> int | None:
        return self._ids.get(url)

    def learn(self, ids: dict[str, int]) -> None:
        for url, found in ids.items():
            self._ids.put(url, found)


def commit(conn: sqlite3.Connection, batch: Batch, ids: UrlIds | None = None) -> None:
    """Write ``batch`` in one transaction; on a fault nothing of it is written.

    ``ids``, kept by the caller from batch to batch, spares lookups of URLs met before
    (without it, every URL of the batch's links is looked up)."""
    ids = UrlIds() if ids is None else ids
    with transaction(conn):
        _insert(conn, _INSERT_PAGE, batch.pages)
        _insert(conn, _INSERT_DISCOVERED, batch.discovered)
        conn.executemany(_UNLINK, ((url,) for url in batch.unlinked))
        learned = _insert_links(conn, batch.links, ids)
        conn.executemany(_INSERT_ROBOTS, batch.robots)
        conn.executemany(_SET_META, batch.meta)
        conn.executemany(_INSERT_SITEMAP, batch.sitemaps)
        conn.executemany(_READ_SITEMAP, batch.sitemaps_read)
        _insert(conn, _INSERT_ENTRY, batch.entries)
        conn.executemany(_PUT_DOMAIN, batch.domains)
        conn.executemany(PUT_FAMILY, batch.families)
        conn.executemany(_PUT_SCHEDULE, batch.schedule)
    ids.learn(learned)


def want_again(
    conn: sqlite3.Connection, since: float, every: bool, sitemap_due: Iterable[str]
) -> int:
    """Mark the pages a recrawl starting at ``since`` asks again (``every`` page, or the due
    ones and ``sitemap_due``) and queue them as disk backlog; how many were marked."""
    with transaction(conn):
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS sitemap_due (url TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM temp.sitemap_due")
        conn.executemany(
            "INSERT OR IGNORE INTO temp.sitemap_due VALUES (?)", ((url,) for url in sitemap_due)
        )
        marked = conn.execute(_WANT, (since, int(every))).rowcount
        conn.execute(
            "UPDATE urls SET spilled = 1 WHERE spilled = 0 AND url IN"
            " (SELECT url FROM schedule WHERE wanted_at IS NOT NULL)"
        )
    return int(marked)


def requeue_unfetched(conn: sqlite3.Connection) -> None:
    """Mark every queued but unfetched URL as disk backlog (``spilled``)."""
    conn.execute(f"UPDATE urls SET spilled = 1 WHERE spilled = 0 AND {UNFETCHED}")


def delete_pages(
    conn: sqlite3.Connection, records: Iterable[tuple[str, str, int]]
) -> list[tuple[str, str, int, str | None, str]]:
    """Delete the rows that still point at these ``(url, warc_file, offset)`` records;
    ``(url, host, depth, referrer, purpose)`` of every row deleted."""
    dropped = []
    with transaction(conn):
        for record in records:
            dropped.extend(conn.execute(_DELETE_PAGE, record).fetchall())
    return dropped


def _insert(conn: sqlite3.Connection, template: str, rows: Sequence[tuple[object, ...]]) -> None:
    """Run ``template`` over ``rows``, in order, a chunk of rows per statement.

    Chunks are powers of two, so a handful of statement texts serve every batch and SQLite's
    statement cache keeps them prepared (preparing one of 256 rows costs about a millisecond).
    """
    if not rows:
        return
    width = len(rows[0])
    for done, count in _chunks(conn, len(rows), width):
        chunk = rows[done : done + count]
        conn.execute(_statement(template, width, count), list(chain.from_iterable(chunk)))


def _chunks(conn: sqlite3.Connection, total: int, width: int) -> Iterator[tuple[int, int]]:
    """(start, length) of each chunk of ``total`` rows of ``width`` values: the largest power
    of two that fits the rows left, ``_CHUNK`` and SQLite's limit on a statement's values."""
    most = min(_CHUNK, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width)
    done = 0
    while done < total:
        count = 1 << (min(most, total - done).bit_length() - 1)
        yield done, count
        done += count


@cache
def _statement(template: str, width: int, count: int) -> str:
    row = "(" + ", ".join(["?"] * width) + ")"
    return template.replace(_ROWS, ", ".join([row] * count))


def _insert_links(
    conn: sqlite3.Connection, links: list[tuple[str, str]], ids: UrlIds
) -> dict[str, int]:
    """Insert the link rows of a batch as id pairs; the ids of the URLs not yet in ``ids``."""
    if not links:
        return {}
    known: dict[str, int] = {}
    new: list[str] = []
    for url in _node_urls(links):
        found = ids.get(url)
        if found is None:
            new.append(url)
        else:
            known[url] = found
    learned: dict[str, int] = {}
    if new:
        # In order of first appearance, as the plain path inserts them: the same ids.
        _insert(conn, _INSERT_NODE, [(url,) for url in new])
        for done, count in _chunks(conn, len(new), 1):
            query = _SELECT_IDS.format(marks=", ".join(["?"] * count))
            learned.update(conn.execute(query, new[done : done + count]).fetchall())
        known.update(learned)
    _insert(conn, _INSERT_LINK_IDS, [(known[src], known[dst]) for src, dst in links])
    return learned


def _node_urls(links: list[tuple[str, str]]) -> Iterator[str]:
    seen: set[str] = set()
    for pair in links:
        for url in pair:
            if url not in seen:
                seen.add(url)
                yield url
