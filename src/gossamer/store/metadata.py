"""Store stage, metadata: what was fetched, what was discovered, and the link graph.

Data flow: fetch -> parse -> **store**. The engine adds a ``PageRow`` per fetch (pointing
into the WARC files), the frontier adds every URL it queues, the parser adds each page's
out-links. Reports, the indexer and the ranker read ``DIR/crawl.db`` back (``reads``).

Calls come from the event loop, so rows are buffered and written in one transaction per batch
(``writes``); WAL mode with ``synchronous=NORMAL`` avoids an fsync per commit. A batch is
committed inline, or, once the crawl calls :meth:`MetadataDB.start_writer`, on a writer
thread (``writer``), so the loop does not wait for SQLite. Every read first makes the rows
added before it visible: it waits for them to be committed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.store.connect import connect_writer, faults, quick_check, transaction
from gossamer.store.domains import DomainRow
from gossamer.store.families import SELECT_FAMILIES
from gossamer.store.reads import BACKLOG, BacklogRow, CrawlReads
from gossamer.store.rows import PAGE_COLUMNS, PageRow, Schedule, page_values, schedule_values
from gossamer.store.schema import prepare_schema
from gossamer.store.writer import BatchWriter
from gossamer.store.writes import (
    Batch,
    UrlIds,
    commit,
    delete_pages,
    requeue_unfetched,
    want_again,
)

__all__ = ["MetadataDB", "crawl_db_problem"]

_CACHE_KIB = 64 * 1024  # SQLite's page cache for crawl.db, all connections of a crawl together
_READER_CACHE_KIB = 8 * 1024  # of which the loop's connection keeps this while a writer runs


# Rows (of the longest kind: links, some 40 a page) per batch. Each commit rewrites the index
# pages it touched; 2,000 rows (about 50 pages) cost the writer thread a quarter less CPU per
# page than 500 did. A crash loses at most the queued batches, which the WARC replay restores.
BATCH_ROWS = 2_000


SCHEDULE_COLUMNS = tuple(f.name for f in fields(Schedule))
# A page's schedule row and its pages row (NULLs when it has none), in one lookup.
_LAST_VISIT = (
    f"SELECT {', '.join(f's.{name}' for name in SCHEDULE_COLUMNS)},"
    f" {', '.join(f'p.{name}' for name in PAGE_COLUMNS.split(', '))}"
    " FROM schedule AS s LEFT JOIN pages AS p ON p.url = s.url WHERE s.url = ?"
)


class MetadataDB(CrawlReads):
    """Buffered writer and reader of ``crawl.db``; the only writer of it in a crawl process."""

    def __init__(
        self, path: Path, *, batch_size: int = BATCH_ROWS, clock: Callable[[], float] = time.time
    ) -> None:
        self._batch_size = max(1, batch_size)
        self._clock = clock
        self._batch = Batch()
        self._writer: BatchWriter | None = None
        # urls ids met so far, for inline commits and the writer thread's (never both at once).
        self._ids = UrlIds()
        # Write-behind only: hosts with spilled rows in the buffer, and for every other host
        # that spilled, the ticket of the batch holding its newest spilled row.
        self._spilling: set[str] = set()
        self._spilled: dict[str, int] = {}
        self._closed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create folder for {path}: {exc.strerror}") from exc
        with faults("open", path):
            conn = connect_writer(path, cache_kib=_CACHE_KIB)
        super().__init__(conn, path)
        try:
            with faults("open", path):
                # The schema is checked first, so a foreign or damaged file is refused before
                # anything (even the journal mode) is written to it.
                prepare_schema(conn, path, clock)
                conn.execute("PRAGMA journal_mode = WAL")
        except StoreError:
            conn.close()
            raise

    # -- writing ---------------------------------------------------------------------------

    def add_page(self, row: PageRow) -> None:
        self._batch.pages.append(page_values(row))

    def add_discovered(
        self, rows: Iterable[tuple[str, str, int, str | None]], *, spilled: bool = False
    ) -> None:
        """Record queued URLs as ``(url, host, depth, referrer)``; repeats are ignored.

        ``spilled`` marks URLs the frontier keeps on disk only; ``backlog`` reads them back.
        """
        now = self._clock()
        flag = int(spilled)
        added = self._batch.discovered
        start = len(added)
        added.extend((url, host, depth, ref, now, flag) for url, host, depth, ref in rows)
        if spilled and self._writer is not None:
            self._spilling.update(row[1] for row in added[start:])

    def add_links(self, from_url: str, to_urls: Sequence[str]) -> None:
        # dict.fromkeys drops repeats within a page while keeping their order.
        self._batch.links.extend((from_url, to_url) for to_url in dict.fromkeys(to_urls))

    def unlink(self, from_url: str) -> None:
        """Drop a page's out-links (before those of its new version, if any, are added)."""
        self._batch.unlinked.append(from_url)

    def add_schedule(self, row: Schedule) -> None:
        """Record a page's recrawl schedule (``crawling.recrawl``), with its exchange."""
        self._batch.schedule.append(schedule_values(row))

    def want_again(self, since: float, every: bool, sitemap_due: Iterable[str] = ()) -> int:
        """Mark the pages a recrawl starting at ``since`` asks again, queued as disk backlog
        (``writes.want_again``); how many were marked."""
        self.flush()
        with faults("write", self.path):
            return want_again(self._conn, since, every, sitemap_due)

    def last_visit(self, url: str) -> tuple[Schedule | None, PageRow | None]:
        """The page's ``schedule`` and ``pages`` rows as committed, without waiting for the
        rows still buffered: a recrawl asks this of every page it records, for rows of earlier
        runs, and a flush per page would undo the batching."""
        with faults("read", self.path):
            found = self._conn.execute(_LAST_VISIT, (url,)).fetchone()
        if found is None:
            return None, None
        width = len(SCHEDULE_COLUMNS)
        schedule = Schedule(*found[:width])
        return schedule, None if found[width] is None else PageRow(*found[width:])

    def clear_wanted(self) -> None:
        """A shared crawl's folder handed its wanted pages to the shared queues: this folder
        no longer wants them itself."""
        self.flush()
        with faults("write", self.path), transaction(self._conn):
            self._conn.execute("UPDATE schedule SET wanted_at = NULL WHERE wanted_at IS NOT NULL")

    def folder_id(self) -> str:
        """This crawl folder's own name for itself, made the first time it is asked for."""
        found = self.get_meta("folder_id")
        if found is None:
            found = uuid.uuid4().hex
            self.set_meta("folder_id", found)
            self.flush()
        return found

    def add_robots(self, origin: str, status: int, body: bytes, fetched_at: float) -> None:
        """Record ``origin``'s robots.txt answer, so a resume can reuse it while it is valid."""
        self._batch.robots.append((origin, status, body, fetched_at))

    def add_sitemap(self, url: str, owner: str, level: int) -> None:
        """Record a sitemap found (named by robots.txt, guessed, or listed by an index)."""
        self._batch.sitemaps.append((url, owner, level, self._clock()))

    def read_sitemap(
        self, url: str, error: str | None, entries: Sequence[tuple[str, str | None]]
    ) -> None:
        """Record what a fetched sitemap gave: its ``(url, lastmod)`` entries, first error."""
        self._batch.sitemaps_read.append((len(entries), error, url))
        self._batch.entries.extend((loc, url, lastmod) for loc, lastmod in entries)

    def add_family(self, family: str, host: str, depth: int) -> None:
        """Record a self-fed URL family of ``host`` and the shallowest depth it has reached
        (``urls.traps.TrapFamilies``); a deeper depth than the one kept changes nothing."""
        self._batch.families.append((family, host, depth))

    def trap_families(self) -> Iterator[tuple[str, str, int]]:
        """Every family kept, as ``(family, host, depth)``, in the order first written."""
        return self._query(SELECT_FAMILIES)

    def set_meta(self, key: str, value: str) -> None:
        """Save a value (committed at once, or queued behind the batches handed over)."""
        self._commit_now(Batch(meta=[(key, value)]))

    def put_domains(self, rows: Iterable[DomainRow]) -> None:
        """Insert or replace these hosts' rows of the ``domains`` table (committed at once,
        or queued behind the batches handed over), stamped with the time of this call."""
        now = self._clock()
        self._commit_now(Batch(domains=[(*row.values(), now) for row in rows]))

    def _commit_now(self, batch: Batch) -> None:
        if self._writer is not None:
            self._writer.submit(batch)
            return
        with faults("write", self.path):
            commit(self._conn, batch, self._ids)

    def end_exchange(self) -> None:
        """Mark the end of everything one fetch added; write the batch if it is full.

        Batches are cut only here, so a page's row and the rows for the links and redirect it
        led to commit in the same transaction: after a crash the database never holds a page
        whose discoveries are missing (the WARC replay restores whole exchanges).
        """
        if self._batch.size >= self._batch_size:
            self.cut()

    def cut(self) -> int:
        """Hand every buffered row over for commit, inline or to the writer; a ticket for
        :meth:`wait` (0 once written inline). Buffers survive a failed attempt."""
        batch = self._batch
        writer = self._writer
        if writer is None:
            if not batch.empty():
                with faults("write", self.path):
                    commit(self._conn, batch, self._ids)
                self._batch = Batch()
            return 0
        if batch.empty():
            return writer.latest
        ticket = writer.submit(batch)
        self._batch = Batch()
        for host in self._spilling:
            self._spilled[host] = ticket
        self._spilling.clear()
        return ticket

    def wait(self, ticket: int) -> None:
        """Return once the rows behind ``ticket`` (from :meth:`cut`) are committed; raise the
        fault if they cannot be. Safe from any thread."""
        writer = self._writer
        if writer is not None and ticket:
            writer.wait(ticket)

    def flush(self) -> None:
        """Commit every row added so far before returning."""
        self.wait(self.cut())

    # -- write-behind ------------------------------------------------------------------------

    def start_writer(self, on_fault: Callable[[StoreError], None] | None = None) -> None:
        """Commit batches on a writer thread from now on, until :meth:`stop_writer` or
        :meth:`close`. ``on_fault`` hears of the first fault at once, on the writer thread."""
        if self._writer is not None:
            return
        with faults("open", self.path):
            conn = connect_writer(self.path, cache_kib=_CACHE_KIB - _READER_CACHE_KIB, threads=True)
        self._writer = BatchWriter(conn, self.path, on_fault=on_fault, ids=self._ids)
        # Spilled rows already buffered are handed over with the next cut, like later ones.
        self._spilling.update(row[1] for row in self._batch.discovered if row[5])
        with faults("write", self.path):
            self._conn.execute(f"PRAGMA cache_size = -{_READER_CACHE_KIB}")

    def stop_writer(self) -> None:
        """Commit what was handed over, join the writer thread, and go back to inline writes.
        Batches a fault left unwritten come back to the buffer, for the next flush to retry."""
        writer = self._writer
        if writer is None:
            return
        self._writer = None
        left = Batch()
        for batch in writer.stop():
            left.extend(batch)
        left.extend(self._batch)
        self._batch = left
        self._spilling.clear()
        self._spilled.clear()
        with faults("write", self.path):
            self._conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")

    # -- the frontier's disk side -----------------------------------------------------------

    def backlog(self, host: str, after: int, limit: int) -> list[BacklogRow]:
        """Spilled, unfetched URLs of ``host`` with id above ``after`` (``BacklogRow``).

        With a writer thread, this waits only for the batch holding the host's newest spilled
        row: the frontier counted those rows and must find every one of them.
        """
        if self._writer is None:
            return super().backlog(host, after, limit)
        if host in self._spilling:
            self.cut()
        self.wait(self._spilled.get(host, 0))
        return list(self._rows(BACKLOG, (host, after, limit)))

    def prepare_resume(self) -> dict[str, int]:
        """Move every queued but unfetched URL to the disk backlog; return counts per host.

        After a stop or a crash, whatever was in the frontier's memory window is gone; the
        ``urls`` table still lists it, so it all becomes backlog again.
        """
        self.flush()
        with faults("write", self.path):
            requeue_unfetched(self._conn)
        return self.backlog_counts()

    def drop_pages(
        self, records: Iterable[tuple[str, str, int]]
    ) -> list[tuple[str, str, int, str | None, str]]:
        """Delete the rows that still point at these ``(url, warc_file, offset)`` records.

        Returns ``(url, host, depth, referrer, purpose)`` of every row deleted.
        """
        self.flush()
        with faults("write", self.path):
            return delete_pages(self._conn, records)

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the writer, flush, fold the WAL back into the database file, and close."""
        if self._closed:
            return
        self._closed = True
        try:
            self.stop_writer()
            self.flush()
            with faults("close", self.path):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self._conn.close()

    def __enter__(self) -> MetadataDB:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _before_read(self) -> None:
        # Each read sees every row added so far.
        self.flush()


def crawl_db_problem(path: Path) -> str:
    """Why the ``crawl.db`` at ``path`` cannot be kept ("" if it can): missing, unreadable,
    corrupt or incompatible. A file of an older schema is upgraded on the way."""
    if not path.exists():
        return "missing"
    problem = quick_check(path)
    if problem:
        return problem
    try:
        MetadataDB(path).close()  # schema and version, upgraded if it is an older one
    except StoreError as exc:
        return str(exc)
    return ""
