"""Per-host politeness and per-origin robots.txt rules, shared by the crawler threads.

Data flow: a crawler thread takes a job from the shared frontier -> **the gate** (may this
host name be contacted now? which rules hold for this origin?) -> fetch -> the gate again
(the host's next allowed time, after its delay, Crawl-delay or backoff).

This is not what the study varies: whatever the frontier's synchronisation, the gate is one
lock over a table of :class:`~gossamer.frontier.hosts.HostState`, the same state the async
engine keeps, moved by the same politeness rule (``frontier/politeness.py``: delay,
Crawl-delay, backoff, next allowed time). A host name has one slot (one request in flight
over all its origins) and one next allowed time. robots.txt is fetched by the thread holding
its host's slot, so no second thread can fetch it or a page of that host meanwhile. As in
the async engine (``engine/pipeline.py``), a robots.txt redirect is not followed to a
robots.txt already known (that one's rules are reused), and one that ends on another
origin's robots.txt installs its answer for that origin too: no robots.txt is fetched twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from gossamer.fetch import FetchResult
from gossamer.frontier import politeness
from gossamer.frontier.hosts import HostState
from gossamer.robots import RobotsRules, lasting
from gossamer.urls import canonical_link, host_of, origin_of, path_query_of

__all__ = ["HostGate"]


class HostGate:
    """One lock over every host's slot, next allowed time and robots.txt rules."""

    def __init__(
        self,
        *,
        delay: float,
        crawl_delay_cap: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._delay = delay
        self._cap = crawl_delay_cap
        self._start = politeness.HostTiming(delay)  # every new host's timing
        self._clock = clock
        self._lock = threading.Lock()
        self._hosts: dict[str, HostState] = {}
        self._rules: dict[str, RobotsRules] = {}

    def _host(self, key: str) -> HostState:
        host = self._hosts.get(key)
        if host is None:
            host = self._hosts[key] = HostState(key=key, timing=self._start)
        return host

    def claim(self, key: str) -> float:
        """Take the host's slot: 0.0 if taken, else the seconds until it may be free."""
        with self._lock:
            host = self._host(key)
            if host.in_flight:
                return max(host.delay, 0.001)  # busy: at best free after its delay
            wait = host.next_time - self._clock()
            if wait > 0:
                return wait
            host.in_flight = 1
            return 0.0

    def release(
        self, key: str, *, requested: bool, success: bool = True, backoff: float = 0.0
    ) -> None:
        """Give the slot back; after a request the host rests for its delay (or backoff)."""
        with self._lock:
            host = self._hosts[key]
            host.in_flight = 0
            if not requested:
                return
            host.fetched += 1
            host.timing = politeness.settle(
                host.timing, fault=not success, rest=backoff, now=self._clock()
            )

    def state(self, key: str) -> HostState:
        """The host's state, for the backoff policy (read by the slot's holder only)."""
        with self._lock:
            return self._host(key)

    def rules(self, origin: str) -> RobotsRules | None:
        with self._lock:
            return self._rules.get(origin)

    def knows_robots(self, url: str) -> bool:
        """Whether ``url`` is a robots.txt whose rules are installed (not to be fetched)."""
        if path_query_of(url) != "/robots.txt":
            return False
        with self._lock:
            return origin_of(url) in self._rules

    def set_rules(self, origin: str, host_key: str, rules: RobotsRules) -> None:
        """Install an origin's rules; a Crawl-delay (capped) lengthens its host's delay."""
        with self._lock:
            self._install(origin, host_key, rules)

    def set_robots(
        self, origin: str, host_key: str, rules: RobotsRules, final: FetchResult
    ) -> RobotsRules:
        """Install the rules a robots.txt fetch left for ``origin`` (``final``: its last hop);
        the rules installed. A redirect to a robots.txt already known (not followed) takes
        that one's rules; a lasting answer reached by a redirect to another origin's
        robots.txt is that origin's answer too."""
        with self._lock:
            location = final.header("Location") if final.is_redirect else None
            target = canonical_link(location, final.url) if location else None
            reused = self._rules.get(origin_of(target)) if target else None
            if reused is not None:
                rules = reused
            self._install(origin, host_key, rules)
            landed = origin_of(final.url)
            if (
                reused is None
                and landed != origin
                and path_query_of(final.url) == "/robots.txt"
                and lasting(final.status, final.error)
            ):
                self._install(landed, host_of(landed), rules)
            return rules

    def _install(self, origin: str, host_key: str, rules: RobotsRules) -> None:
        self._rules[origin] = rules
        host = self._host(host_key)
        host.robots(origin).rules = rules
        host.timing = politeness.with_crawl_delay(
            host.timing, host.crawl_delay, delay=self._delay, cap=self._cap
        )
