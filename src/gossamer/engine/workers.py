"""``gossamer crawl --workers N``: one coordinator process and N crawler processes.

The coordinator locks the folder, does the resume work a single crawler would (torn-tail
repair, WARC replay, backlog), starts the workers, forwards URLs between them (see
``partition.py``) and stops them all when every worker is idle with every forwarded batch
processed. Workers share ``crawl.db`` (SQLite serialises their batches) and write their own
WARC files (``gossamer-wK-...``) and CDXJ lines; at the end the coordinator merges the index,
recounts the statistics from the database and writes the reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import logging
import multiprocessing
import queue
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gossamer.config import CrawlConfig, config_from_json, config_to_json
from gossamer.engine.crawler import Crawler
from gossamer.engine.partition import Part
from gossamer.engine.resume import (
    CrawlLock,
    catch_up,
    holds_crawl,
    load_snapshot,
    rebuild_stats,
    repair_tails,
    save_snapshot,
)
from gossamer.errors import GossamerError, SeedError, StoreError
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, write_reports
from gossamer.store.cdxj import sort_cdxj

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


@dataclass(frozen=True, slots=True)
class WorkersOutcome:
    stats: CrawlStats
    reason: str


def _share(total: int | None, index: int, count: int) -> int | None:
    """Worker ``index``'s part of a page target (the parts add up to the target)."""
    if total is None:
        return None
    return total // count + (1 if index < total % count else 0)


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker if the coordinator dies (even by ``kill -9``): an
    orphaned worker would wait forever for the coordinator's stop, and a resume must find the
    folder free. Elsewhere this is a no-op."""
    name = ctypes.util.find_library("c")
    prctl = getattr(ctypes.CDLL(name), "prctl", None) if name else None
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def worker_main(  # noqa: PLR0917 - a process target takes its arguments positionally
    config_data: dict[str, Any],
    out: str,
    seeds: SeedList,
    index: int,
    count: int,
    up: multiprocessing.Queue[Any],
    inbox: multiprocessing.Queue[Any],
) -> None:
    """Entry point of one worker process."""
    _die_with_parent()
    # Ctrl-C reaches the whole process group; the coordinator decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    config = config_from_json(config_data, Path(out))
    config = replace(config, max_pages=_share(config.max_pages, index, count), progress=False)
    part = Part(index=index, count=count, up=up, inbox=inbox)
    error = ""
    snapshot: dict[str, object] = {}
    try:
        outcome = asyncio.run(Crawler(config, seeds, part=part).run())
        snapshot = outcome.stats.snapshot()
        snapshot["reason"] = outcome.reason
    except SeedError:
        snapshot = {"reason": "no seeds"}
    except GossamerError as exc:
        error = str(exc)
    up.put(("done", index, snapshot, error))


def _prepare(config: CrawlConfig, db: MetadataDB) -> None:
    """The single-process part of a resume, when the folder already holds a crawl."""
    out = config.out
    if not holds_crawl(out, db):
        return
    repair_tails(out)
    with contextlib.closing(CdxjWriter(out / "index.cdxj")) as cdxj:
        replayed = catch_up(config, db, cdxj)
    db.prepare_resume()
    log.warning("resuming crawl in %s with workers: %d records replayed", out, replayed)


def _merge_indexes(out: Path) -> None:
    target = out / "index.cdxj"
    with target.open("a", encoding="utf-8") as merged:
        for part in sorted(out.glob("index-w*.cdxj")):
            merged.write(part.read_text(encoding="utf-8"))
            part.unlink()
    sort_cdxj(target)


def run_workers(config: CrawlConfig, seeds: SeedList, count: int) -> WorkersOutcome:
    out = config.out
    started = time.time()
    with CrawlLock(out):
        db = MetadataDB(out / "crawl.db")
        try:
            _prepare(config, db)
            saved = load_snapshot(db)
        finally:
            db.close()
        context = multiprocessing.get_context("spawn")
        up: multiprocessing.Queue[Any] = context.Queue()
        inboxes: list[multiprocessing.Queue[Any]] = [context.Queue() for _ in range(count)]
        data = config_to_json(config)
        processes = [
            context.Process(
                target=worker_main,
                args=(data, str(out), seeds, k, count, up, inboxes[k]),
                name=f"gossamer-worker-{k}",
            )
            for k in range(count)
        ]
        for process in processes:
            process.start()

        def report() -> None:
            # A crash of the coordinator still leaves reports at most one interval old.
            with contextlib.closing(MetadataDB(out / "crawl.db")) as live:
                interim = rebuild_stats(live, saved, config.concurrency * count)
                write_reports(out, interim, live)

        reason, errors, snapshots = _coordinate(up, inboxes, count, config.report_interval, report)
        for process in processes:
            process.join()
        db = MetadataDB(out / "crawl.db")
        try:
            _merge_indexes(out)
            carried = {
                "skipped_robots": sum(int(s.get("skipped_robots", 0)) for s in snapshots),
                "skipped_other": sum(int(s.get("skipped_other", 0)) for s in snapshots),
                "duration_seconds": float((saved or {}).get("duration_seconds", 0.0))
                + time.time()
                - started,
            }
            stats = rebuild_stats(db, carried, config.concurrency * count)
            stats.started = time.time()
            write_reports(out, stats, db)
            save_snapshot(db, stats)
        finally:
            db.close()
    if errors:
        raise StoreError(errors[0])
    if stats.responses == 0 and reason == "exhausted":
        raise SeedError(f"bad seed: none of the {len(seeds.seeds)} seeds could be fetched")
    return WorkersOutcome(stats, reason)


class _Coordinator:
    """Forwards URL batches, tracks who is idle, and stops everyone at the end."""

    def __init__(self, inboxes: list[multiprocessing.Queue[Any]]) -> None:
        self._inboxes = inboxes
        count = len(inboxes)
        self.delivered = [0] * count
        self.idle = [False] * count
        self.done: dict[int, dict[str, Any]] = {}
        self.errors: list[str] = []
        self.stopping = ""

    def stop_all(self, why: str) -> None:
        if self.stopping:
            return
        self.stopping = why
        for k, inbox in enumerate(self._inboxes):
            if k not in self.done:
                inbox.put(("stop", why))

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "urls":
            _, dest, batch = message
            if dest in self.done:
                return  # that worker has finished (its page target): nothing to do
            self._inboxes[dest].put(("urls", batch))
            self.delivered[dest] += 1
            self.idle[dest] = False
        elif kind == "idle":
            _, k, processed = message
            # Idle for real only once it has processed every batch forwarded to it so far.
            self.idle[k] = processed == self.delivered[k]
        elif kind == "done":
            _, k, snapshot, error = message
            self.done[k] = snapshot
            self.idle[k] = True
            if error:
                self.errors.append(error)
                self.stop_all("store error")
        if not self.stopping and all(self.idle):
            self.stop_all("exhausted")

    def reason(self) -> str:
        reasons = {str(s.get("reason", "")) for s in self.done.values()}
        if self.stopping in ("", "exhausted") and "target" in reasons:
            return "target"
        return self.stopping or "exhausted"


def _coordinate(
    up: multiprocessing.Queue[Any],
    inboxes: list[multiprocessing.Queue[Any]],
    count: int,
    report_interval: float,
    report: Callable[[], None],
) -> tuple[str, list[str], list[dict[str, Any]]]:
    """Run the coordinator until every worker is done; returns (reason, errors, snapshots)."""
    coordinator = _Coordinator(inboxes)
    previous = {
        sig: signal.signal(sig, lambda *_: coordinator.stop_all("signal"))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    last_report = time.monotonic()
    try:
        while len(coordinator.done) < count:
            if time.monotonic() - last_report >= report_interval:
                with contextlib.suppress(StoreError):
                    report()
                last_report = time.monotonic()
            try:
                message = up.get(timeout=report_interval)
            except queue.Empty:
                continue
            coordinator.handle(message)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return coordinator.reason(), coordinator.errors, list(coordinator.done.values())
