"""``gossamer crawl --workers N``: one coordinator process and N crawler processes.

The coordinator locks the folder, does the resume work a single crawler would (the same
``resume.level``: torn-tail repair, WARC replay, backlog), starts the workers, forwards URLs
between them (see ``partition.py``) and stops them all when every worker is idle with every
forwarded batch processed. Workers share ``crawl.db`` (SQLite serialises their batches) and
write their own WARC files (``gossamer-wK-...``) and CDXJ lines; at the end the coordinator
merges the index, recounts the statistics from the database and writes the reports.

Each worker talks to the coordinator through a pipe of its own, and the coordinator waits on
those pipes and on the workers' process sentinels together. A worker that dies (killed, or of a
fault) is so noticed at once: the coordinator stops the others, brings crawl.db level with what
every worker wrote to its WARC files, and ends with one error line; the folder then resumes
like after any other stop.

The whole crawl is watched and steered through the coordinator's ``DIR/control.sock``
(``engine/fleet.py``): the fleet follows every worker's own control socket, and sends stops
and added seeds to the coordinator's loop, which waits on them with the workers' pipes. The
worker processes themselves are ``engine/worker.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import pickle
import signal
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from gossamer import spawning
from gossamer.config import CrawlConfig, config_to_json
from gossamer.crawling.folder import CrawlLock, load_snapshot, save_snapshot
from gossamer.crawling.limits import remaining
from gossamer.crawling.reports import report_now, report_period
from gossamer.crawling.scope import scope_of
from gossamer.crawling.verdict import judge
from gossamer.engine.budget import PageBudget
from gossamer.engine.collector import crawl_collector
from gossamer.engine.crawler import Crawler
from gossamer.engine.fleet import Fleet
from gossamer.engine.interrupts import finishing
from gossamer.engine.partition import owner
from gossamer.engine.resume import (
    carry_runs,
    complete_note,
    holds_crawl,
    level,
    rebuild_stats,
)
from gossamer.engine.timelimit import time_used_up
from gossamer.engine.worker import FAILED, worker_main
from gossamer.errors import GossamerError, StoreError
from gossamer.monitor.charts import warm_in_background
from gossamer.monitor.series import Histogram
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.store.cdxj import merge_worker_indexes

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkersOutcome:
    stats: CrawlStats
    reason: str


def _prepare(config: CrawlConfig, db: MetadataDB) -> int | None:
    """The single-process part of a resume, when the folder already holds a crawl: level it
    with its WARC files (the records replayed; None for a new crawl); each worker then
    restores its own hosts (``resume.restore_part``)."""
    if not holds_crawl(config.out, db):
        return None
    return level(config, db).outcome.replayed


def crawl_here(config: CrawlConfig, seeds: SeedList) -> str:
    """A crawl on this machine, in this process or in ``config.workers``, with the garbage
    collector tuned for it (``engine/collector.py``); why it stopped."""
    with crawl_collector():
        if config.workers > 1:
            return run_workers(config, seeds, config.workers).reason
        return asyncio.run(Crawler(config, seeds).run()).reason


def run_workers(config: CrawlConfig, seeds: SeedList, count: int) -> WorkersOutcome:
    out = config.out
    started = time.time()
    warm_in_background()  # the end's report.html, its import done while the workers crawl
    with CrawlLock(out):
        db = MetadataDB(out / "crawl.db")
        try:
            replayed = _prepare(config, db)
            saved = load_snapshot(db)
            spent = time_used_up(config, db, saved, config.concurrency * count)
            if spent is not None:
                return WorkersOutcome(spent, "time")
            so_far = None
            if replayed is not None:
                so_far = rebuild_stats(db, saved, config.concurrency * count)
                note = complete_note(config, db, so_far.pages)
                if note:  # complete: as a lone crawl, it queues nothing
                    log.warning("%s", note)
                    report_now(
                        out, so_far, db, scope=scope_of(config.scope)
                    )  # the reports again, the figures as they were
                    return WorkersOutcome(so_far, "exhausted")
                log.warning("resuming crawl in %s with workers: %d records replayed", out, replayed)
            budget = _budget(config, 0 if so_far is None else so_far.pages, count)
        finally:
            db.close()

        visiting: Callable[[], Collection[str]] = frozenset  # the fleet's, once it runs

        def report() -> None:
            # A crash of the coordinator still leaves reports at most one interval old.
            with contextlib.closing(MetadataDB(out / "crawl.db")) as live:
                interim = rebuild_stats(live, saved, config.concurrency * count)
                report_now(out, interim, live, visiting=visiting(), scope=scope_of(config.scope))

        before = float((saved or {}).get("duration_seconds", 0.0))
        targets = (config.max_pages, config.time_limit)
        progress = config.progress and sys.stderr.isatty()
        with Fleet(out, count, targets=targets, elapsed_before=before, progress=progress) as fleet:
            visiting = fleet.visiting
            left = remaining(config.time_limit, before)
            deadline = None if left is None else started + left
            coordinator = _run_processes(
                config, seeds, (count, budget), (report, deadline), fleet.inbound
            )
            with finishing():  # a signal now would lose the merged reports and the summary
                stats = _finish(config, count, saved, coordinator, started, fleet)
    if coordinator.errors:
        if coordinator.failed:
            raise GossamerError(
                f"{coordinator.errors[0]}; the crawl stopped and everything written is kept:"
                f" continue it with --resume {out}"
            )
        raise StoreError(coordinator.errors[0])
    reason = coordinator.reason()
    judge(stats, reason)
    return WorkersOutcome(stats, reason)


def _budget(config: CrawlConfig, stored: int, count: int) -> PageBudget | None:
    """The page target still to reach after the ``stored`` pages of earlier runs, to be
    granted to the workers; None without one."""
    if config.max_pages is None:
        return None
    return PageBudget(max(0, config.max_pages - stored), count)


def _run_processes(
    config: CrawlConfig,
    seeds: SeedList,
    workers: tuple[int, PageBudget | None],
    ends: tuple[Callable[[], None], float | None],
    control: Connection,
) -> _Coordinator:
    """Start the workers, coordinate them until each is done or lost, and wait for them.

    ``ends``: what writes the interim reports, and the wall-clock time at which the time
    limit stops every worker (None without one)."""
    count, budget = workers
    report, deadline = ends
    allowances: list[int | None] = [None] * count
    if budget is not None:
        allowances = list(budget.first_grants())
    context = spawning.context()
    links = [context.Pipe(duplex=False) for _ in range(count)]  # (coordinator's end, worker's)
    inboxes: list[multiprocessing.Queue[Any]] = [context.Queue() for _ in range(count)]
    data = config_to_json(config)
    level = logging.getLogger().getEffectiveLevel()
    processes = [
        context.Process(
            target=worker_main,
            args=(
                data,
                str(config.out),
                seeds,
                k,
                count,
                links[k][1],
                inboxes[k],
                allowances[k],
                level,
            ),
            name=f"gossamer-worker-{k}",
        )
        for k in range(count)
    ]
    for process in processes:
        process.start()
    for _, sending in links:
        sending.close()  # each worker holds its own: the pipe ends when the worker does
    coordinator = _Coordinator(inboxes, budget)
    try:
        readings = [reading for reading, _ in links]
        timers = (config.report_interval, report, deadline)
        _coordinate(coordinator, readings, processes, timers, control)
    except BaseException:
        coordinator.stop_all("signal")
        raise
    finally:
        for process in processes:
            process.join()
        for reading, _ in links:
            reading.close()
    return coordinator


def _finish(  # noqa: PLR0917 - the coordinator's whole state at the end, passed on once
    config: CrawlConfig,
    count: int,
    saved: dict[str, Any] | None,
    coordinator: _Coordinator,
    started: float,
    fleet: Fleet,
) -> CrawlStats:
    """Merge the indexes, level the database if a worker died, recount, write the reports
    (``report.html`` too); the fleet's last status then has the figures of stats.json."""
    out = config.out
    snapshots = list(coordinator.done.values())
    db = MetadataDB(out / "crawl.db")
    try:
        merge_worker_indexes(out)
        if coordinator.failed:
            # Its last batch of rows never reached crawl.db; its WARC records did.
            level(config, db)
        duration = float((saved or {}).get("duration_seconds", 0.0)) + time.time() - started
        carried = carry_runs(saved, snapshots, duration)
        stats = rebuild_stats(db, carried, config.concurrency * count)
        stats.started = time.time()
        stats.deferred = sorted({str(o) for s in snapshots for o in s.get("deferred", [])})
        _observed(stats, snapshots)
        stats.timeline = fleet.timeline_now()
        # The snapshot first: its duration is stats.json's, not later by report.html's drawing
        # (which recover, resume and merge would otherwise count as crawl time).
        save_snapshot(db, stats)
        report_now(out, stats, db, final=True, scope=scope_of(config.scope))
    finally:
        db.close()
    fleet.finish(stats)
    return stats


def _observed(stats: CrawlStats, snapshots: list[dict[str, Any]]) -> None:
    """What only the workers' crawl loops saw (response times, HTML and PDF pages, fetches
    under way at once: their peaks added), which the rows of crawl.db do not give."""
    for snapshot in snapshots:
        stats.latency.add(Histogram.from_json(snapshot.get("fetch_seconds")))
        stats.html_pages += int(snapshot.get("html_pages", 0))
        stats.pdf_pages += int(snapshot.get("pdf_pages", 0))
        stats.max_in_flight += int(snapshot.get("max_in_flight", 0))


class _Coordinator:
    """Forwards URL batches, tracks who is idle, and stops everyone at the end."""

    def __init__(
        self, inboxes: list[multiprocessing.Queue[Any]], budget: PageBudget | None = None
    ) -> None:
        self._inboxes = inboxes
        self._budget = budget
        count = len(inboxes)
        self.delivered = [0] * count
        self.idle = [False] * count
        self.done: dict[int, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.stopping = ""
        self.failed = False  # a worker died or failed: the crawl stops, resumable

    def stop_all(self, why: str) -> None:
        if self.stopping:
            return
        self.stopping = why
        for k, inbox in enumerate(self._inboxes):
            if k not in self.done:
                inbox.put(("stop", why))

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind in ("urls", "seeds"):
            _, dest, batch = message
            if dest in self.done:
                return  # that worker has finished (its page target): nothing to do
            self._inboxes[dest].put((kind, batch))
            self.delivered[dest] += 1
            self.idle[dest] = False
        elif kind == "idle":
            _, k, processed, grants, unused = message
            # Idle for real only once it has processed every batch forwarded to it so far
            # (and seen every grant: one it had not would come back in its next idle).
            self.idle[k] = processed == self.delivered[k]
            if self._budget is not None:
                self.idle[k] = self.idle[k] and self._budget.current(k, grants)
                self._grant(self._budget.give_back(k, unused))
        elif kind == "ask":
            _, k, grants, full = message
            if self._budget is not None:
                self._grant([(k, self._budget.ask(k, grants, full))])
        elif kind == "stop-request":  # through the control channel (engine/fleet.py)
            self.stop_all(message[1])
        elif kind == "added":  # seeds added live: each to the worker owning its host, as
            for forms in message[1]:  # forwards are, with its other forms (https -> http)
                self.handle(("seeds", owner(forms[0], len(self._inboxes)), [tuple(forms)]))
        elif kind == "done":
            _, k, snapshot, error = message
            self.done[k] = snapshot
            self.idle[k] = True
            if error:
                self.errors.append(error)
                self.failed = self.failed or snapshot.get("reason") == FAILED
                self.stop_all("worker failed" if self.failed else "store error")
        if not self.stopping and self._budget is not None and self._budget.reached(self.idle):
            self.stop_all("target")
        if not self.stopping and all(self.idle):
            self.stop_all("exhausted")

    def _grant(self, grants: list[tuple[int, int]]) -> None:
        for k, pages in grants:
            if pages and k not in self.done:
                self._inboxes[k].put(("grant", pages))

    def lost(self, k: int, how: str) -> None:
        """Worker ``k`` ended without saying "done": killed, or dead of a fault."""
        if k in self.done:
            return
        self.done[k] = {}
        self.idle[k] = True
        self.failed = True
        self.errors.append(f"worker {k} {how}")
        # Nobody reads its inbox any more: never wait at exit for what is queued there.
        self._inboxes[k].cancel_join_thread()
        self.stop_all("worker failed")

    def reason(self) -> str:
        reasons = {str(s.get("reason", "")) for s in self.done.values()}
        if self.stopping in ("", "exhausted") and "target" in reasons:
            return "target"
        return self.stopping or "exhausted"


def _coordinate(
    coordinator: _Coordinator,
    links: Sequence[Connection],
    processes: Sequence[BaseProcess],
    timers: tuple[float, Callable[[], None], float | None],
    control: Connection,
) -> None:
    """Run the coordinator until every worker is done or lost.

    It waits on every worker's pipe and process sentinel at once, and on ``control`` (stops
    and seeds from the control channel): a worker that ends without saying "done" (killed, or
    dead of a fault) is noticed at once, never waited for. ``timers``: the interval of the
    interim reports, what writes them, and the time limit's deadline (wall clock): when it
    passes, every worker is stopped with the reason "time".
    """
    previous = {
        sig: signal.signal(sig, lambda *_: coordinator.stop_all("signal"))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    open_links = set(links)
    sentinels = {process.sentinel: k for k, process in enumerate(processes)}
    interval, report, deadline = timers
    period = interval  # grows when a report takes long (``report_period``)
    last_report = time.monotonic()
    try:
        while len(coordinator.done) < len(processes):
            if time.monotonic() - last_report >= period:
                started = time.monotonic()
                with contextlib.suppress(StoreError):
                    report()
                last_report = time.monotonic()
                period = report_period(interval, last_report - started)
            timeout = period
            if deadline is not None:
                if time.time() >= deadline:
                    coordinator.stop_all("time")
                else:
                    timeout = min(timeout, deadline - time.time())
            # The timeouts are the report timer and the deadline; every other wake-up is a
            # message or an exit.
            waited: list[Connection | int] = [*open_links, *sentinels, control]
            ready = multiprocessing.connection.wait(waited, timeout=timeout)
            for link in ready:
                if isinstance(link, Connection):
                    _receive(coordinator, link, open_links)
            for sentinel in ready:
                if isinstance(sentinel, int) and sentinel in sentinels:
                    k = sentinels.pop(sentinel)
                    while links[k] in open_links and links[k].poll():
                        _receive(coordinator, links[k], open_links)  # what it said before
                    if k not in coordinator.done:
                        processes[k].join()
                        coordinator.lost(k, _how(processes[k].exitcode))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _receive(coordinator: _Coordinator, link: Connection, open_links: set[Connection]) -> None:
    try:
        message = link.recv()
    except (EOFError, OSError, pickle.UnpicklingError):
        open_links.discard(link)  # the worker has gone; its sentinel tells how
        return
    coordinator.handle(message)


def _how(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"ended without finishing (exit status {code})"
