"""A shared crawl's side of the scheduling seam: tickets from the Redis frontier.

Data flow: Redis (``distributed/frontier.py``) -> the worker's rounds (``rounds.py``: leases
in a pool) -> **RedisSeam.lease** -> the crawl loop (``crawling/loop.py``) -> **page_done /
robots_done** -> the rounds' outbox -> a STEP that moves the host's timing (the Lua mirror of
``frontier/politeness.py``) and queues the page's links through the shared seen-set.

A host is leased to one worker at a time. A robots.txt is fetched under the lease of the page
waiting behind it: the ticket is then that robots.txt, its answer goes to Redis for every
worker (``robots_cache``), and the page waits its host's turn again. An unavailable robots.txt
(5xx, unreachable) sends the page back to wait its origin's next attempt
(``politeness.robots_retry_wait``), up to ``robots_retries`` times; when only such hosts are
left past ``robots_wait``, LEASE answers "deferred" and the crawl ends as one process does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from contextlib import AbstractAsyncContextManager
from typing import Literal

from gossamer.config import CrawlConfig
from gossamer.crawling.recording import Recording
from gossamer.crawling.seam import PageDone, Ticket
from gossamer.distributed import robots_cache
from gossamer.distributed.frontier import (
    Completion,
    Deferred,
    Finished,
    Halted,
    Lease,
    RedisFrontier,
)
from gossamer.distributed.links import LinkBuffer
from gossamer.distributed.patience import Patience
from gossamer.distributed.rounds import Rounds
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, Outcome, robots_retry_wait
from gossamer.robots import RobotsRules, lasting, lasting_answer
from gossamer.stats import CrawlStats
from gossamer.urls import host_of, origin_of, path_query_of, robots_url

__all__ = ["RedisSeam"]

log = logging.getLogger(__name__)

RULES_KEPT = 600.0  # seconds a worker keeps an origin's parsed rules before asking Redis again
_FAULT = Outcome(Answer.FAULT)
_OK = Outcome(Answer.OK)


class RedisSeam:
    """Tickets from the shared frontier for one worker's crawl loops."""

    def __init__(
        self,
        front: RedisFrontier,
        name: str,
        config: CrawlConfig,
        *,
        stats: CrawlStats,
        recording: Recording,
        links: LinkBuffer,
        patience: Patience,
    ) -> None:
        self.front = front
        self._name = name
        self._config = config
        self._stats = stats
        self._recording = recording
        self._links = links
        self._patience = patience
        self.started = time.monotonic()
        self.reason = "finished"
        self.done = asyncio.Event()
        self.offset = 0.0  # Redis's clock minus ours, to sleep until a host's time
        self.rounds = Rounds(
            front,
            concurrency=config.concurrency,
            patience=patience,
            on_lost=lambda host: stats.record_error("lease_lost", host),
            clock_offset=lambda: self.offset,
        )
        # Parsed rules of lasting robots.txt answers, by origin, until they expire: a page
        # then costs no Redis read and no parse of its origin's robots.txt.
        self._rules_cache: dict[str, tuple[RobotsRules, float]] = {}

    @property
    def tokens(self) -> dict[str, str]:
        """host -> token of every lease this worker holds (the heartbeat renews them)."""
        return self.rounds.held

    def stop(self, reason: str) -> None:
        """No new lease; the fetches under way finish and are recorded."""
        self.reason = reason
        self.done.set()
        self.rounds.end(Halted(reason))

    # -- handing out ------------------------------------------------------------------------
    async def lease(self) -> Ticket | None:
        while not self.done.is_set():  # the worker's timer stops it at the time limit
            lease = await self.rounds.take()
            if lease is None:
                ended = self.rounds.ended
                if ended is not None and not self.done.is_set():
                    self._end(ended)
                break
            ticket = await self._ticket(lease)
            if ticket is not None:
                return ticket
        return None

    def _end(self, answer: Finished | Halted | Deferred) -> None:
        if isinstance(answer, Halted):
            self.reason = answer.state
        if isinstance(answer, Deferred) and not self._stats.deferred:
            self._stats.deferred.extend(answer.origins)
            for origin, why in answer.why:  # also those another worker asked
                reason = f"robots.txt {why}" if why else "robots.txt unavailable"
                self._stats.host(host_of(origin)).robots_status = f"deferred ({reason})"
            log.warning(
                "leaving %d origin(s) whose robots.txt is unavailable to the next run: %s",
                len(answer.origins),
                " ".join(answer.origins[:5]),
            )
        self.done.set()

    async def _ticket(self, lease: Lease) -> Ticket | None:
        """The lease's ticket: its page, or first its origin's robots.txt; None when the
        page needed no request (refused by robots.txt, or waiting for it again)."""
        job = lease.job
        rules = await self._rules(lease)
        if rules is None:
            url = robots_url(job.url)
            return Ticket(Job(url=url, host=job.host, robots=True), lease)
        if rules is False:
            return None
        if not rules.is_allowed(path_query_of(job.url)):
            self._recording.skipped_robots()
            self._complete(lease)
            return None
        return Ticket(job, lease)

    async def _rules(self, lease: Lease) -> RobotsRules | Literal[False] | None:
        """The origin's rules; None when its robots.txt is to be fetched under this lease;
        False when the page went back to wait (another worker found it unavailable)."""
        job = lease.job
        origin = origin_of(job.url)
        cached = self._rules_cache.get(origin)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        redis, prefix = self.front.redis, self._robots_prefix(lease.host)
        entry = await self._patience.call(lambda: robots_cache.get(redis, prefix, origin))
        if entry is None:
            return None
        if entry.status == 0 or not lasting(entry.status, ""):  # fetched by another worker
            await self._back_to_wait(lease, usable=False, local=False)
            return False
        rules = lasting_answer(entry.status, entry.body, self._recording.product(origin)).rules
        keep = min(self._config.politeness.robots_ttl, RULES_KEPT)
        self._rules_cache[origin] = (rules, time.monotonic() + keep)
        return rules

    def _robots_prefix(self, host: str) -> str:
        """robots.txt answers live in their host's partition (a new run's retry clears them)."""
        return self.front.part_prefix(self.front.part(host))

    def fetching(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # a pause is a LEASE answer: no ticket is handed out

    def rules_for(self, url: str) -> RobotsRules | None:
        cached = self._rules_cache.get(origin_of(url))
        return cached[0] if cached is not None and cached[1] > time.monotonic() else None

    def knows_robots(self, url: str) -> bool:
        return False  # a redirect to another origin's robots.txt is followed and archived

    # -- taking back ----------------------------------------------------------------------
    def _complete(
        self,
        lease: Lease,
        outcome: Outcome = _OK,
        *,
        retry: Job | None = None,
        links: list[Job] | None = None,
        count_page: bool = False,
        deferred: str = "",
    ) -> None:
        """The lease's end goes to the rounds' outbox (sent with the next round)."""
        if not self.rounds.holds(lease):
            return  # done already
        done = Completion(lease, outcome, retry, count_page, deferred)
        self.rounds.complete(done, links or ())

    async def page_done(self, ticket: Ticket, done: PageDone) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        retry = ticket.job.again() if done.retry else None
        links = self._links.take()  # what the page gave, queued with its completion
        # count_page: the crawl-wide stored pages (the page target, and the end's verdict).
        outcome = done.answer or _OK
        self._complete(lease, outcome, retry=retry, links=links, count_page=done.stored)

    async def release(self, ticket: Ticket) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        self._complete(lease, _FAULT, links=self._links.take())

    async def robots_done(self, ticket: Ticket, rules: RobotsRules, final: FetchResult) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        if not self.rounds.holds(lease):
            return
        polite, job = self._config.politeness, lease.job
        origin = origin_of(job.url)
        usable = lasting(final.status, final.error) and final.error not in LOCAL_FAULTS
        if not usable:  # as one process says it: asked again later, then deferred
            why = final.error or final.status
            self._stats.host(job.host).robots_status = f"deferred (robots.txt {why})"
        ttl = polite.robots_ttl if usable else polite.robots_retry_delay
        put = robots_cache.RobotsEntry(
            final.status if usable else 0, final.content if usable else b""
        )
        redis, prefix = self.front.redis, self._robots_prefix(lease.host)
        await self._patience.call(lambda: robots_cache.put(redis, prefix, origin, put, ttl))
        if usable:  # also without one: a Crawl-delay gone from a newer robots.txt is gone
            delay = None if rules.crawl_delay is None else float(rules.crawl_delay)
            await self._patience.call(lambda: self.front.set_crawl_delay(lease.host, delay))
        local = final.error in LOCAL_FAULTS
        why = str(final.error or final.status)
        await self._back_to_wait(lease, usable=usable, local=local, why=why)

    async def _back_to_wait(
        self, lease: Lease, *, usable: bool, local: bool, why: str = ""
    ) -> None:
        """The page waits its host's turn again: at once after robots.txt was read; after an
        unavailable one, the next attempt's wait (``politeness.robots_retry_wait``), and only
        ``robots_retries`` times (a fault of this machine is not the host's: "local"). ``why``:
        the answer, from the worker that asked (one told by the cache leaves it as it is)."""
        job = lease.job
        if usable:
            self._complete(lease, retry=job)
            return
        polite = self._config.politeness
        wait = robots_retry_wait(job.retries + 1, polite.robots_retry_delay)
        retry = job.again() if job.retries < polite.robots_retries else None
        if retry is None:
            self._stats.skipped_robots += 1
            self._stats.record_error("robots_unavailable", job.host)
        outcome = Outcome(Answer.LOCAL if local else Answer.UNAVAILABLE, wait)
        origin = "" if local or not why else f"{origin_of(job.url)}\t{why}"
        self._complete(lease, outcome, retry=retry, deferred=origin)
