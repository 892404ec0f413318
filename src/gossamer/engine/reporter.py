"""The crawl's reports, rewritten off the event loop: every ``report_interval`` and at the end.

Data flow: ``CrawlStats`` (copied on the loop) + ``crawl.db`` -> ``store.write_reports`` ->
``DIR/reports``. Rewriting every report reads every row and syncs every file: seconds on a
large crawl, which the loop must not wait for. So the reports are written on a thread the
:class:`Reporter` owns, from a copy of the statistics and a read-only connection of its own.
That thread first waits until the rows cut when the report was asked for are committed (the
writer thread may still be busy with them), then reads in one transaction, so the lists of
crawled and not crawled URLs come from one state of the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gossamer.engine.resume import save_snapshot
from gossamer.stats import CrawlStats
from gossamer.store import CrawlRecords, MetadataDB, write_reports

__all__ = ["Reporter"]

log = logging.getLogger(__name__)


class Reporter:
    """Owns the report thread: ``with Reporter(...)`` joins it on the way out."""

    def __init__(self, out: Path, db: MetadataDB, stats: CrawlStats) -> None:
        self._out = out
        self._db = db
        self._stats = stats
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gossamer-reports")

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._thread.shutdown(wait=True)

    async def every(self, interval: float, ending: asyncio.Event) -> None:
        """Rewrite the reports every ``interval`` seconds until ``ending`` is set; a fault
        ends it with ``StoreError``."""
        while not await _set_within(ending, seconds=interval):
            await self.write()

    async def write(self) -> None:
        """Rewrite every report and save the statistics snapshot in ``crawl.db``."""
        ticket = self._db.cut()  # on the loop, between exchanges: whole exchanges only
        stats = self._stats.copy()
        try:
            future = asyncio.get_running_loop().run_in_executor(
                self._thread, self._write, ticket, stats
            )
            try:
                await asyncio.shield(future)
            except asyncio.CancelledError:
                # A report cannot be stopped half-way; it ends before anything else goes on.
                await asyncio.wait([future])
                if not future.cancelled() and future.exception() is not None:
                    log.debug("report cut short by cancellation", exc_info=future.exception())
                raise
        finally:
            save_snapshot(self._db, stats)

    def _write(self, ticket: int, stats: CrawlStats) -> None:
        self._db.wait(ticket)
        with CrawlRecords(self._db.path) as records, records.consistent():
            write_reports(self._out, stats, records)


async def _set_within(event: asyncio.Event, *, seconds: float) -> bool:
    """Whether ``event`` is set within ``seconds`` (a timer that a stop cuts short)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
