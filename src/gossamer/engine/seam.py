"""The in-process side of the scheduling seam: one crawl's frontier, or one ``--workers``
process's share of it.

Data flow: the frontier (``frontier/frontier.py``) -> **the scheduler** -> tickets -> the crawl
loops (``crawling/loop.py``) -> **page_done / robots_done** -> the frontier. One scheduler task
is the only caller of ``pop_ready``: it sleeps on the crawl's wake event (set when the frontier
changes) or until the next host's delay runs out, so nothing polls and the loops never race
for a host. It owns what ends the handing out: the page target (``crawling/limits.page_room``,
or the share the coordinator grants a worker: ``Part.want``), an empty frontier, a stop, and
the unavailable-robots.txt policy's end (RFC 9309: past ``robots_wait``, hosts waiting only for
such a retry are left to a resume, ``frontier/politeness.deferral_end``).

The robots.txt policy lives here too: a lasting answer installs its rules (a redirect that
ends on another origin's robots.txt gives that origin the same rules; one to a robots.txt
already known takes its rules: ``engine/pipeline.py``); an unavailable one is
asked again later, then deferred; an unreachable origin is given up and its seeds fall back
to their next form (https -> http); a fault of this machine never gives an origin up.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from gossamer.config import CrawlConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.limits import page_room
from gossamer.crawling.seam import PageDone, Ticket
from gossamer.engine.partition import Part
from gossamer.engine.steering import FetchGate
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier import Frontier, Job
from gossamer.frontier import politeness as rule
from gossamer.frontier.politeness import Answer
from gossamer.robots import UNCONNECTABLE, RobotsRules, lasting
from gossamer.stats import CrawlStats
from gossamer.urls import origin_of, path_query_of

__all__ = ["LocalSeam"]

log = logging.getLogger(__name__)

PART_FLUSH_SECONDS = 0.2  # longest a worker holds links for other workers while busy
_ANY = rule.HostTiming(0.0)  # a local fault's pause does not depend on the host
_LAST = 1 << 63  # the rank of the crawl's last None tickets: after every real one


class LocalSeam:
    """Tickets from the in-memory frontier, for ``loops`` crawl loops."""

    def __init__(
        self,
        config: CrawlConfig,
        frontier: Frontier,
        *,
        stats: CrawlStats,
        admitter: Admitter,
        gate: FetchGate,
        wake: asyncio.Event,
        stop: Callable[[str], None],
        stopping: Callable[[], str],
        part: Part | None = None,
    ) -> None:
        self._config = config
        self._frontier = frontier
        self._stats = stats
        self._admitter = admitter
        self._gate = gate
        self._wake = wake
        self._stop = stop
        self._stopping = stopping
        self._part = part
        self._loops = config.concurrency
        # Tickets wait here for a free loop in the frontier's order (``Frontier.rank``), not
        # first come first served: a host ranked first goes before those handed out earlier.
        self._tickets: asyncio.PriorityQueue[tuple[int, int, Ticket | None]] = (
            asyncio.PriorityQueue(maxsize=self._loops)
        )
        self._order = itertools.count()
        self._out: set[int] = set()  # tickets handed out and not yet back (by id)
        self._dispatched_pages = 0  # page tickets handed out and not yet back
        self._last_flush = 0.0
        self._max_backoff = config.politeness.max_backoff
        self.over = False  # the scheduler has ended: no ticket will follow

    # -- handing out ------------------------------------------------------------------------
    async def lease(self) -> Ticket | None:
        return (await self._tickets.get())[2]

    async def schedule(self) -> None:
        """Hand out tickets until the crawl ends, then one None to each loop."""
        try:
            await self._schedule()
        finally:
            self.over = True
            for _ in range(self._loops):
                await self._tickets.put((_LAST, next(self._order), None))

    async def _schedule(self) -> None:
        frontier, part, gate = self._frontier, self._part, self._gate
        # A worker's share of the target is granted by its coordinator, which stops the crawl.
        target = self._config.max_pages if part is None else None
        while not self._stopping():
            room = page_room(self._stats.pages, self._dispatched_pages, target)
            if room is None:
                self._stop("target")
                return
            if part is not None:
                room = part.want(self._stats.pages, self._dispatched_pages)
            job = frontier.pop_ready() if room and not gate.paused else None
            if job is not None:
                rank = frontier.rank(frontier.host(job.host))
                await self._tickets.put((rank, next(self._order), self.ticket(job)))
                continue
            if frontier.exhausted and part is None:
                return
            self._wake.clear()
            wait = frontier.next_wake() if room and not gate.paused else None
            if frontier.deferred_only():
                left = (
                    frontier.deferral_ends(self._config.politeness.robots_wait) - time.monotonic()
                )
                if left <= 0:
                    self._defer(frontier.drop_deferred())
                    continue
                wait = left if wait is None else min(wait, left)
            if part is not None:
                if frontier.exhausted:
                    # Nothing here; wait for URLs from other workers or the coordinator's stop.
                    part.report_idle(self._stats.pages)
                elif time.monotonic() - self._last_flush > PART_FLUSH_SECONDS:
                    part.flush()
                    self._last_flush = time.monotonic()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    def ticket(self, job: Job) -> Ticket:
        """Hand out ``job``, popped from the frontier, as a ticket to be given back."""
        if not job.robots:
            self._dispatched_pages += 1
        ticket = Ticket(job)
        self._out.add(id(ticket))
        return ticket

    def _defer(self, origins: list[str]) -> None:
        self._stats.deferred.extend(origins)
        log.warning(
            "leaving %d origin(s) whose robots.txt is unavailable to a resume: %s",
            len(origins),
            " ".join(origins[:5]),
        )

    def fetching(self) -> AbstractAsyncContextManager[None]:
        return self._gate.fetching()  # a pause holds the request here

    # -- taking back ----------------------------------------------------------------------
    def _back(self, ticket: Ticket) -> bool:
        """Mark the ticket returned; False if it was already."""
        if id(ticket) not in self._out:
            return False
        self._out.discard(id(ticket))
        if not ticket.job.robots:
            self._dispatched_pages -= 1
        self._wake.set()
        return True

    async def page_done(self, ticket: Ticket, done: PageDone) -> None:
        if not self._back(ticket):
            return
        job, frontier = ticket.job, self._frontier
        answer = done.answer
        if answer is None:
            frontier.done(job, success=True)
            return
        local = answer.answer is Answer.LOCAL
        timing = _ANY if local else frontier.host(job.host).timing
        wait = rule.rest(timing, answer, self._max_backoff)
        if done.retry:
            frontier.retry(job.again())
        frontier.done(job, success=local, backoff=wait)

    async def release(self, ticket: Ticket) -> None:
        if ticket.job.robots:
            if self._back(ticket):
                self._frontier.robots_unavailable(origin_of(ticket.job.url))
                self._frontier.done(ticket.job, success=False)
            return
        await self.page_done(ticket, PageDone(rule.Outcome(Answer.FAULT), False, False))

    # -- robots.txt -----------------------------------------------------------------------
    def rules_for(self, url: str) -> RobotsRules | None:
        return self._frontier.robots_rules(origin_of(url))

    def knows_robots(self, url: str) -> bool:
        return (
            path_query_of(url) == "/robots.txt"
            and self._frontier.robots_rules(origin_of(url)) is not None
        )

    async def robots_done(self, ticket: Ticket, rules: RobotsRules, final: FetchResult) -> None:
        if not self._back(ticket):
            return
        job, frontier = ticket.job, self._frontier
        origin = origin_of(job.url)
        if final.error in LOCAL_FAULTS:
            # This machine ran out of something; the host said nothing. Ask again later, and
            # never give the origin up for it.
            frontier.robots_unavailable(origin, keep=True)
            self._stats.host(job.host).robots_status = f"deferred ({final.error})"
        elif not lasting(final.status, final.error):
            self._robots_unavailable(job, origin, final)
            frontier.done(job, success=False)
            return
        else:
            frontier.set_robots(origin, rules)
            landed = origin_of(final.url)
            if landed != origin and path_query_of(final.url) == "/robots.txt":
                # The redirect ended on another origin's robots.txt: that is its answer too,
                # so it is never fetched a second time while these rules are valid.
                frontier.set_robots(landed, rules)
        frontier.done(job, success=True)

    def _robots_unavailable(self, job: Job, origin: str, final: FetchResult) -> None:
        """Unreachable (RFC 9309 2.3.1.4): assume everything is disallowed, ask again later;
        an origin that cannot be connected to at all is given up at once, and its seeds
        fall back to their next form (https -> http)."""
        status = final.error or final.status  # a 200 cut short says why: bad_encoding
        dropped = self._frontier.robots_unavailable(origin, give_up=final.error in UNCONNECTABLE)
        host = self._stats.host(job.host)
        if dropped is None:
            host.robots_status = f"deferred (robots.txt {status})"
        else:
            host.robots_status = f"given up ({status})"
            for lost in dropped:
                self._admitter.fall_back(lost)
