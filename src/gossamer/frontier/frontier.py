"""The Mercator-style frontier: per-host queues, politeness timing and domain-diverse order.

Hosts that may send a request now sit in a heap keyed by how many pages they have had, so the
crawl spreads over many domains (fewest-fetched first); hosts waiting out their delay sit in a
heap keyed by the time they become ready. A host is in at most one heap and leaves it while it
has ``max_per_host`` requests in flight. Every method is synchronous and takes ``now`` from an
injected monotonic clock, so the timing is deterministic in tests; the engine's dispatcher owns
the waiting.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Protocol

from gossamer.frontier.hosts import HostState, Job, RobotsState
from gossamer.frontier.seen import SeenSet
from gossamer.robots import RobotsRules
from gossamer.stats import CrawlStats

WINDOW = 64  # queued jobs per host kept in memory; the rest wait on disk


class Admission(Enum):
    DUPLICATE = "duplicate"
    QUEUED = "queued"  # in the host's in-memory window
    SPILLED = "spilled"  # on disk only, loaded when the host's window runs dry
    OVER_BUDGET = "over-budget"  # new, but its host already had its share of URLs


class Backlog(Protocol):
    """Where spilled jobs wait: the crawl database's ``urls`` table."""

    def load(self, host: str, after: int, limit: int) -> list[tuple[int, Job]]:
        """Up to ``limit`` spilled jobs of ``host`` with row id above ``after``, in id order."""
        ...


class NoBacklog:
    """A backlog for tests and tools that never spill (window large enough)."""

    def load(self, host: str, after: int, limit: int) -> list[tuple[int, Job]]:
        return []


def _path_of(url: str) -> str:
    """Path plus query of an absolute canonical URL, as robots.txt rules match it."""
    start = url.find("/", url.find("//") + 2)
    return url[start:] if start >= 0 else "/"


class Frontier:
    """Owns the seen-URL set and every host's queue and politeness state."""

    def __init__(
        self,
        *,
        delay: float,
        max_per_host: int,
        crawl_delay_cap: float,
        robots_ttl: float,
        robots_retry_delay: float,
        robots_retries: int,
        stats: CrawlStats,
        clock: Callable[[], float],
        backlog: Backlog | None = None,
        window: int = WINDOW,
    ) -> None:
        self._delay = delay
        self._max_per_host = max_per_host
        self._crawl_delay_cap = crawl_delay_cap
        self._robots_ttl = robots_ttl
        self._robots_retry_delay = robots_retry_delay
        self._robots_retries = robots_retries
        self._stats = stats
        self._clock = clock
        self._backlog: Backlog = backlog or NoBacklog()
        self._window = window
        self._hosts: dict[str, HostState] = {}
        self._seen = SeenSet()
        self._ready: list[tuple[int, int, str]] = []
        self._sleeping: list[tuple[float, int, str]] = []
        self._seq = itertools.count()
        self._pending = 0  # queued jobs over all hosts
        self._in_flight = 0

    # -- queries --------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        return self._pending

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def exhausted(self) -> bool:
        return self._pending == 0 and self._in_flight == 0

    @property
    def active_hosts(self) -> int:
        return sum(1 for h in self._hosts.values() if h.has_work or h.in_flight)

    def host(self, key: str) -> HostState:
        state = self._hosts.get(key)
        if state is None:
            state = self._hosts[key] = HostState(key=key, delay=self._delay)
        return state

    def seen(self, url: str) -> bool:
        return url in self._seen

    @property
    def seen_count(self) -> int:
        return len(self._seen)

    # -- adding work ----------------------------------------------------------------------
    def add(self, job: Job, *, host_budget: int | None = None) -> Admission:
        """Queue a URL the first time it is seen.

        A host keeps at most ``window`` jobs in memory; beyond that (and for as long as it has
        jobs on disk, so the order stays first-in first-out) new jobs are SPILLED: the caller
        records them in the backlog and the frontier counts them. A host that has already
        been given ``host_budget`` URLs takes no more (the last stop for spider traps).
        """
        if not self._seen.add(job.url):
            return Admission.DUPLICATE
        host = self.host(job.host)
        if host_budget is not None:
            if host.admitted >= host_budget:
                return Admission.OVER_BUDGET
            host.admitted += 1
        if host.robots_state is RobotsState.GIVEN_UP:
            self._stats.skipped_robots += 1
            return Admission.QUEUED
        if host.backlog or len(host.queue) >= self._window:
            host.backlog += 1
            self._pending += 1
            self._schedule(host)
            return Admission.SPILLED
        self._enqueue(job)
        return Admission.QUEUED

    def restore(self, seen: Iterable[str], backlog: dict[str, int]) -> None:
        """Resume: mark ``seen`` URLs as seen and count each host's jobs waiting on disk."""
        self._seen.extend(seen)
        for key, count in backlog.items():
            host = self.host(key)
            host.backlog += count
            self._pending += count
            self._schedule(host)

    def retry(self, job: Job) -> None:
        """Queue a URL again (429/503 retries), bypassing the seen-set."""
        self._enqueue(job)

    def _enqueue(self, job: Job) -> None:
        host = self.host(job.host)
        if host.robots_state is RobotsState.GIVEN_UP:
            self._stats.skipped_robots += 1
            return
        host.queue.append(job)
        self._pending += 1
        self._schedule(host)

    # -- handing out work -----------------------------------------------------------------
    def pop_ready(self) -> Job | None:
        """The next job whose host may be contacted now, or None."""
        now = self._clock()
        while self._sleeping and self._sleeping[0][0] <= now:
            _, _, key = heapq.heappop(self._sleeping)
            host = self._hosts[key]
            host.heap = ""
            self._schedule(host)
        while self._ready:
            _, _, key = heapq.heappop(self._ready)
            host = self._hosts[key]
            host.heap = ""
            job = self._take(host, now)
            if job is not None:
                host.in_flight += 1
                self._in_flight += 1
                self._schedule(host)
                return job
        return None

    def _refill(self, host: HostState) -> None:
        loaded = self._backlog.load(host.key, host.loaded_upto, self._window)
        if not loaded:
            # The disk holds fewer than counted (rows fetched in an earlier run): trust it.
            self._pending -= host.backlog
            host.backlog = 0
            return
        for row_id, job in loaded:
            host.queue.append(job)
            host.loaded_upto = max(host.loaded_upto, row_id)
        host.backlog -= len(loaded)
        if host.backlog < 0:
            self._pending -= host.backlog
            host.backlog = 0

    def _take(self, host: HostState, now: float) -> Job | None:
        if host.robots_state is RobotsState.READY and now >= host.robots_expires:
            host.robots_state = RobotsState.UNKNOWN
        if not host.queue and host.backlog:
            self._refill(host)
        if host.robots_state is RobotsState.UNKNOWN:
            if not host.queue:
                return None
            host.robots_state = RobotsState.FETCHING
            return Job(url=host.key + "/robots.txt", host=host.key, robots=True)
        if host.robots_state is not RobotsState.READY:
            return None
        rules = host.rules
        while host.queue or host.backlog:
            if not host.queue:
                self._refill(host)
                continue
            job = host.queue.popleft()
            self._pending -= 1
            if rules is None or rules.is_allowed(_path_of(job.url)):
                return job
            self._stats.skipped_robots += 1
        return None

    def next_wake(self) -> float | None:
        """Seconds until a sleeping host becomes ready, or None if none is sleeping."""
        if not self._sleeping:
            return None
        return max(0.0, self._sleeping[0][0] - self._clock())

    # -- completing work ------------------------------------------------------------------
    def done(self, job: Job, *, success: bool, backoff: float = 0.0) -> None:
        """Release a job's slot; its host may not be contacted again before its delay passes.

        ``backoff`` (Retry-After, or the engine's choice after repeated faults) lengthens this
        one wait; ``success`` resets the run of consecutive errors.
        """
        host = self._hosts[job.host]
        host.in_flight -= 1
        self._in_flight -= 1
        host.fetched += 1
        host.errors_in_row = 0 if success else host.errors_in_row + 1
        wait = max(host.delay, backoff)
        host.next_time = max(host.next_time, self._clock() + wait)
        self._schedule(host)

    def set_robots(self, key: str, rules: RobotsRules) -> None:
        host = self.host(key)
        host.rules = rules
        host.robots_state = RobotsState.READY
        host.robots_failures = 0
        host.robots_expires = self._clock() + self._robots_ttl
        if rules.crawl_delay is not None:
            host.delay = max(self._delay, min(rules.crawl_delay, self._crawl_delay_cap))
        self._schedule(host)

    def robots_unavailable(self, key: str, *, give_up: bool = False) -> list[Job] | None:
        """robots.txt answered 5xx or could not be fetched: wait, retry, and finally give up.

        ``give_up`` skips the retries (the host cannot be connected to at all). Returns the
        queued jobs that were dropped when the host is given up, else None.
        """
        host = self.host(key)
        host.robots_failures += 1
        if give_up or host.robots_failures > self._robots_retries:
            host.robots_state = RobotsState.GIVEN_UP
            while host.backlog:
                self._refill(host)
            dropped = list(host.queue)
            self._stats.skipped_robots += len(dropped)
            self._pending -= len(dropped)
            host.queue.clear()
            return dropped
        host.robots_state = RobotsState.UNKNOWN
        wait = self._robots_retry_delay * 2 ** (host.robots_failures - 1)
        host.next_time = max(host.next_time, self._clock() + wait)
        self._schedule(host)
        return None

    def _schedule(self, host: HostState) -> None:
        """Put the host in the heap that matches its state, if it has work and a free slot."""
        if host.heap or not host.has_work or host.in_flight >= self._max_per_host:
            return
        if host.robots_state is RobotsState.FETCHING:
            return
        if host.next_time > self._clock():
            heapq.heappush(self._sleeping, (host.next_time, next(self._seq), host.key))
            host.heap = "sleeping"
        else:
            heapq.heappush(self._ready, (host.fetched, next(self._seq), host.key))
            host.heap = "ready"
