"""The crawl's reports, rewritten off the event loop: every ``report_interval`` and at the end.

Data flow: ``CrawlStats`` and the hosts in visit (copied on the loop) + ``crawl.db`` ->
``store.write_reports`` -> ``DIR/reports``, and the domain registry's rows back to ``crawl.db``
(its ``domains`` table, through the database's writer, with the statistics snapshot).
Rewriting every report reads every row and syncs every file: seconds on a large crawl, which
the loop must not wait for. So the reports are written on a thread the :class:`Reporter` owns,
from a copy of the statistics and a read-only connection of its own. That thread first waits
until the rows cut when the report was asked for are committed (the writer thread may still be
busy with them), then reads in one transaction, so the lists of crawled and not crawled URLs
come from one state of the database.

A rewrite reads every row, so its cost grows with the crawl: the period grows with it
(:func:`report_period`), keeping the report thread's share of the time near a tenth at most,
so a crawl of millions of pages is not slowed by rewriting lists every 30 seconds.

When the crawl ends, :meth:`Reporter.write_charts` (or ``report_now(final=True)``) adds
``reports/report.html``, the report with charts (``monitor/report.py``), on the same thread:
matplotlib is imported there and then, never at the crawl's start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gossamer.crawling.folder import save_snapshot
from gossamer.crawling.reports import report_period
from gossamer.crawling.scope import Scope
from gossamer.engine.steering import set_within
from gossamer.monitor.charts import warm
from gossamer.monitor.report import write_report
from gossamer.stats import CrawlStats
from gossamer.store import CrawlRecords, MetadataDB, write_reports
from gossamer.store.domains import DomainRow

__all__ = ["Reporter"]

log = logging.getLogger(__name__)


class Reporter:
    """Owns the report thread: ``with Reporter(...)`` joins it on the way out."""

    def __init__(
        self,
        out: Path,
        db: MetadataDB,
        stats: CrawlStats,
        visiting: Callable[[], Collection[str]] = frozenset,
        scope: Scope | None = None,
    ) -> None:
        self._out = out
        self._db = db
        self._stats = stats
        self._visiting = visiting  # the hosts in visit now, asked on the loop
        self._scope = scope  # the refused links are listed with their rule
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gossamer-reports")
        self._thread.submit(warm)  # matplotlib imported while the crawl runs, not at its end

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._thread.shutdown(wait=True)

    async def every(self, interval: float, ending: asyncio.Event) -> None:
        """Rewrite the reports every ``interval`` seconds (longer once a rewrite takes more than
        a tenth of that, see :func:`report_period`) until ``ending`` is set; a fault ends it
        with ``StoreError``."""
        wait = interval
        while not await set_within(ending, wait):
            started = time.monotonic()
            await self.write()
            wait = report_period(interval, time.monotonic() - started)

    async def write(self, *, ended: bool = False) -> None:
        """Rewrite every report, and save the domain registry and the statistics snapshot
        in ``crawl.db``. ``ended``: the crawl is over, so no host is in visit any more."""
        ticket = self._db.cut()  # on the loop, between exchanges: whole exchanges only
        stats = self._stats.copy()
        visiting = frozenset() if ended else frozenset(self._visiting())
        try:
            future = asyncio.get_running_loop().run_in_executor(
                self._thread, self._write, ticket, stats, visiting
            )
            try:
                self._db.put_domains(await asyncio.shield(future))
            except asyncio.CancelledError:
                # A report cannot be stopped half-way; it ends before anything else goes on.
                await asyncio.wait([future])
                if not future.cancelled() and future.exception() is not None:
                    log.debug("report cut short by cancellation", exc_info=future.exception())
                raise
        finally:
            save_snapshot(self._db, stats)

    async def write_charts(self) -> None:
        """Write ``reports/report.html`` (at the end of the crawl) on the report thread."""
        stats = self._stats.copy()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._thread, write_report, self._out, stats)

    def _write(self, ticket: int, stats: CrawlStats, visiting: frozenset[str]) -> list[DomainRow]:
        self._db.wait(ticket)
        with CrawlRecords(self._db.path) as records, records.consistent():
            return write_reports(self._out, stats, records, visiting=visiting, scope=self._scope)
