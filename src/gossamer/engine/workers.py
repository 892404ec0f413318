"""``gossamer crawl --workers N``: one coordinator process and N crawler processes.

The coordinator locks the folder and starts the workers first (``spawning.start_workers``;
the command line may have started them already, before it was parsed), so that their imports
overlap its own set-up: the resume work a single crawler would do (the same ``resume.level``:
torn-tail repair, WARC replay, backlog), the page target's first grants, the fleet. Then it
orders them to crawl, forwards URLs between them (``engine/coordinator.py``, ``partition.py``)
and stops them all when every worker is idle with every forwarded batch processed. Workers
share ``crawl.db`` (SQLite serialises their batches) and write their own WARC files
(``gossamer-wK-...``) and CDXJ lines; at the end the coordinator merges the index, recounts
the statistics from the database and writes the reports.

Each worker talks to the coordinator through a pipe of its own, and the coordinator waits on
those pipes and on the workers' process sentinels together. A worker that dies (killed, or of a
fault) is so noticed at once: the coordinator stops the others, brings crawl.db level with what
every worker wrote to its WARC files, and ends with one error line; the folder then resumes
like after any other stop.

The whole crawl is watched and steered through the coordinator's ``DIR/control.sock``
(``engine/fleet.py``): the fleet follows every worker's own control socket, and sends stops
and added seeds to the coordinator's loop, which waits on them with the workers' pipes. The
worker processes themselves are ``engine/worker.py``. A coordinator runs no crawler: only a
lone crawl imports ``engine/crawler.py`` (in ``crawl_here``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from gossamer import spawning
from gossamer.config import CrawlConfig, config_to_json
from gossamer.crawling.folder import CrawlLock, load_snapshot, save_snapshot
from gossamer.crawling.limits import remaining
from gossamer.crawling.reports import report_now
from gossamer.crawling.scope import scope_of
from gossamer.crawling.verdict import judge
from gossamer.engine.budget import PageBudget
from gossamer.engine.collector import crawl_collector
from gossamer.engine.coordinator import Coordinator, coordinate
from gossamer.engine.fleet import Fleet
from gossamer.engine.interrupts import finishing
from gossamer.engine.resume import (
    carry_runs,
    complete_note,
    holds_crawl,
    level,
    rebuild_stats,
)
from gossamer.engine.timelimit import time_used_up
from gossamer.errors import GossamerError, StoreError
from gossamer.monitor.charts import warm_in_background
from gossamer.monitor.series import Histogram
from gossamer.seeds import SeedList
from gossamer.spawning import FAILED, Orders, StartedWorker
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.store.cdxj import merge_worker_indexes

__all__ = ["FAILED", "WorkersOutcome", "crawl_here", "run_workers"]

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


def crawl_here(config: CrawlConfig, seeds: SeedList, early: Sequence[StartedWorker] = ()) -> str:
    """A crawl on this machine, in this process or in ``config.workers``, with the garbage
    collector tuned for it (``engine/collector.py``); why it stopped. ``early``: workers the
    command line started before it knew the crawl's settings (``cli.main``), used for this
    crawl or stopped."""
    with crawl_collector():
        if config.workers > 1:
            return run_workers(config, seeds, config.workers, early).reason
        for worker in early:
            worker.cancel()
        # Imported here: a coordinator runs no crawler of its own.
        from gossamer.engine.crawler import Crawler  # noqa: PLC0415

        return asyncio.run(Crawler(config, seeds).run()).reason


def run_workers(
    config: CrawlConfig, seeds: SeedList, count: int, early: Sequence[StartedWorker] = ()
) -> WorkersOutcome:
    """The crawl in ``count`` worker processes; ``early``: some already started."""
    out = config.out
    started = time.time()
    team = list(early[:count])
    try:
        with CrawlLock(out):
            # The workers first: their imports overlap the set-up below, and each fetches
            # only once ordered (``_run_processes``), after the folder is level.
            team += spawning.start_workers(range(len(team), count))
            # The end's report.html: its import (0.5 s) runs on a thread of its own now, not
            # once the workers crawl, when it would hold the GIL against the coordinator's
            # forwarding and its stop (a stop took 18 ms to reach the workers, not 2).
            warm_in_background()
            return _coordinated(config, seeds, team, started)
    finally:
        for worker in [*team, *early[count:]]:
            worker.cancel()  # each has ended by now, or was never ordered


def _coordinated(
    config: CrawlConfig, seeds: SeedList, team: list[StartedWorker], started: float
) -> WorkersOutcome:
    out = config.out
    count = len(team)
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
            config, seeds, (team, budget), (report, deadline), fleet.inbound
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
    workers: tuple[list[StartedWorker], PageBudget | None],
    ends: tuple[Callable[[], None], float | None],
    control: Connection,
) -> Coordinator:
    """Order the started workers to crawl, coordinate them until each is done or lost, and
    wait for them.

    ``ends``: what writes the interim reports, and the wall-clock time at which the time
    limit stops every worker (None without one)."""
    team, budget = workers
    count = len(team)
    report, deadline = ends
    allowances: list[int | None] = [None] * count
    if budget is not None:
        allowances = list(budget.first_grants())
    data = config_to_json(config)
    level = logging.getLogger().getEffectiveLevel()
    coordinator = Coordinator([worker.inbox for worker in team], budget)
    processes = [worker.process for worker in team]
    try:
        for k, worker in enumerate(team):
            worker.order(Orders(data, str(config.out), seeds, k, count, allowances[k], level))
        timers = (config.report_interval, report, deadline)
        coordinate(coordinator, [worker.up for worker in team], processes, timers, control)
    except BaseException:
        coordinator.stop_all("signal")  # those ordered stop; the others end at their orders'
        raise
    finally:
        for worker in team:
            worker.cancel()  # waited for: each ordered one has been told to stop
    return coordinator


def _finish(  # noqa: PLR0917 - the coordinator's whole state at the end, passed on once
    config: CrawlConfig,
    count: int,
    saved: dict[str, Any] | None,
    coordinator: Coordinator,
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


# The names the coordinator's unit tests know (tests/unit/engine/test_coordinator.py).
_Coordinator = Coordinator
