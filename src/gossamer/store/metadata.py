"""Store stage, metadata: what was fetched, what was discovered, and the link graph.

Data flow: fetch -> parse -> **store**. The engine adds a ``PageRow`` per fetch (pointing
into the WARC files), the frontier adds every URL it queues, the parser adds each page's
out-links. Reports, the indexer and the ranker read ``DIR/crawl.db`` back.

Calls come from the event loop, so rows are buffered and written with ``executemany`` in
one transaction per batch; WAL mode with ``synchronous=NORMAL`` avoids an fsync per commit.

The link graph stores integer ids, not URL text: ``links(src, dst)`` holds ``urls.id``
values, and the ``link_urls`` view joins them back to ``(from_url, to_url)``. A link
target that was never queued still gets a ``urls`` row, with ``discovered_at`` NULL, so
it has an id without counting as discovered.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any

from gossamer import __version__
from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.store.migrate import ROBOTS_TABLE, upgrade
from gossamer.store.warc import WarcLocation

__all__ = ["SCHEMA_VERSION", "MetadataDB", "PageRow", "page_row", "sha1_hex"]

SCHEMA_VERSION = 2
_FETCH_ROWS = 1000  # rows per fetchmany when streaming query results
_CACHE_KIB = 64 * 1024

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
    purpose TEXT NOT NULL DEFAULT 'page'  -- 'page', or 'robots' for robots.txt exchanges
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
)
_INSERT_ROBOTS = "INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?)"

_INSERT_PAGE = (
    "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# First discovery wins; a row made earlier only as a link target takes the details.
_INSERT_DISCOVERED = """
INSERT INTO urls (url, host, depth, referrer, discovered_at, spilled) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (url) DO UPDATE SET
    host = excluded.host, depth = excluded.depth, referrer = excluded.referrer,
    discovered_at = excluded.discovered_at, spilled = excluded.spilled
WHERE urls.discovered_at IS NULL
"""
# A queued URL that has no ``pages`` row yet.
_UNFETCHED = (
    "discovered_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pages WHERE pages.url = urls.url)"
)
_INSERT_NODE = "INSERT OR IGNORE INTO urls (url) VALUES (?)"
_INSERT_LINK = """
INSERT OR IGNORE INTO links (src, dst)
SELECT s.id, d.id FROM urls AS s, urls AS d WHERE s.url = ? AND d.url = ?
"""


@dataclass(frozen=True, slots=True)
class PageRow:
    """One fetched URL as recorded in ``pages``; ``length`` counts body bytes as received."""

    url: str
    url_id: str  # SHA-1 hex of url
    doc_id: str | None  # SHA-1 hex of the decoded content; None when there is none
    status: int  # 0 when the fetch failed below HTTP
    content_type: str | None
    length: int | None
    fetched_at: float
    elapsed: float
    depth: int
    referrer: str | None
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    error: str | None
    host: str
    purpose: str = "page"  # "page", or "robots" for a robots.txt exchange


_PAGE_COLUMNS = ", ".join(f.name for f in fields(PageRow))
# attrgetter builds the row tuple in C; dataclasses.astuple deep-copies every field.
_page_values = attrgetter(*(f.name for f in fields(PageRow)))


def sha1_hex(data: str | bytes) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()


def page_row(
    result: FetchResult,
    location: WarcLocation | None,
    *,
    depth: int,
    referrer: str | None,
    host: str,
    purpose: str = "page",
) -> PageRow:
    """The ``pages`` row for a fetch; ``location`` is None when nothing was archived."""
    return PageRow(
        url=result.url,
        url_id=sha1_hex(result.url),
        doc_id=sha1_hex(result.content) if result.content else None,
        status=result.status,
        content_type=result.content_type or None,
        length=len(result.body) if result.status else None,
        fetched_at=result.started_at,
        elapsed=result.elapsed,
        depth=depth,
        referrer=referrer,
        warc_file=location.filename if location else None,
        warc_offset=location.offset if location else None,
        warc_length=location.length if location else None,
        error=result.error or None,
        host=host,
        purpose=purpose,
    )


class MetadataDB:
    """Buffered writer and reader of ``crawl.db``."""

    def __init__(
        self, path: Path, *, batch_size: int = 500, clock: Callable[[], float] = time.time
    ) -> None:
        self._path = path
        self._batch_size = max(1, batch_size)
        self._clock = clock
        self._pages: list[tuple[object, ...]] = []
        self._discovered: list[tuple[str, str, int, str | None, float, int]] = []
        self._links: list[tuple[str, str]] = []
        self._robots: list[tuple[str, int, bytes, float]] = []
        self._closed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create folder for {path}: {exc.strerror}") from exc
        with self._sqlite("open"):
            # Worker processes of one crawl share the file: wait for the write lock, don't fail.
            self._conn = sqlite3.connect(path, isolation_level=None, timeout=120.0)
        try:
            with self._sqlite("open"):
                # The schema is checked first, so a foreign or damaged file is refused before
                # anything (even the journal mode) is written to it.
                self._prepare_schema()
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
                # The url index takes random inserts; a larger page cache keeps them in memory.
                self._conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
        except StoreError:
            self._conn.close()
            raise

    # -- writing ---------------------------------------------------------------------------

    def add_page(self, row: PageRow) -> None:
        self._pages.append(_page_values(row))

    def add_discovered(
        self, rows: Iterable[tuple[str, str, int, str | None]], *, spilled: bool = False
    ) -> None:
        """Record queued URLs as ``(url, host, depth, referrer)``; repeats are ignored.

        ``spilled`` marks URLs the frontier keeps on disk only; ``backlog`` reads them back.
        """
        now = self._clock()
        flag = int(spilled)
        self._discovered.extend(
            (url, host, depth, ref, now, flag) for url, host, depth, ref in rows
        )

    def add_robots(self, origin: str, status: int, body: bytes, fetched_at: float) -> None:
        """Record ``origin``'s robots.txt answer, so a resume can reuse it while it is valid."""
        self._robots.append((origin, status, body, fetched_at))

    def robots_answers(self) -> Iterator[tuple[str, int, bytes, float]]:
        """Every origin's latest robots.txt answer: (origin, status, body, fetched_at)."""
        yield from self._query("SELECT origin, status, body, fetched_at FROM robots")

    # -- the frontier's disk side -----------------------------------------------------------

    def backlog(self, host: str, after: int, limit: int) -> list[tuple[int, str, int, str | None]]:
        """Spilled, unfetched URLs of ``host`` with id above ``after``: (id, url, depth, ref)."""
        return list(
            self._query(
                "SELECT id, url, depth, referrer FROM urls"
                f" WHERE host = ? AND spilled = 1 AND id > ? AND {_UNFETCHED}"
                " ORDER BY id LIMIT ?",
                (host, after, limit),
            )
        )

    def prepare_resume(self) -> dict[str, int]:
        """Move every queued but unfetched URL to the disk backlog; return counts per host.

        After a stop or a crash, whatever was in the frontier's memory window is gone; the
        ``urls`` table still lists it, so it all becomes backlog again.
        """
        self.flush()
        with self._sqlite("write"):
            self._conn.execute(f"UPDATE urls SET spilled = 1 WHERE spilled = 0 AND {_UNFETCHED}")
        return self.backlog_counts()

    # -- checking rows against the WARC files (resume, recover) ---------------------------

    def recorded_files(self) -> set[str]:
        """Names of the WARC files that ``pages`` rows point into."""
        sql = "SELECT DISTINCT warc_file FROM pages WHERE warc_file IS NOT NULL"
        return {str(name) for (name,) in self._query(sql)}

    def recorded_records(self, warc_file: str) -> dict[int, tuple[str, int]]:
        """The rows pointing into one WARC file: offset -> (url, compressed length)."""
        sql = "SELECT warc_offset, url, warc_length FROM pages WHERE warc_file = ?"
        return {
            int(offset): (str(url), int(length or 0))
            for offset, url, length in self._query(sql, (warc_file,))
        }

    def page_target(self, url: str) -> tuple[float, str | None, int | None] | None:
        """``(fetched_at, warc_file, warc_offset)`` of ``url``'s committed row, if any.

        Unlike the other readers this does not flush: rows still buffered are not seen, so a
        caller replaying many records keeps track of the ones it added itself.
        """
        sql = "SELECT fetched_at, warc_file, warc_offset FROM pages WHERE url = ?"
        with self._sqlite("read"):
            row = self._conn.execute(sql, (url,)).fetchone()
        return None if row is None else (float(row[0] or 0.0), row[1], row[2])

    def drop_pages(
        self, records: Iterable[tuple[str, str, int]]
    ) -> list[tuple[str, str, int, str | None, str]]:
        """Delete the rows that still point at these ``(url, warc_file, offset)`` records.

        Returns ``(url, host, depth, referrer, purpose)`` of every row deleted.
        """
        self.flush()
        sql = (
            "DELETE FROM pages WHERE url = ? AND warc_file = ? AND warc_offset = ?"
            " RETURNING url, host, depth, referrer, purpose"
        )
        dropped = []
        conn = self._conn
        with self._sqlite("write"):
            conn.execute("BEGIN IMMEDIATE")
            try:
                for record in records:
                    dropped.extend(conn.execute(sql, record).fetchall())
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return dropped

    def page_facts(
        self,
    ) -> Iterator[tuple[str, int, str | None, int | None, float | None, float | None, str, str]]:
        """Per row: host, status, error, length, elapsed, fetched_at, url, kind.

        ``kind`` is "page" for a stored page (2xx, no error), "robots" for a robots.txt
        exchange, else "other".
        """
        yield from self._query(
            "SELECT host, status, error, length, elapsed, fetched_at, url,"
            " CASE WHEN purpose = 'robots' THEN 'robots'"
            " WHEN status BETWEEN 200 AND 299 AND error IS NULL THEN 'page'"
            " ELSE 'other' END FROM pages"
        )

    def backlog_counts(self) -> dict[str, int]:
        """Spilled, unfetched URLs per host (after ``prepare_resume``), without writing."""
        return {
            str(host): int(count)
            for host, count in self._query(
                f"SELECT host, count(*) FROM urls WHERE spilled = 1 AND {_UNFETCHED} GROUP BY host"
            )
        }

    def queued_urls(self) -> Iterator[str]:
        """Every URL ever queued or fetched (the seen-set's content)."""
        for (url,) in self._query(
            "SELECT url FROM urls WHERE discovered_at IS NOT NULL UNION SELECT url FROM pages"
        ):
            yield url

    def get_meta(self, key: str) -> str | None:
        for (value,) in self._query("SELECT value FROM meta WHERE key = ?", (key,)):
            return str(value)
        return None

    def set_meta(self, key: str, value: str) -> None:
        with self._sqlite("write"):
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def add_links(self, from_url: str, to_urls: Sequence[str]) -> None:
        # dict.fromkeys drops repeats within a page while keeping their order.
        self._links.extend((from_url, to_url) for to_url in dict.fromkeys(to_urls))

    def end_exchange(self) -> None:
        """Mark the end of everything one fetch added; write the batch if it is full.

        Batches are cut only here, so a page's row and the rows for the links and redirect it
        led to commit in the same transaction: after a crash the database never holds a page
        whose discoveries are missing (the WARC replay restores whole exchanges).
        """
        if max(len(self._pages), len(self._discovered), len(self._links)) >= self._batch_size:
            self.flush()

    def flush(self) -> None:
        """Write every buffered row in one transaction. Buffers survive a failed attempt."""
        if not (self._pages or self._discovered or self._links or self._robots):
            return
        conn = self._conn
        with self._sqlite("write"):
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(_INSERT_PAGE, self._pages)
                conn.executemany(_INSERT_DISCOVERED, self._discovered)
                conn.executemany(_INSERT_NODE, _link_nodes(self._links))
                conn.executemany(_INSERT_LINK, self._links)
                conn.executemany(_INSERT_ROBOTS, self._robots)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        self._pages.clear()
        self._discovered.clear()
        self._links.clear()
        self._robots.clear()

    def close(self) -> None:
        """Flush, fold the WAL back into the database file, and close."""
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
            with self._sqlite("close"):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._conn.close()

    def __enter__(self) -> MetadataDB:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- reading (each flushes first, so it sees every row added so far) ------------------

    def crawled_urls(self) -> Iterator[str]:
        for (url,) in self._query("SELECT url FROM pages ORDER BY fetched_at, url"):
            yield url

    def uncrawled_urls(self) -> Iterator[str]:
        """URLs queued but never fetched, in discovery order."""
        for (url,) in self._query(f"SELECT url FROM urls WHERE {_UNFETCHED} ORDER BY id"):
            yield url

    def page_statuses(self) -> Iterator[tuple[str, int, str | None]]:
        """``(url, status, error)`` per fetched URL, in fetch order."""
        yield from self._query("SELECT url, status, error FROM pages ORDER BY fetched_at, url")

    def page(self, url: str) -> PageRow | None:
        for values in self._query(f"SELECT {_PAGE_COLUMNS} FROM pages WHERE url = ?", (url,)):
            return PageRow(*values)
        return None

    def page_count(self) -> int:
        return self._count("SELECT count(*) FROM pages")

    def discovered_count(self) -> int:
        return self._count("SELECT count(*) FROM urls WHERE discovered_at IS NOT NULL")

    def link_count(self) -> int:
        return self._count("SELECT count(*) FROM links")

    def links(self) -> Iterator[tuple[str, str]]:
        yield from self._query("SELECT from_url, to_url FROM link_urls")

    # -- internals -------------------------------------------------------------------------

    def _count(self, sql: str) -> int:
        for (count,) in self._query(sql):
            return int(count)
        return 0

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> Iterator[Any]:
        # Rows come back untyped from SQLite; each caller knows the shape of its columns.
        self.flush()
        with self._sqlite("read"):
            cursor = self._conn.execute(sql, params)
            while rows := cursor.fetchmany(_FETCH_ROWS):
                yield from rows

    def _prepare_schema(self) -> None:
        tables = {
            name
            for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if not tables:
            self._conn.executescript(f"BEGIN;\n{_SCHEMA}\nCOMMIT;")
            self._conn.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("schema_version", str(SCHEMA_VERSION)),
                    ("created_at", repr(self._clock())),
                    ("gossamer_version", __version__),
                ],
            )
            return
        version = None
        if "meta" in tables:
            row = self._conn.execute(
                "SELECT value FROM meta WHERE key = 'schema_version'"
            ).fetchone()
            version = row[0] if row else None
        if version is None or not {"pages", "urls", "links"} <= tables:
            raise StoreError(f"{self._path} is not a Gossamer crawl database")
        version = upgrade(self._conn, version)
        if version != str(SCHEMA_VERSION):
            raise StoreError(
                f"{self._path} has schema version {version}; "
                f"this Gossamer reads version {SCHEMA_VERSION}"
            )

    @contextmanager
    def _sqlite(self, action: str) -> Iterator[None]:
        """Turn SQLite faults into one clear StoreError line; let programming errors through."""
        try:
            yield
        except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
            raise
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot {action} crawl database {self._path}: {_reason(exc)}"
            ) from exc


def _link_nodes(links: list[tuple[str, str]]) -> Iterator[tuple[str]]:
    seen: set[str] = set()
    for pair in links:
        for url in pair:
            if url not in seen:
                seen.add(url)
                yield (url,)


def _reason(exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return "the disk is full"
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        return "disk I/O error"
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "not a database" in text:
        return "the file is corrupt or is not a SQLite database"
    if name.startswith("SQLITE_CANTOPEN"):
        return "the file cannot be opened or created"
    if name.startswith("SQLITE_READONLY"):
        return "the file is read-only"
    return text
