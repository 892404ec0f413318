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
from gossamer.engine.admission import Admitter
from gossamer.engine.pipeline import archive
from gossamer.engine.recorder import Recorder, note_robots
from gossamer.engine.reporter import report_now
from gossamer.engine.resume import CrawlLock
from gossamer.errors import SeedError, StoreError
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.frontier import Job
from gossamer.frontier.backoff import Backoff, Outcome
from gossamer.robots import RobotsRules, product_token
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from gossamer.threads.crawler import CrawlerThread, PageSink, Shared, robots_rules_of
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


class _Recording:
    """The store side of the threads: every method runs under the store lock."""

    def __init__(self, config: CrawlConfig, stats: CrawlStats, db: MetadataDB, outbox: Outbox):
        out = config.out
        self.stats = stats
        self.db = db
        self.warc = WarcStore(out / "warc", prefix="gossamer", max_file_bytes=config.warc_max_bytes)
        self.cdxj = CdxjWriter(out / "index.cdxj")
        self.product = product_token(config.fetch.user_agent)
        self.admitter = Admitter(config.scope, frontier=outbox, stats=stats, db=db)
        self.recorder = Recorder(
            admitter=self.admitter,
            stats=stats,
            db=db,
            product=self.product,
            respect_nofollow=config.politeness.respect_nofollow,
            max_redirects=config.fetch.max_redirects,
            sitemaps=config.scope.sitemaps,
        )
        self.backoff = Backoff(
            max_retries=config.politeness.max_retries,
            max_backoff=config.politeness.max_backoff,
        )
        self.gate: HostGate | None = None  # set by the engine
        self.target = config.max_pages
        self.in_flight_pages = 0

    def page(self, job: Job, result: FetchResult) -> Outcome:
        if result.error in LOCAL_FAULTS:
            self.stats.record_error(result.error or "local_fault")
            return self.backoff.after_local_fault(job.retries)
        location = archive(self.warc, self.cdxj, job, result, self.recorder.purpose(job))
        if result.status:  # the report's response times and HTML/PDF counts, as the async engine
            self.stats.record_response(job.host, result.elapsed)
        if self.recorder.record_page(job, result, location):
            self.stats.record_stored(result.content_type)
        assert self.gate is not None
        return self.backoff.after_response(
            result, self.gate.state(job.host), job.retries, time.time()
        )

    def robots(self, job: Job, hops: list[FetchResult]) -> RobotsRules:
        answer = None
        for hop in hops:
            if hop.status:
                self.stats.record_response(job.host, hop.elapsed)
            if hop.error not in LOCAL_FAULTS:
                location = archive(self.warc, self.cdxj, job, hop, "robots")
                answer = self.recorder.record_robots(job, hop, location) or answer
        final = hops[-1]
        rules = robots_rules_of(final, answer.rules if answer else None, self.product)
        if answer is not None:
            note_robots(self.stats, job.host, answer)
        else:
            status = final.status or final.error
            self.stats.host(job.host).robots_status = f"disallow-all (robots.txt {status})"
        return rules

    def reserve_page(self) -> bool | None:
        """Room for one more page fetch under the target: True; None once it is reached;
        False while fetches in flight may still reach it (they can end in a 404)."""
        if self.target is None:
            return True
        if self.stats.pages >= self.target:
            return None
        if self.stats.pages + self.in_flight_pages >= self.target:
            return False
        self.in_flight_pages += 1
        return True

    def release_page(self) -> None:
        self.in_flight_pages -= 1

    def skipped_robots(self) -> None:
        self.stats.skipped_robots += 1

    def close(self) -> None:
        for step in (self.warc.close, self.cdxj.close, self.db.flush):
            try:
                step()
            except StoreError as exc:
                log.error("store fault while closing: %s", exc)


@contextlib.contextmanager
def _restored_interval(interval: float) -> Iterator[None]:
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _fetcher_factory(config: CrawlConfig) -> Callable[[], Fetcher]:
    limits = FetchLimits(
        connect_timeout=config.fetch.connect_timeout,
        read_timeout=config.fetch.read_timeout,
        total_timeout=config.fetch.total_timeout,
        max_body=config.fetch.max_body,
        max_decoded=config.fetch.max_decoded,
        keep_types=config.fetch.keep_types,
    )
    resolve = tuple(parse_resolve(entry) for entry in config.resolve)

    def make() -> Fetcher:
        return Fetcher(
            user_agent=config.fetch.user_agent,
            limits=limits,
            resolve=resolve,
            allow_private=config.fetch.allow_private,
            connections=2,
            max_per_ip=config.politeness.max_per_ip,
            ca_file=config.fetch.ca_file,
        )

    return make


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
    rec = _Recording(config, stats, db, outbox)
    gate = HostGate(
        delay=config.politeness.delay, crawl_delay_cap=config.politeness.crawl_delay_cap
    )
    rec.gate = gate
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
    report_now(config.out, stats, db, final=True)  # with reports/report.html
    if fault:
        raise fault[0]
    if stats.pages == 0 and reason == "exhausted":
        raise SeedError("bad seed: nothing was crawled (see reports/stats.txt)")
    return ThreadedOutcome(stats, reason, _figures(options, threads, shared, seeded))


def _run_threads(threads: list[CrawlerThread], shared: Shared, time_limit: float | None) -> str:
    """Start the threads, wait for the end, the time limit or Ctrl-C; why it stopped."""
    for thread in threads:
        thread.start()
    for _ in threads:
        shared.ready.acquire()  # every thread releases once, ready or failed
    reason = "exhausted"
    try:
        if not shared.stop.wait(time_limit):
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
