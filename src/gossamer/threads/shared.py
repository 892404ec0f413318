"""What the crawler threads share besides the frontier: dedup, work accounting, collisions.

Data flow: admission (under the engine's store lock) -> **Outbox** (the seen-set and the
per-host budget, then the calling thread's list of new jobs) -> the shared frontier; the
**Tally** counts jobs not yet finished so the crawl knows when it is over, and the
**Ledger** notices a put handed out twice (the unsynchronised frontier's collision) before
its job could be fetched twice.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass

from gossamer.frontier import Admission, Job
from gossamer.frontier.seen import SeenSet

__all__ = ["Ledger", "Outbox", "Tally", "ThreadCounts", "Ticket"]


class Outbox:
    """The admitter's queue in the threaded engine: dedup here, the put comes later.

    Admission runs under the engine's store lock, so the seen-set needs no lock of its own;
    the jobs admitted are kept per thread and put on the shared frontier after the lock is
    released, so the frontier's own synchronisation is what the threads contend on.
    """

    def __init__(self) -> None:
        self._seen = SeenSet()
        self._admitted: Counter[str] = Counter()
        self._local = threading.local()

    def seen(self, url: str) -> bool:
        return url in self._seen

    def add(self, job: Job, *, host_budget: int | None = None) -> Admission:
        if not self._seen.add(job.url):
            return Admission.DUPLICATE
        if host_budget is not None:
            if self._admitted[job.host] >= host_budget:
                return Admission.OVER_BUDGET
            self._admitted[job.host] += 1
        self.mine().append(job)
        return Admission.QUEUED

    def mine(self) -> list[Job]:
        """The calling thread's admitted jobs not yet handed to the frontier."""
        jobs: list[Job] | None = getattr(self._local, "jobs", None)
        if jobs is None:
            jobs = self._local.jobs = []
        return jobs


class Tally:
    """Jobs admitted and not finished, and threads idle: when both say so, the crawl ends.

    A job counts from its admission until a thread is done with it (fetched, refused by
    robots.txt, or given up); putting it back for a busy host does not end it. The crawl is
    over when no job is left, or when every thread is idle and the frontier is empty: then
    the jobs still counted were lost by an unsynchronised frontier.
    """

    def __init__(self, threads: int, stop: threading.Event) -> None:
        self._lock = threading.Lock()
        self._threads = threads
        self.pending = 0
        self._idle: set[int] = set()
        self.over = stop  # the crawl's stop event: the end of the work is one way to stop
        self.exhausted = False

    def admitted(self, n: int) -> None:
        with self._lock:
            self.pending += n

    def finished(self) -> None:
        with self._lock:
            self.pending -= 1
            if self.pending <= 0:
                self.exhausted = True
                self.over.set()

    def busy(self, thread: int) -> None:
        if thread in self._idle:
            with self._lock:
                self._idle.discard(thread)

    def idle(self, thread: int, frontier_size: int) -> bool:
        """Note the thread found nothing to take; True when the crawl is over."""
        with self._lock:
            self._idle.add(thread)
            if self.pending <= 0 or (len(self._idle) >= self._threads and frontier_size == 0):
                self.exhausted = True
                self.over.set()
        return self.over.is_set()


class Ticket:
    """One put of a job on the shared frontier: a job put back is a new ticket, so a ticket
    taken twice is exactly a frontier handing one put out twice."""

    __slots__ = ("job", "taken")

    def __init__(self, job: Job) -> None:
        self.job = job
        self.taken = False


class Ledger:
    """Marks each ticket taken, so one taken twice is counted and dropped, not fetched."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.taken_twice = 0

    def claim(self, ticket: Ticket) -> bool:
        with self._lock:
            if ticket.taken:
                self.taken_twice += 1
                return False
            ticket.taken = True
            return True


@dataclass(slots=True)
class ThreadCounts:
    """One crawler thread's own counters (no lock: only that thread writes them)."""

    puts: int = 0
    takes: int = 0
    requeued: int = 0  # jobs put back because their host was busy or resting
    held: int = 0  # jobs kept in the thread's own list because the frontier was full
