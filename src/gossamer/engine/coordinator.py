"""The coordinator's message loop of ``gossamer crawl --workers N``: what it does with each
worker's messages, and how it waits for them.

Data flow: every worker's pipe up and process sentinel, and the fleet's control channel
(``engine/fleet.py``) -> **coordinate** -> **Coordinator**: URL batches and added seeds
forwarded to the worker owning their host (``partition.owner``), grants of the page target
(``engine/budget.py``), who is idle, and the stop of every worker at the end (no URL left
anywhere, the target reached, the time limit, a stop request, a worker lost). The processes
themselves are started and ordered by ``engine/workers.py``.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import pickle
import signal
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from gossamer.crawling.reports import report_period
from gossamer.engine.budget import PageBudget
from gossamer.engine.interrupts import drain, woken_by_signals
from gossamer.engine.partition import owner
from gossamer.errors import StoreError
from gossamer.spawning import FAILED

__all__ = ["Coordinator", "coordinate"]


class Coordinator:
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


def coordinate(
    coordinator: Coordinator,
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
    open_links = set(links)
    sentinels = {process.sentinel: k for k, process in enumerate(processes)}
    interval, report, deadline = timers
    period = interval  # grows when a report takes long (``report_period``)
    last_report = time.monotonic()
    with woken_by_signals() as woken:
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
            # message, an exit or a signal.
            waited: list[Connection | int] = [*open_links, *sentinels, control, woken]
            ready = multiprocessing.connection.wait(waited, timeout=timeout)
            if woken in ready:
                drain(woken)
                coordinator.stop_all("signal")
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


def _receive(coordinator: Coordinator, link: Connection, open_links: set[Connection]) -> None:
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
