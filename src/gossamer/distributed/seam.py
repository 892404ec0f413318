"""A shared crawl's side of the scheduling seam: tickets from the Redis frontier.

Data flow: Redis (``distributed/frontier.py``: LEASE) -> **RedisSeam.lease** -> the crawl loop
(``crawling/loop.py``) -> **page_done / robots_done** -> COMPLETE, which moves the host's timing
(the Lua mirror of ``frontier/politeness.py``) and queues the page's links through the shared
seen-set.

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
from gossamer.crawling.limits import remaining
from gossamer.crawling.recording import Recording
from gossamer.crawling.seam import PageDone, Ticket
from gossamer.distributed import robots_cache
from gossamer.distributed.frontier import (
    Deferred,
    Finished,
    Halted,
    Lease,
    Leased,
    Lost,
    RedisFrontier,
    Wait,
)
from gossamer.distributed.links import LinkBuffer
from gossamer.distributed.patience import Patience
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, Outcome, robots_retry_wait
from gossamer.robots import RobotsRules, lasting, lasting_answer
from gossamer.stats import CrawlStats
from gossamer.urls import host_of, origin_of, path_query_of, robots_url

__all__ = ["RedisSeam"]

log = logging.getLogger(__name__)

IDLE_FIRST, IDLE_LAST = 0.002, 0.1  # seconds: the pause while others hold all the work
MAX_WAIT = 0.5  # longest sleep towards a host's next-allowed time before asking again
RULES_KEPT = 600.0  # seconds a worker keeps an origin's parsed rules before asking Redis again
_FAULT = Outcome(Answer.FAULT)


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
        self.work = asyncio.Event()  # set and cleared at once: wakes the idle loops
        self.tokens: dict[str, str] = {}  # host -> token of the leases this worker works on
        # Parsed rules of lasting robots.txt answers, by origin, until they expire: a page
        # then costs no Redis read and no parse of its origin's robots.txt.
        self._rules_cache: dict[str, tuple[RobotsRules, float]] = {}

    def stop(self, reason: str) -> None:
        """No new lease; the fetches under way finish and are recorded."""
        self.reason = reason
        self.done.set()

    # -- handing out ------------------------------------------------------------------------
    async def lease(self) -> Ticket | None:
        pause = IDLE_FIRST
        while not self.done.is_set():
            if remaining(self._config.time_limit, time.monotonic() - self.started) == 0:
                self.stop("time")
                break
            answer = await self._patience.call(self.front.lease)
            if isinstance(answer, Halted) and answer.state == "paused":
                await asyncio.sleep(IDLE_LAST)  # no request while paused; ask again
                continue
            if isinstance(answer, Finished | Halted | Deferred):
                self._end(answer)
                break
            if isinstance(answer, Leased):
                pause = IDLE_FIRST
                ticket = await self._ticket(answer.lease)
                if ticket is not None:
                    return ticket
            elif isinstance(answer, Wait):
                ahead = answer.until - (time.time() + self.offset)
                await asyncio.sleep(min(max(ahead, IDLE_FIRST), MAX_WAIT))
            else:  # Idle: others hold every host with work; their links may bring more
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.work.wait(), pause)
                pause = min(pause * 2, IDLE_LAST)
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
        self.tokens[lease.host] = lease.token
        job = lease.job
        rules = await self._rules(lease)
        if rules is None:
            url = robots_url(job.url)
            return Ticket(Job(url=url, host=job.host, robots=True), lease)
        if rules is False:
            return None
        if not rules.is_allowed(path_query_of(job.url)):
            self._recording.skipped_robots()
            await self._complete(lease)
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
        redis, name = self.front.redis, self._name
        entry = await self._patience.call(lambda: robots_cache.get(redis, name, origin))
        if entry is None:
            return None
        if entry.status == 0 or not lasting(entry.status, ""):  # fetched by another worker
            await self._back_to_wait(lease, usable=False, local=False)
            return False
        rules = lasting_answer(entry.status, entry.body, self._recording.product(origin)).rules
        keep = min(self._config.politeness.robots_ttl, RULES_KEPT)
        self._rules_cache[origin] = (rules, time.monotonic() + keep)
        return rules

    def fetching(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # a pause is a LEASE answer: no ticket is handed out

    def knows_robots(self, url: str) -> bool:
        return False  # a redirect to another origin's robots.txt is followed and archived

    # -- taking back ----------------------------------------------------------------------
    async def _complete(self, lease: Lease, **kwargs: object) -> None:
        try:
            call = lambda: self.front.complete(lease, **kwargs)  # type: ignore[arg-type]  # noqa: E731
            answer = await self._patience.call(call)
        finally:
            if self.tokens.get(lease.host) == lease.token:
                del self.tokens[lease.host]
        if isinstance(answer, Lost):
            self._stats.record_error("lease_lost", lease.host)

    async def page_done(self, ticket: Ticket, done: PageDone) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        if lease.token != self.tokens.get(lease.host):
            return  # done already
        retry = ticket.job.again() if done.retry else None
        links = self._links.take()  # what the page gave, queued with its completion
        # count_page: the crawl-wide stored pages (the page target, and the end's verdict).
        outcome = done.answer or "ok"
        await self._complete(
            lease, outcome=outcome, retry=retry, links=links, count_page=done.stored
        )

    async def release(self, ticket: Ticket) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        if lease.token == self.tokens.get(lease.host):
            await self._complete(lease, outcome=_FAULT, links=self._links.take())

    async def robots_done(self, ticket: Ticket, rules: RobotsRules, final: FetchResult) -> None:
        lease = ticket.handle
        assert isinstance(lease, Lease)
        if lease.token != self.tokens.get(lease.host):
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
        redis, name = self.front.redis, self._name
        await self._patience.call(lambda: robots_cache.put(redis, name, origin, put, ttl))
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
            await self._complete(lease, retry=job)
            return
        polite = self._config.politeness
        wait = robots_retry_wait(job.retries + 1, polite.robots_retry_delay)
        retry = job.again() if job.retries < polite.robots_retries else None
        if retry is None:
            self._stats.skipped_robots += 1
            self._stats.record_error("robots_unavailable", job.host)
        outcome = "local" if local else "unavailable"
        origin = "" if local or not why else f"{origin_of(job.url)}\t{why}"
        await self._complete(lease, outcome=outcome, retry_after=wait, retry=retry, deferred=origin)
