"""A worker of a shared crawl: ``gossamer worker`` and ``gossamer crawl --frontier redis://``.

Data flow: Redis (settings, leases: ``distributed.frontier``) -> the seam
(``distributed/seam.py``) -> **the crawl loops** (``crawling/loop.py``, the loop every engine
runs) -> the store side (``crawling.recording``: WARC, CDXJ, ``crawl.db``, statistics) ->
admission (scope and trap rules) -> a link buffer -> the lease's completion, which queues the
links in Redis through the shared seen-set. Every worker writes its own folder; Redis holds
only what the workers share: the queues, the schedule, the seen-set, the leases, robots.txt
answers and each worker's figures. Besides its loops, a worker beats (its leases stay alive,
its figures and status reach ``gossamer ctl status``) and listens for new work.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from dataclasses import dataclass

from gossamer.config import CrawlConfig
from gossamer.crawling.fetching import build_fetcher
from gossamer.crawling.limits import remaining
from gossamer.crawling.loop import CrawlLoop
from gossamer.crawling.recording import Recording
from gossamer.crawling.revisits import RECRAWL_SINCE
from gossamer.distributed.errors import RACY_FAULTS, client_race
from gossamer.distributed.frontier import RedisFrontier
from gossamer.distributed.links import LinkBuffer
from gossamer.distributed.livestatus import publish_status, worker_status
from gossamer.distributed.patience import Patience
from gossamer.distributed.progress import SharedProgress
from gossamer.distributed.recrawl import join_recrawl
from gossamer.distributed.rounds import IDLE_LAST
from gossamer.distributed.seam import RedisSeam
from gossamer.errors import StoreError
from gossamer.render.choice import renderer_of
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB

__all__ = ["DistributedWorker", "WorkerResult"]

log = logging.getLogger(__name__)

HEARTBEAT = 1.0  # seconds between heartbeats (a lease lives LEASE_TTL without one)


@dataclass(frozen=True, slots=True)
class WorkerResult:
    reason: str  # finished, stopped, paused-then-stopped, time, target
    stats: CrawlStats


class DistributedWorker:
    """``concurrency`` crawl loops on the Redis seam, a heartbeat and a listener."""

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
        self._db = db
        self.patience = patience
        self.seam = RedisSeam(
            front,
            name,
            config,
            stats=stats,
            recording=self.recording,
            links=self.links,
            patience=patience,
        )
        self.finished = False  # every loop has ended: the last heartbeat says so
        # The whole crawl's progress line, on a terminal (stderr a TTY) only.
        targets = (config.max_pages, config.time_limit)
        on_tty = config.progress and sys.stderr.isatty()
        self._progress = SharedProgress(front.redis, name, targets) if on_tty else None

    @property
    def reason(self) -> str:
        return self.seam.reason

    @property
    def done(self) -> asyncio.Event:
        return self.seam.done

    def stop(self, reason: str) -> None:
        """End the run: no new lease; the fetches under way finish and are recorded."""
        self.seam.stop(reason)

    async def run(self) -> WorkerResult:
        running = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            running.add_signal_handler(signum, self.stop, "signal")
        redis_now = await self.patience.call(self.front.now)
        self.seam.offset = redis_now - time.time()
        fetching = build_fetcher(self.config, connections=self.config.concurrency)
        try:
            async with fetching as fetcher, asyncio.TaskGroup() as group:
                beat = group.create_task(self._heartbeat())
                listen = group.create_task(self._listen())
                pump = group.create_task(self.seam.rounds.run())
                # The time limit, as a timer: a loop waiting for a lease hears it too.
                left = remaining(self.config.time_limit, time.monotonic() - self.seam.started)
                if left is not None:
                    running.call_later(left, self.stop, "time")
                loop = CrawlLoop(
                    self.seam,
                    self.recording,
                    self.stats,
                    max_retries=self.config.politeness.max_retries,
                    is_sitemap=lambda job: self.recording.recorder.purpose(job) == "sitemap",
                    on_fault=_raise,
                    renderer=renderer_of(self.config),
                )
                loops = [
                    group.create_task(loop.run(fetcher)) for _ in range(self.config.concurrency)
                ]
                try:
                    await asyncio.gather(*loops)
                finally:
                    await loop.aclose()  # the browser, the plugins' thread
                await self.seam.rounds.close()  # what waits in the outbox goes out
                await pump
                await self.patience.call(self.seam.rounds.give_back)
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

    def figures(self) -> dict[str, int | float]:
        s = self.stats
        return {
            "pages": s.pages,
            "errors": sum(s.errors.values()),
            "html": s.html_pages,
            "pdf": s.pdf_pages,
            "elapsed": round(time.monotonic() - self.seam.started, 3),
            "lease_ttl": self.front.ttl,  # how old its heartbeat may get before it is gone
        }

    async def _beat(self) -> None:
        await self.front.heartbeat(self.figures(), leases=dict(self.seam.tokens))
        status = worker_status(
            self.stats,
            worker=self.front.worker,
            state="ended" if self.done.is_set() and self.finished else "running",
            reason=self.reason if self.finished else "",
            leased=len(self.seam.tokens),
            concurrency=self.config.concurrency,
            targets=(self.config.max_pages, self.config.time_limit),
        )
        await publish_status(self.front.redis, self.front.prefix, self.front.worker, status)

    async def _recrawl(self) -> None:
        """A recrawl started while this worker works: its folder's pages join it too."""
        state = await self.front.recrawl()
        if state is not None and self._db.get_meta(RECRAWL_SINCE) != repr(state[0]):
            await join_recrawl(self.front, self._db)

    async def _heartbeat(self) -> None:
        while not self.done.is_set():
            await self.patience.call(self._beat)
            await self.patience.call(self._recrawl)
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
                            self.seam.rounds.wake()
            except RACY_FAULTS as exc:
                if isinstance(exc, AttributeError) and not client_race(exc):
                    raise
                await asyncio.sleep(IDLE_LAST)


def _raise(exc: StoreError) -> None:
    """A store fault ends a shared worker: its run's error, said by ``gossamer worker``."""
    raise exc
