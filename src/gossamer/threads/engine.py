"""The threaded engine: ``gossamer crawl --engine threads``, seeds 000 and 004 made real.

Data flow: seeds -> admission -> shared frontier (one of six synchronisation strategies) ->
N crawler threads (``threads/crawler.py``) -> the same stores as the async engine (WARC
files, CDXJ, ``crawl.db``, reports), so ``index``, ``rank``, ``search`` and ``--resume``
(with the default engine) work on its folders; with ``--pipeline`` also bounded buffers ->
index builders -> the Indexed URL Tree (``threads/builders.py``, ``threads/urltree.py``).

What is shared and how: the frontier under the chosen strategy; the host gate (one lock,
``threads/politeness.py``); one store lock over the recorder, the WARC and CDXJ writers,
the statistics and ``crawl.db`` (the recorder and the stores are the async engine's and not
thread-safe; parsing a page runs under it too, which costs little since the GIL lets one
thread parse at a time anyway). ``reports/threads.json`` adds the figures of the study:
strategy, threads, puts, takes, jobs put back, jobs taken twice and links lost.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gossamer.config import CrawlConfig
from gossamer.crawling.fetching import build_fetcher
from gossamer.crawling.folder import CrawlLock
from gossamer.crawling.limits import remaining
from gossamer.crawling.recording import Recording
from gossamer.crawling.reports import report_now
from gossamer.crawling.scope import scope_of
from gossamer.crawling.verdict import judge
from gossamer.errors import StoreError
from gossamer.fetch.fetcher import Fetcher
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.threads.crawler import CrawlerThread, PageSink, Shared
from gossamer.threads.frontiers import DEFAULT_CAPACITY, make_frontier
from gossamer.threads.politeness import HostGate
from gossamer.threads.shared import Ledger, Outbox, Tally, Ticket

__all__ = ["ThreadOptions", "ThreadedOutcome", "run_threaded"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ThreadOptions:
    """The threaded engine's settings (flags only: a resume uses the default engine)."""

    threads: int = 16
    sync: str = "monitor"
    capacity: int = DEFAULT_CAPACITY
    # CPython's thread switch interval during the crawl (None: leave it, 5 ms by default).
    # Shorter switches interleave the threads more finely, closer to threads on many cores.
    switch_interval: float | None = None


@dataclass(slots=True)
class ThreadedOutcome:
    stats: CrawlStats
    reason: str
    figures: dict[str, object] = field(default_factory=dict)


@contextlib.contextmanager
def _restored_interval(interval: float) -> Iterator[None]:
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _fetcher_factory(config: CrawlConfig) -> Callable[[], Fetcher]:
    """Each crawler thread's fetcher, built as every engine builds its own (site rules,
    proxies and cookies included), with two connections."""
    return lambda: build_fetcher(config, connections=2)


def run_threaded(
    config: CrawlConfig,
    seeds: SeedList,
    options: ThreadOptions,
    *,
    page_sink: PageSink | None = None,
) -> ThreadedOutcome:
    """Crawl with ``options.threads`` threads over the chosen frontier, to the reports.

    ``page_sink`` hears of every fetched page on its crawler thread (the seed 000 pipeline's
    buffers).
    """
    out = config.out
    started = time.monotonic()
    interval = sys.getswitchinterval()
    if options.switch_interval is not None:
        sys.setswitchinterval(options.switch_interval)
    with CrawlLock(out), _restored_interval(interval):
        db = MetadataDB(out / "crawl.db")
        stats = CrawlStats(concurrency=options.threads)
        try:
            outcome = _crawl(config, seeds, options, db, stats, page_sink=page_sink)
        finally:
            try:
                db.close()
            except StoreError as exc:
                log.error("store fault while closing: %s", exc)
    outcome.figures["seconds"] = round(time.monotonic() - started, 3)
    _write_figures(out, outcome.figures)
    return outcome


def _crawl(
    config: CrawlConfig,
    seeds: SeedList,
    options: ThreadOptions,
    db: MetadataDB,
    stats: CrawlStats,
    *,
    page_sink: PageSink | None,
) -> ThreadedOutcome:
    outbox = Outbox()
    rec = Recording(config, stats, db, outbox)
    gate = HostGate(
        delay=config.politeness.delay, crawl_delay_cap=config.politeness.crawl_delay_cap
    )
    rec.host_state = gate.state
    frontier = make_frontier(options.sync, options.capacity)
    stop = threading.Event()
    shared = Shared(
        frontier=frontier,
        gate=gate,
        outbox=outbox,
        tally=Tally(options.threads, stop),
        ledger=Ledger(),
        store=threading.Lock(),
        stop=stop,
        backoff=rec.backoff,
        record=rec.page,
        record_robots=rec.robots,
        fall_back=rec.admitter.fall_back,
        is_sitemap=lambda job: rec.recorder.purpose(job) == "sitemap",
        reserve_page=rec.reserve_page,
        release_page=rec.release_page,
        skipped_robots=rec.skipped_robots,
        make_fetcher=_fetcher_factory(config),
        page_sink=page_sink,
    )
    fault: list[StoreError] = []

    def on_fault(exc: StoreError) -> None:
        fault.append(exc)
        shared.stop.set()

    db.start_writer(on_fault=on_fault)
    for seed in seeds.seeds:
        rec.admitter.admit(seed.urls[0], 0, None, fallbacks=seed.urls[1:])
    first = list(outbox.mine())
    outbox.mine().clear()
    shared.tally.admitted(len(first))
    threads = [CrawlerThread(i, shared) for i in range(options.threads)]
    # Seeds beyond the frontier's capacity wait in the first thread's own list.
    seeded = 0
    for job in first:
        if frontier.put(Ticket(job)):
            seeded += 1
        else:
            threads[0].held.append(job)
    reason = _run_threads(threads, shared, config.time_limit)
    frontier.close()
    rec.close()
    faults = [t.fault for t in threads if t.fault is not None]
    if fault or any(isinstance(f, StoreError) for f in faults):
        reason = "store error"
    for other in faults:
        if not isinstance(other, StoreError):
            raise other
    stats.concurrency = options.threads
    stats.deferred = sorted(rec.unavailable)  # left to another run, as the other engines say
    report_now(config.out, stats, db, final=True, scope=scope_of(config.scope))  # report.html too
    if fault:
        raise fault[0]
    judge(stats, reason)
    return ThreadedOutcome(stats, reason, _figures(options, threads, shared, seeded))


def _run_threads(threads: list[CrawlerThread], shared: Shared, time_limit: float | None) -> str:
    """Start the threads, wait for the end, the time limit or Ctrl-C; why it stopped."""
    for thread in threads:
        thread.start()
    for _ in threads:
        shared.ready.acquire()  # every thread releases once, ready or failed
    reason = "exhausted"
    try:
        if not shared.stop.wait(remaining(time_limit, 0.0)):  # the run's own limit
            reason = "time"
    except KeyboardInterrupt:
        reason = "signal"
    if reason == "exhausted" and not shared.tally.exhausted:
        reason = "target"  # or a store fault, which the caller tells apart
    shared.stop.set()
    shared.frontier.close()
    for thread in threads:
        thread.join()
    return reason


def _figures(
    options: ThreadOptions, threads: list[CrawlerThread], shared: Shared, seeded: int
) -> dict[str, object]:
    puts = seeded + sum(t.counts.puts for t in threads)
    takes = sum(t.counts.takes for t in threads)
    held = sum(len(t.held) for t in threads)
    left = len(shared.frontier)
    twice = shared.ledger.taken_twice
    # Every job put was taken, is still there, or was overwritten by a racing put.
    lost = max(0, puts - (takes - twice) - left)
    return {
        "engine": "threads",
        "strategy": options.sync,
        "threads": options.threads,
        "puts": puts,
        "takes": takes,
        "requeued": sum(t.counts.requeued for t in threads),
        "held_when_full": sum(t.counts.held for t in threads),
        "left_in_frontier": left + held,
        "taken_twice": twice,
        "lost": lost,
        "collisions": twice + lost,
        "unfinished_jobs": shared.tally.pending,
    }


def _write_figures(out: Path, figures: dict[str, object]) -> None:
    path = out / "reports" / "threads.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
