"""The in-process engine: one crawl, or one ``--workers`` process's share of it.

``concurrency`` crawl loops (``crawling/loop.py``, the loop every engine runs) take tickets
from the in-process seam (``engine/seam.py``), whose scheduler is the only task that asks the
frontier for work, and hand what they fetch to the pipeline (the store side). The crawler owns
everything that runs: in one task group the scheduler, the loops, the reporter, the
progress painter and the steering tick (each waits on the ``ending`` event with its period as
timeout, so a stop ends them at once); the control channel (``DIR/control.sock``, open from
the first job to the last report); the database's writer thread (started here, joined when
the database closes) and the report thread (joined when the ``Reporter`` exits). It stops on
the page target, the time limit, SIGINT/SIGTERM, a stop through the control channel, a store
fault or an empty frontier, then flushes the stores and writes the reports. A pause through
the control channel closes the ``FetchGate`` (``engine/steering.py``): no job is handed out
and none is fetched until it opens again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from gossamer.config import CrawlConfig
from gossamer.crawling.fetching import build_fetcher
from gossamer.crawling.folder import CrawlLock
from gossamer.crawling.loop import CrawlLoop
from gossamer.crawling.progress import Progress
from gossamer.crawling.revisits import end_recrawl
from gossamer.crawling.scope import scope_of
from gossamer.crawling.verdict import judge
from gossamer.engine.backlog import DatabaseBacklog, crawl_frontier, seed_fallbacks
from gossamer.engine.control import ControlServer
from gossamer.engine.inbox import Inbox
from gossamer.engine.interrupts import Interrupts, finishing
from gossamer.engine.partition import Part
from gossamer.engine.pipeline import Pipeline
from gossamer.engine.reporter import Reporter
from gossamer.engine.resume import holds_crawl, restore_part, resume_crawl
from gossamer.engine.seam import LocalSeam
from gossamer.engine.steering import STOP_REASON, FetchGate, Steering, set_within
from gossamer.engine.timelimit import time_left, warn_no_time_left
from gossamer.errors import StoreError
from gossamer.frontier import Frontier
from gossamer.monitor.channel import socket_path
from gossamer.render.choice import renderer_of
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore

log = logging.getLogger(__name__)

STOP_GRACE = 10.0  # seconds in-flight fetches get to finish after a stop request
GRACEFUL = ("signal", "time", STOP_REASON)  # stops that cut in-flight fetches after the grace


@dataclass(frozen=True, slots=True)
class CrawlOutcome:
    stats: CrawlStats
    reason: str  # "target", "time", "exhausted", "signal", "stopped", "store error"


class Crawler:
    """Runs one crawl from seeds to reports; ``run`` is the whole lifetime."""

    def __init__(self, config: CrawlConfig, seeds: SeedList, part: Part | None = None) -> None:
        self._config = config
        self._part = part  # set when this crawler is one worker of a partitioned crawl
        self._last_flush = 0.0
        self._seeds = seeds
        self.stats = CrawlStats(concurrency=config.concurrency)
        self._stop_reason = ""
        self._wake = asyncio.Event()
        self._ending = asyncio.Event()  # set on a stop, and when the dispatcher is done
        self._db: MetadataDB | None = None  # the crawl.db of the run under way
        self._fault: StoreError | None = None  # the first store fault; it ends the crawl
        self._gate = FetchGate(self.stats)
        self._seam: LocalSeam | None = None  # the tickets of the run under way
        self._interrupts: Interrupts | None = None  # a lone crawl's Ctrl-C handling

    def stop(self, reason: str) -> None:
        if not self._stop_reason:
            log.info("stopping reason=%s", reason)
            self._stop_reason = reason
        self._gate.resume()  # jobs handed out before a pause end as after any stop
        self._wake.set()
        self._ending.set()

    async def run(self) -> CrawlOutcome:
        """The whole crawl: lock the folder, start or resume, crawl, flush, report."""
        out = self._config.out
        # A worker runs under its coordinator's lock, in a folder the coordinator prepared.
        lock = CrawlLock(out) if self._part is None else contextlib.nullcontext()
        with lock:
            # Opening the database first checks a resumed folder (version, corruption)
            # before anything in it is written.
            db = MetadataDB(out / "crawl.db")
            try:
                return await self._run(db)
            finally:
                with contextlib.suppress(StoreError):
                    db.close()

    def _open_frontier(self, db: MetadataDB, resuming: bool) -> Frontier:
        """A new frontier, or a resumed crawl's with its statistics. A lone crawl first brings
        the database level with the WARC files (the torn tail of the newest is cut before the
        stores open); a worker's coordinator has done that already."""
        if not resuming:
            return crawl_frontier(self._config, self.stats, DatabaseBacklog(db))
        fallbacks = seed_fallbacks(seed.urls for seed in self._seeds.seeds)
        if self._part is None:
            self.stats, frontier = resume_crawl(self._config, db, fallbacks)
        else:
            self.stats, frontier = restore_part(self._config, db, self._part, fallbacks)
        return frontier

    async def _run(self, db: MetadataDB) -> CrawlOutcome:
        config = self._config
        out = config.out
        resuming = holds_crawl(out, db)
        part = self._part
        frontier = self._open_frontier(db, resuming)
        if part is not None:
            part.base = self.stats.pages  # its grants count from here
        if resuming and time_left(config.time_limit, self.stats) == 0:
            return await self._no_time_left(db)
        self._gate = FetchGate(self.stats)  # a resume replaced the statistics
        prefix = "gossamer" if part is None else f"gossamer-w{part.index}"
        warc = WarcStore(out / "warc", prefix=prefix, max_file_bytes=config.warc_max_bytes)
        cdxj = CdxjWriter(out / ("index.cdxj" if part is None else f"index-w{part.index}.cdxj"))
        pipeline = Pipeline(
            config, frontier=frontier, stats=self.stats, warc=warc, cdxj=cdxj, db=db, part=part
        )
        for seed in self._seeds.seeds:
            if part is None or part.mine(seed.urls[0]):
                pipeline.admit(seed.urls[0], 0, None, fallbacks=seed.urls[1:])
        await self._drive(frontier, pipeline, (warc, cdxj, db))
        if self._fault is not None:
            raise self._fault
        reason = self._stop_reason or "exhausted"
        if part is None:  # a worker's share is judged with the others', by the coordinator
            judge(self.stats, reason)
        return CrawlOutcome(self.stats, reason)

    async def _drive(
        self,
        frontier: Frontier,
        pipeline: Pipeline,
        stores: tuple[WarcStore, CdxjWriter, MetadataDB],
    ) -> None:
        """Run every part of the crawl, then flush the stores and write the reports."""
        config, part, (warc, cdxj, db) = self._config, self._part, stores
        out = config.out
        loop = asyncio.get_running_loop()
        inbox = self._listen(loop, pipeline)
        timer = self._time_limit(loop)
        progress = Progress(
            self.stats,
            frontier,
            enabled=config.progress and sys.stderr.isatty(),
            targets=(config.max_pages, config.time_limit),
        )
        # A worker leaves the reports to the coordinator, which sees the whole crawl.
        reporter = (
            Reporter(out, db, self.stats, frontier.visiting, scope_of(self._config.scope))
            if part is None
            else None
        )
        steering = self._steering(frontier, pipeline)
        control = ControlServer(socket_path(out, None if part is None else part.index), steering)
        db.start_writer(on_fault=lambda exc: _call_soon(loop, self._fail, exc))
        self._db = db
        try:
            # The control channel stays open until the reports are written: its last status
            # ("ended") has the totals of stats.json.
            async with control:
                try:
                    await self._crawl(frontier, pipeline, progress, reporter, (steering, control))
                finally:
                    if timer is not None:
                        timer.cancel()
                    if self._interrupts is not None:
                        self._interrupts.remove()
                    progress.close()
                    with finishing(), reporter or contextlib.nullcontext():
                        await self._finish(warc, cdxj, db, reporter)
                    steering.ended = True
        finally:
            if part is not None and inbox is not None:
                await asyncio.to_thread(part.close_inbox, inbox)  # joined, not left running

    def _time_limit(self, loop: asyncio.AbstractEventLoop) -> asyncio.TimerHandle | None:
        """Stop the crawl when the time limit (less earlier runs) is reached."""
        remaining = time_left(self._config.time_limit, self.stats)
        if remaining is None:
            return None
        if remaining <= 0:
            self.stop("time")  # spent already: not a single request, whatever runs first
            return None
        return loop.call_later(remaining, self.stop, "time")

    def _steering(self, frontier: Frontier, pipeline: Pipeline) -> Steering:
        config = self._config
        return Steering(
            stats=self.stats,
            frontier=frontier,
            gate=self._gate,
            concurrency=config.concurrency,
            targets=(config.max_pages, config.time_limit),
            stop=self.stop,
            stopping=lambda: self._stop_reason or ("exhausted" if self._over() else ""),
            wake=self._wake.set,
            # A worker's seeds and stops go through its coordinator, which sees every worker.
            admit=pipeline.admit if self._part is None else None,
            worker="local" if self._part is None else f"worker {self._part.index}",
        )

    async def _no_time_left(self, db: MetadataDB) -> CrawlOutcome:
        """A resumed crawl whose time limit its earlier runs used up: stop before the first
        request and before a new WARC file is opened; the reports are written again."""
        assert self._config.time_limit is not None
        warn_no_time_left(self._config.time_limit, self.stats.elapsed_before)
        self._stop_reason = "time"
        if self._part is None:
            # Replay may have appended to the index, which the crawl's writer sorts at its end.
            CdxjWriter(self._config.out / "index.cdxj").close()
            with Reporter(
                self._config.out, db, self.stats, scope=scope_of(self._config.scope)
            ) as reporter:
                await reporter.write(ended=True)
        return CrawlOutcome(self.stats, "time")

    def _listen(
        self, loop: asyncio.AbstractEventLoop, pipeline: Pipeline
    ) -> threading.Thread | None:
        """A worker reads its inbox on a thread; a lone crawler answers signals instead."""
        if self._part is None:
            self._interrupts = Interrupts(loop, self.stop, lambda: self._stop_reason)
            self._interrupts.install()
            return None
        return Inbox(self._part, pipeline, self._wake, self.stop).listen(loop)

    def _over(self) -> bool:
        """The scheduler has ended: no ticket follows, and no seed may be added."""
        return self._seam is not None and self._seam.over

    async def _crawl(
        self,
        frontier: Frontier,
        pipeline: Pipeline,
        progress: Progress,
        reporter: Reporter | None,
        steer: tuple[Steering, ControlServer],
    ) -> None:
        config = self._config
        seam = self._seam = LocalSeam(
            config,
            frontier,
            stats=self.stats,
            admitter=pipeline.admitter,
            gate=self._gate,
            wake=self._wake,
            stop=self.stop,
            stopping=lambda: self._stop_reason,
            part=self._part,
        )
        fetching = build_fetcher(config, connections=config.concurrency)
        async with fetching as fetcher, asyncio.TaskGroup() as group:
            group.create_task(progress.run(self._ending))
            group.create_task(steer[0].tick(self._ending, steer[1]))
            if reporter is not None:
                group.create_task(self._report_loop(reporter))
            elif self._db is not None:  # a --workers worker: commit for the coordinator's
                group.create_task(self._commit_loop(self._db))  # interim reports
            loop = CrawlLoop(
                seam,
                pipeline,
                self.stats,
                max_retries=config.politeness.max_retries,
                is_sitemap=pipeline.is_sitemap,
                on_fault=self._fail,
                renderer=renderer_of(config),
            )
            tasks = [group.create_task(loop.run(fetcher)) for _ in range(config.concurrency)]
            try:
                await seam.schedule()
                if self._stop_reason in GRACEFUL:
                    # Give in-flight fetches a moment, then cut them off: they are recorded
                    # as not crawled and a resumed crawl fetches them again.
                    _, late = await asyncio.wait(tasks, timeout=STOP_GRACE)
                    for task in late:
                        task.cancel()
            finally:
                self._ending.set()  # the reporter and the painter end with the crawl
        await loop.aclose()  # every loop has ended: the browser and the plugins' thread too

    def _fail(self, exc: StoreError) -> None:
        """A store fault (full disk, lost folder) ends the crawl; what was written stays valid."""
        if self._fault is None:
            log.error("store fault, stopping: %s", exc)
            self._fault = exc
        self.stop("store error")

    async def _finish(
        self, warc: WarcStore, cdxj: CdxjWriter, db: MetadataDB, reporter: Reporter | None
    ) -> None:
        """Close every store even if some fail, so each keeps what it could write."""
        for step in (warc.close, cdxj.close, db.flush, lambda: end_recrawl(db)):
            try:
                step()
            except StoreError as exc:
                self._fail(exc)
        if reporter is not None:
            try:
                await reporter.write(ended=True)
                await reporter.write_charts()
            except StoreError as exc:
                self._fail(exc)
        try:
            db.close()  # joins the writer thread
        except StoreError as exc:
            self._fail(exc)

    async def _commit_loop(self, db: MetadataDB) -> None:
        """A worker's rows reach crawl.db at least once a report interval (a batch is
        otherwise written when full), so the coordinator's interim reports are that fresh."""
        while not await set_within(self._ending, self._config.report_interval):
            db.cut()

    async def _report_loop(self, reporter: Reporter) -> None:
        """Rewrite the reports on a fixed period until the crawl ends or they fail."""
        try:
            await reporter.every(self._config.report_interval, self._ending)
        except StoreError as exc:
            self._fail(exc)


def _call_soon(
    loop: asyncio.AbstractEventLoop, call: Callable[[StoreError], None], exc: StoreError
) -> None:
    """Run ``call(exc)`` on the loop's thread (from the database's writer thread)."""
    with contextlib.suppress(RuntimeError):  # the loop has closed: the crawl is over anyway
        loop.call_soon_threadsafe(call, exc)


__all__ = ["CrawlOutcome", "Crawler"]
