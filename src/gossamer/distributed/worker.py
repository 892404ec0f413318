"""A worker of a shared crawl: ``gossamer worker`` and ``gossamer crawl --frontier redis://``.

Data flow: Redis (settings, leases: ``distributed.frontier``) -> **worker** -> the fetcher ->
the store side (``crawling.recording``: WARC, CDXJ, ``crawl.db``, statistics) -> admission
(scope and trap rules) -> a link buffer -> the lease's completion, which queues the links in
Redis through the shared seen-set. Every worker writes its own folder; Redis holds only what
the workers share: the queues, the schedule, the seen-set, the leases, robots.txt answers and
each worker's figures.

Politeness is the frontier's: a host is leased to one worker at a time and its delay,
Crawl-delay and backoff are kept in Redis on Redis's clock, so they hold across machines.
A robots.txt answer is fetched under a lease by one worker, archived by it, and shared
through Redis; the page waits its turn again after it. An unavailable robots.txt (5xx,
unreachable) sends the page back to wait ``robots_retry_delay``, up to ``robots_retries``
times; the host gets no other request meanwhile. (``robots_wait``, the single process's
shortcut when nothing else is left, does not apply: no worker knows that alone.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from dataclasses import dataclass

from redis.exceptions import RedisError

from gossamer.config import CrawlConfig
from gossamer.crawling.exchange import fetched, fetched_robots
from gossamer.crawling.fetching import build_fetcher
from gossamer.crawling.limits import remaining
from gossamer.crawling.recording import Recording
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
from gossamer.distributed.livestatus import publish_status, worker_status
from gossamer.distributed.patience import Patience
from gossamer.distributed.progress import SharedProgress
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.fetch.fetcher import Fetcher
from gossamer.frontier.backoff import retry_after
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import robots_retry_wait
from gossamer.robots import RobotsRules, lasting, lasting_answer
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.urls import host_of, origin_of, path_query_of, robots_url

__all__ = ["DistributedWorker", "WorkerResult"]

log = logging.getLogger(__name__)

HEARTBEAT = 1.0  # seconds between heartbeats (a lease lives LEASE_TTL without one)
IDLE_FIRST, IDLE_LAST = 0.002, 0.1  # seconds: the pause while others hold all the work
MAX_WAIT = 0.5  # longest sleep towards a host's next-allowed time before asking again
RULES_KEPT = 600.0  # seconds a worker keeps an origin's parsed rules before asking Redis again


@dataclass(frozen=True, slots=True)
class WorkerResult:
    reason: str  # finished, stopped, paused-then-stopped, time, target
    stats: CrawlStats


class DistributedWorker:
    """``concurrency`` loops of lease -> robots.txt -> fetch -> store -> complete."""

    def __init__(
        self,
        front: RedisFrontier,
        name: str,
        config: CrawlConfig,
        *,
        db: MetadataDB,
        stats: CrawlStats,
        patience: Patience,
    ) -> None:
        self.front = front
        self.name = name
        self.config = config
        self.stats = stats
        self.links = LinkBuffer()
        self.recording = Recording(config, stats, db, self.links)
        self.patience = patience
        self.started = time.monotonic()
        self.reason = "finished"
        self.done = asyncio.Event()
        self._offset = 0.0  # Redis's clock minus ours, to sleep until a host's time
        # Parsed rules of lasting robots.txt answers, by origin, until they expire: a page
        # then costs no Redis read and no parse of its origin's robots.txt.
        self._rules_cache: dict[str, tuple[RobotsRules, float]] = {}
        self._work = asyncio.Event()  # set and cleared at once: wakes the idle loops
        self._tokens: dict[str, str] = {}  # host -> token of the leases this worker works on
        self.finished = False  # every loop has ended: the last heartbeat says so
        # The whole crawl's progress line, on a terminal (stderr a TTY) only.
        targets = (config.max_pages, config.time_limit)
        on_tty = config.progress and sys.stderr.isatty()
        self._progress = SharedProgress(front.redis, name, targets) if on_tty else None

    def stop(self, reason: str) -> None:
        """End the run: no new lease; the fetches under way finish and are recorded."""
        self.reason = reason
        self.done.set()

    async def run(self) -> WorkerResult:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.stop, "signal")
        redis_now = await self.patience.call(self._redis_time)
        self._offset = redis_now - time.time()
        fetcher = build_fetcher(self.config, connections=self.config.concurrency)
        try:
            async with fetcher, asyncio.TaskGroup() as group:
                beat = group.create_task(self._heartbeat())
                listen = group.create_task(self._listen())
                loops = [
                    group.create_task(self._loop(fetcher)) for _ in range(self.config.concurrency)
                ]
                await asyncio.gather(*loops)
                self.done.set()
                beat.cancel()
                listen.cancel()
        except BaseExceptionGroup as failed:  # one loop's error ends all; say that one
            raise failed.exceptions[0] from None
        finally:
            self.recording.close()
        self.finished = True
        await self.patience.call(self._beat)  # the final figures, for ``gossamer ctl status``
        if self._progress is not None:
            await self.patience.call(self._progress.paint)
            self._progress.close()
        return WorkerResult(self.reason, self.stats)

    async def _redis_time(self) -> float:
        seconds, micros = await self.front.redis.time()
        return float(seconds) + micros / 1e6

    def figures(self) -> dict[str, int | float]:
        s = self.stats
        return {
            "pages": s.pages,
            "errors": sum(s.errors.values()),
            "html": s.html_pages,
            "pdf": s.pdf_pages,
            "elapsed": round(time.monotonic() - self.started, 3),
            "lease_ttl": self.front.ttl,  # how old its heartbeat may get before it is gone
        }

    async def _beat(self) -> None:
        await self.front.heartbeat(self.figures(), tokens=list(self._tokens.values()))
        status = worker_status(
            self.stats,
            worker=self.front.worker,
            state="ended" if self.done.is_set() and self.finished else "running",
            reason=self.reason if self.finished else "",
            leased=len(self._tokens),
            concurrency=self.config.concurrency,
            targets=(self.config.max_pages, self.config.time_limit),
        )
        await publish_status(self.front.redis, self.front.prefix, self.front.worker, status)

    async def _heartbeat(self) -> None:
        while not self.done.is_set():
            await self.patience.call(self._beat)
            if self._progress is not None:
                await self.patience.call(self._progress.paint)
            await asyncio.sleep(min(HEARTBEAT, self.front.ttl / 3))

    async def _listen(self) -> None:
        """Wake the idle loops when a host enters the schedule (``P work``, published by the
        scripts). Lost with the connection, it subscribes again; meanwhile the idle loops
        still ask every ``IDLE_LAST`` seconds."""
        channel = self.front.prefix + "work"
        while not self.done.is_set():
            try:
                async with self.front.redis.pubsub() as pubsub:
                    await pubsub.subscribe(channel)
                    while not self.done.is_set():
                        message = await pubsub.get_message(
                            ignore_subscribe_messages=True, timeout=1.0
                        )
                        if message is not None:
                            self._work.set()
                            self._work.clear()
            except RedisError:
                await asyncio.sleep(IDLE_LAST)

    def _over_time(self) -> bool:
        """This worker's run has used its own time limit (``crawling/limits.remaining``)."""
        left = remaining(self.config.time_limit, time.monotonic() - self.started)
        return left == 0

    async def _loop(self, fetcher: Fetcher) -> None:
        pause = IDLE_FIRST
        while not self.done.is_set():
            if self._over_time():
                self.reason = "time"
                self.done.set()
                return
            answer = await self.patience.call(self.front.lease)
            if isinstance(answer, Halted) and answer.state == "paused":
                await asyncio.sleep(IDLE_LAST)  # no request while paused; ask again
                continue
            if isinstance(answer, Finished | Halted | Deferred):
                if isinstance(answer, Halted):
                    self.reason = answer.state
                if isinstance(answer, Deferred) and not self.stats.deferred:
                    self.stats.deferred.extend(answer.origins)
                    for origin, why in answer.why:  # also those another worker asked
                        reason = f"robots.txt {why}" if why else "robots.txt unavailable"
                        self.stats.host(host_of(origin)).robots_status = f"deferred ({reason})"
                    log.warning(
                        "leaving %d origin(s) whose robots.txt is unavailable to the next run: %s",
                        len(answer.origins),
                        " ".join(answer.origins[:5]),
                    )
                self.done.set()
                return
            if isinstance(answer, Leased):
                pause = IDLE_FIRST
                self._tokens[answer.lease.host] = answer.lease.token
                try:
                    await self._visit(fetcher, answer.lease)
                finally:
                    self._tokens.pop(answer.lease.host, None)
            elif isinstance(answer, Wait):
                ahead = answer.until - (time.time() + self._offset)
                await asyncio.sleep(min(max(ahead, IDLE_FIRST), MAX_WAIT))
            else:  # Idle: others hold every host with work; their links may bring more
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._work.wait(), pause)
                pause = min(pause * 2, IDLE_LAST)

    async def _complete(self, lease: Lease, **kwargs: object) -> None:
        answer = await self.patience.call(lambda: self.front.complete(lease, **kwargs))  # type: ignore[arg-type]
        if isinstance(answer, Lost):
            self.stats.record_error("lease_lost", lease.host)

    async def _rules(self, fetcher: Fetcher, lease: Lease) -> RobotsRules | None:
        """The origin's rules; None when the page went back to wait (robots.txt was fetched
        under this lease, or is unavailable for now)."""
        job, polite = lease.job, self.config.politeness
        origin = origin_of(job.url)
        cached = self._rules_cache.get(origin)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        product = self.recording.product
        entry = await self.patience.call(
            lambda: robots_cache.get(self.front.redis, self.name, origin)
        )
        if entry is None:
            url = robots_url(job.url)
            hops = await fetched_robots(url, fetcher.fetch_robots(url))
            rules, last = self.recording.robots(job, hops)
            usable = lasting(last.status, last.error) and last.error not in LOCAL_FAULTS
            if not usable:  # as one process says it: asked again later, then deferred
                why = last.error or last.status
                self.stats.host(job.host).robots_status = f"deferred (robots.txt {why})"
            ttl = polite.robots_ttl if usable else polite.robots_retry_delay
            status = last.status if usable else 0
            body = last.content if usable else b""
            put = robots_cache.RobotsEntry(status, body)
            await self.patience.call(
                lambda: robots_cache.put(self.front.redis, self.name, origin, put, ttl)
            )
            if usable:  # also without one: a Crawl-delay gone from a newer robots.txt is gone
                delay = rules.crawl_delay
                await self.patience.call(
                    lambda: self.front.set_crawl_delay(
                        lease.host, None if delay is None else float(delay)
                    )
                )
            local = last.error in LOCAL_FAULTS
            why = str(last.error or last.status)
            await self._back_to_wait(lease, usable=usable, local=local, why=why)
            return None
        if entry.status == 0 or not lasting(entry.status, ""):  # fetched by another worker
            await self._back_to_wait(lease, usable=False, local=False)
            return None
        rules = lasting_answer(entry.status, entry.body, product).rules
        keep = min(polite.robots_ttl, RULES_KEPT)
        self._rules_cache[origin] = (rules, time.monotonic() + keep)
        return rules

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
        polite = self.config.politeness
        wait = robots_retry_wait(job.retries + 1, polite.robots_retry_delay)
        retry = _again(job, polite.robots_retries)
        if retry is None:
            self.stats.skipped_robots += 1
            self.stats.record_error("robots_unavailable", job.host)
        outcome = "local" if local else "unavailable"
        origin = "" if local or not why else f"{origin_of(job.url)}\t{why}"
        await self._complete(lease, outcome=outcome, retry_after=wait, retry=retry, deferred=origin)

    async def _visit(self, fetcher: Fetcher, lease: Lease) -> None:
        job = lease.job
        rules = await self._rules(fetcher, lease)
        if rules is None:
            return
        if not rules.is_allowed(path_query_of(job.url)):
            self.recording.skipped_robots()
            await self._complete(lease)
            return
        result = await fetched(job.url, fetcher.fetch(job.url))
        await self._after_fetch(lease, job, result)

    async def _after_fetch(self, lease: Lease, job: Job, result: FetchResult) -> None:
        if result.error in LOCAL_FAULTS:  # this machine's fault, not the host's
            self.stats.record_error(result.error or "local_fault")
            retry = _again(job, self.config.politeness.max_retries)
            await self._complete(lease, outcome="local", retry=retry)
            return
        stored = self.recording.store(job, result)
        if result.status == 0 and job.fallbacks:
            self.recording.admitter.fall_back(job)  # a seed's next form (https -> http)
        links = self.links.take()
        count = stored  # crawl-wide stored pages: the page target, and the end's verdict
        status = result.status
        if status in (429, 503):
            wait = retry_after(result.header("Retry-After"), result.started_at)
            retry = _again(job, self.config.politeness.max_retries)
            await self._complete(
                lease, outcome="slow", retry_after=wait, retry=retry, links=links, count_page=count
            )
        elif status == 0 or status >= 500:
            await self._complete(lease, outcome="fault", links=links, count_page=count)
        else:
            await self._complete(lease, links=links, count_page=count)


def _again(job: Job, retries: int) -> Job | None:
    """The job queued once more, unless it has been tried ``retries`` times already."""
    return job.again() if job.retries < retries else None
