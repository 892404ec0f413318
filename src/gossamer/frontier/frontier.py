"""The Mercator-style frontier: per-host queues, politeness timing and domain-diverse order.

A host is a host name: every scheme and port of it share one politeness slot (in-flight
limit, delay, Crawl-delay, backoff), while robots.txt is kept per origin as RFC 9309 says.
Hosts that may send a request now sit in a heap keyed by how many pages they have had, so the
crawl spreads over many domains (fewest-fetched first); hosts waiting out their delay sit in a
heap keyed by the time they become ready. A crawl that runs to its end (no page target, no
time limit: the order cannot change what it fetches, only when it ends) keys the ready heap
by the work a host has left instead, most first, after every host's first page: the
longest-processing-time rule for the makespan, so the host with the longest chain of
one-at-a-time requests never waits behind hosts with little to do (issue 29). A host is in
at most one heap and leaves it while it has its in-flight limit reached or a robots.txt
fetch under way. A host's delay and in-flight
limit are the crawl's, or those of the ``[[site]]`` tables that match it (``sites``: the
``SiteRules`` resolver, read once per host); a host whose robots.txt names a Crawl-delay is
asked one request at a time. Every method is
synchronous and takes ``now`` from an injected monotonic clock, so the timing is deterministic
in tests; the engine's dispatcher owns the waiting. A host's timing (delay, Crawl-delay,
backoff, next allowed time) moves only through the politeness rule (``politeness.py``).
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from gossamer.frontier import politeness
from gossamer.frontier.hosts import HostState, Job, OriginRobots, RobotsState
from gossamer.frontier.seen import SeenSet
from gossamer.robots import RobotsRules
from gossamer.stats import CrawlStats
from gossamer.urls import host_of, origin_of, path_query_of, robots_url

if TYPE_CHECKING:
    from gossamer.sites import SiteRules

WINDOW = 64  # queued jobs per host kept in memory; the rest wait on disk
_FIRST = -(1 << 62)  # the rank below every host that has fetched something


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
        sites: SiteRules | None = None,
        to_the_end: bool = False,
    ) -> None:
        self._delay = delay
        self._to_the_end = to_the_end  # order ready hosts by work left (module docstring)
        self._start = politeness.HostTiming(delay)  # every new host's timing, but a site's
        self._max_per_host = max_per_host
        self._sites = sites if sites else None  # None: no [[site]] table, every host alike
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

    def visiting(self) -> frozenset[str]:
        """Hosts "in visit" (seed 001): a job of theirs is in flight, or handed out by
        :meth:`pop_ready` and not yet :meth:`done`."""
        return frozenset(key for key, host in self._hosts.items() if host.in_flight)

    def host(self, key: str) -> HostState:
        state = self._hosts.get(key)
        if state is None:
            state = self._hosts[key] = self._new_host(key)
        return state

    def _new_host(self, key: str) -> HostState:
        delay, limit = self._site(key)
        timing = self._start if delay == self._delay else politeness.HostTiming(delay)
        return HostState(key, timing=timing, site_delay=delay, max_in_flight=limit)

    def _site(self, key: str) -> tuple[float, int]:
        """The host's delay and in-flight limit: its [[site]] tables', else the crawl's."""
        if self._sites is None:
            return self._delay, self._max_per_host
        site = self._sites.for_host(key)
        return site.delay, site.max_per_host

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
        if host.given_up and self._given_up(host, job):
            return Admission.QUEUED
        if host.backlog or len(host.queue) >= self._window:
            host.backlog += 1
            self._pending += 1
            self._schedule(host)
            return Admission.SPILLED
        self._enqueue(job)
        return Admission.QUEUED

    def restore(
        self,
        seen: Iterable[str],
        backlog: dict[str, int],
        admitted: Mapping[str, int] | None = None,
    ) -> None:
        """Resume: mark ``seen`` URLs as seen, count each host's jobs waiting on disk and
        what each host has used of its budget (``admitted``: URLs queued in earlier runs)."""
        self._seen.extend(seen)
        for key, count in (admitted or {}).items():
            self.host(key).admitted = count
        for key, count in backlog.items():
            host = self.host(key)
            host.backlog += count
            self._pending += count
            self._schedule(host)

    def _given_up(self, host: HostState, job: Job) -> bool:
        """Whether ``job``'s origin was given up (then it is counted as refused by robots)."""
        robots = host.origins.get(origin_of(job.url))
        if robots is None or robots.state is not RobotsState.GIVEN_UP:
            return False
        self._stats.skipped_robots += 1
        return True

    def retry(self, job: Job) -> None:
        """Queue a URL again (429/503 retries), bypassing the seen-set."""
        self._enqueue(job)

    def _enqueue(self, job: Job) -> None:
        host = self.host(job.host)
        if host.given_up and self._given_up(host, job):
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
            next_time = host.timing.next_time
            if next_time > now:
                # With a free slot, a host waits in the ready heap while a request of its own
                # is in flight; that request's end (or a backoff) may have moved it later.
                # Straight to the sleeping heap: judged against a later clock it could come
                # back to the ready heap and be popped again within this same pass.
                heapq.heappush(self._sleeping, (next_time, next(self._seq), host.key))
                host.heap = "sleeping"
                continue
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
        """The host's next job: its origin's robots.txt first if unknown, else the next URL
        the rules allow. None when the host must wait (a robots.txt fetch under way)."""
        while host.queue or host.backlog:
            if not host.queue:
                self._refill(host)
                continue
            job = host.queue[0]
            origin = origin_of(job.url)
            robots = host.robots(origin)
            if robots.state is RobotsState.READY and now >= robots.expires:
                robots.state = RobotsState.UNKNOWN
            if robots.state is RobotsState.UNKNOWN:
                robots.state = RobotsState.FETCHING
                host.robots_fetching += 1
                return Job(url=robots_url(origin), host=host.key, robots=True)
            if robots.state is RobotsState.FETCHING:
                return None
            host.queue.popleft()
            self._pending -= 1
            if robots.state is RobotsState.READY and (
                robots.rules is None or robots.rules.is_allowed(path_query_of(job.url))
            ):
                return job
            self._stats.skipped_robots += 1  # disallowed, or its origin was given up
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
        host.pages += not job.robots
        host.timing = politeness.settle(
            host.timing, fault=not success, rest=backoff, now=self._clock()
        )
        self._schedule(host)

    def robots_rules(self, origin: str) -> RobotsRules | None:
        """The valid rules of ``origin``, if known: a robots.txt redirect landing there reuses
        them instead of fetching the same robots.txt again."""
        host = self._hosts.get(host_of(origin))
        robots = host.origins.get(origin) if host is not None else None
        if robots is None or robots.state is not RobotsState.READY:
            return None
        return robots.rules if self._clock() < robots.expires else None

    def set_robots(self, origin: str, rules: RobotsRules, *, ttl: float | None = None) -> None:
        """Install ``origin``'s rules, valid for ``ttl`` seconds (default: ``robots_ttl``).

        A Crawl-delay applies to the whole host: the longest over its origins wins.
        """
        host = self.host(host_of(origin))
        robots = host.robots(origin)
        self._end_robots_fetch(host, robots)
        robots.rules = rules
        robots.state = RobotsState.READY
        robots.failures = 0
        robots.expires = self._clock() + (self._robots_ttl if ttl is None else ttl)
        crawl_delay = host.crawl_delay
        host.timing = politeness.with_crawl_delay(
            host.timing, crawl_delay, delay=host.site_delay, cap=self._crawl_delay_cap
        )
        # A Crawl-delay is a pause between one request and the next: one at a time, whatever
        # the host's limit (as a shared crawl always asks).
        host.max_in_flight = 1 if crawl_delay is not None else self._site(host.key)[1]
        self._schedule(host)

    def robots_unavailable(
        self, origin: str, *, give_up: bool = False, keep: bool = False
    ) -> list[Job] | None:
        """``origin``'s robots.txt answered 5xx or could not be fetched: wait, retry, give up.

        ``give_up`` skips the retries (the host cannot be connected to at all); ``keep`` never
        gives up (the fault was this machine's, not the host's). Returns the
        queued in-memory jobs of that origin when it is given up (their seed fallbacks may
        apply), else None. Jobs of a given-up origin still on disk are dropped as they load.
        """
        host = self.host(host_of(origin))
        robots = host.robots(origin)
        self._end_robots_fetch(host, robots)
        if not robots.failures:
            robots.deferred_at = self._clock()
        robots.failures += 1
        if not keep and (give_up or robots.failures > self._robots_retries):
            robots.state = RobotsState.GIVEN_UP
            host.given_up += 1
            kept: deque[Job] = deque()
            dropped: list[Job] = []
            for job in host.queue:
                (dropped if origin_of(job.url) == origin else kept).append(job)
            if dropped:
                host.queue = kept
            self._stats.skipped_robots += len(dropped)
            self._pending -= len(dropped)
            self._schedule(host)
            return dropped
        robots.state = RobotsState.UNKNOWN
        wait = politeness.robots_retry_wait(robots.failures, self._robots_retry_delay)
        host.timing = politeness.defer(host.timing, self._clock() + wait)
        self._schedule(host)
        return None

    def _end_robots_fetch(self, host: HostState, robots: OriginRobots) -> None:
        if robots.state is RobotsState.FETCHING:
            host.robots_fetching -= 1

    # -- a crawl that ends when its work ends ------------------------------------------------
    def deferred_only(self) -> bool:
        """True when nothing is in flight or ready and every waiting host waits only to retry
        an unavailable robots.txt: the crawl would idle for those retries alone."""
        if self._in_flight or self._ready:
            return False
        # A host whose work was dropped may still sit in the heap until its time comes.
        waiting = [host for _, _, key in self._sleeping if (host := self._hosts[key]).has_work]
        return bool(waiting) and all(host.deferred for host in waiting)

    def deferral_ends(self, grace: float) -> float:
        """When the crawl stops waiting for deferred origins (``politeness.deferral_end``, the
        rule a shared crawl's LEASE script mirrors)."""
        waiting = (
            (robots.deferred_at, host.next_time)
            for host in self._hosts.values()
            if host.has_work
            for robots in host.origins.values()
            if robots.deferred
        )
        return politeness.deferral_end(waiting, grace, self._clock())

    def drop_deferred(self) -> list[str]:
        """Stop waiting for unavailable robots.txt files: forget the queued jobs of every
        deferred host (the crawl database still lists them as unfetched, so a resume retries
        them) and return the deferred origins."""
        origins = self.deferred_origins()
        for host in self._hosts.values():
            if host.deferred and host.has_work:
                self._pending -= len(host.queue) + host.backlog
                host.queue.clear()
                host.backlog = 0
        return origins

    def deferred_origins(self) -> list[str]:
        """Origins waiting to retry an unavailable robots.txt, with work queued behind them."""
        return sorted(
            origin
            for host in self._hosts.values()
            if host.has_work
            for origin, robots in host.origins.items()
            if robots.deferred
        )

    def _schedule(self, host: HostState) -> None:
        """Put the host in the heap that matches its state, if it has work and a free slot."""
        if host.heap or not host.has_work or host.in_flight >= host.max_in_flight:
            return
        if host.robots_fetching:
            return
        next_time = host.timing.next_time
        if next_time > self._clock():
            heapq.heappush(self._sleeping, (next_time, next(self._seq), host.key))
            host.heap = "sleeping"
        else:
            heapq.heappush(self._ready, (self.rank(host), next(self._seq), host.key))
            host.heap = "ready"

    def rank(self, host: HostState) -> int:
        """The host's place among ready hosts, lowest first: fewest pages fetched (a
        domain-diverse crawl), or, in a crawl that runs to its end, most work left, every
        host's first page before any (it tells how much work the host has)."""
        if not self._to_the_end:
            return host.fetched
        left = len(host.queue) + host.backlog
        return -left if host.pages else _FIRST - left
