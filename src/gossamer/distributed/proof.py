"""Proof of life: a bare worker crawling through the shared frontier with the real fetcher.

Data flow: Redis (settings, leases) -> **proof** -> ``fetch.Fetcher`` -> ``parse.parse_html``
-> links -> Redis. Not the engine: no WARC, no database, no sitemaps or redirects beyond one
hop; it exists to show the frontier's guarantees (one request per host at a time, delays and
Crawl-delay across workers, robots.txt shared through Redis) against the test web before the
engine is wired to it (issue 12). Run one per process::

    python -m gossamer.distributed.proof redis://127.0.0.1:PORT/0 NAME WORKER

It reads the crawl's settings from Redis (checked like a config file) and exits when the
crawl has run dry or is stopped.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis

from gossamer.config import CrawlConfig
from gossamer.distributed import robots_cache, settings
from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import Finished, Halted, Lease, Leased, RedisFrontier, Wait
from gossamer.engine.fetching import build_fetcher
from gossamer.fetch.fetcher import Fetcher
from gossamer.frontier.backoff import retry_after
from gossamer.frontier.hosts import Job
from gossamer.parse import parse_html
from gossamer.robots import RobotsRules, lasting, lasting_answer, product_token
from gossamer.urls import canonical_link, host_of, origin_of, path_query_of, robots_url

__all__ = ["ProofWorker", "run"]

IDLE_PAUSE = 0.005  # seconds between asks while other workers hold every host with work
HEARTBEAT = 1.0


@dataclass(slots=True)
class Figures:
    pages: int = 0
    errors: int = 0


class ProofWorker:
    """``concurrency`` loops of lease -> fetch -> complete on one frontier handle."""

    def __init__(self, front: RedisFrontier, name: str, config: CrawlConfig) -> None:
        self.front = front
        self.name = name
        self.config = config
        self.product = product_token(config.fetch.user_agent)
        self.figures = Figures()
        self.done = asyncio.Event()

    async def run(self) -> Figures:
        fetcher = build_fetcher(self.config, connections=self.config.concurrency)
        async with fetcher, asyncio.TaskGroup() as group:
            beat = group.create_task(self._heartbeat())
            loops = [group.create_task(self._loop(fetcher)) for _ in range(self.config.concurrency)]
            await asyncio.gather(*loops)
            self.done.set()
            beat.cancel()
        await self._beat()  # the final figures, for ``gossamer ctl status``
        return self.figures

    async def _beat(self) -> None:
        await self.front.heartbeat({"pages": self.figures.pages, "errors": self.figures.errors})

    async def _heartbeat(self) -> None:
        while not self.done.is_set():
            await self._beat()
            await asyncio.sleep(HEARTBEAT)

    async def _loop(self, fetcher: Fetcher) -> None:
        while True:
            answer = await self.front.lease()
            if isinstance(answer, Finished | Halted):
                return
            if isinstance(answer, Leased):
                await self._visit(fetcher, answer.lease)
            else:
                # A Wait names Redis's time, not ours; ask again shortly (the engine wiring
                # will wake on a notification instead).
                wait = IDLE_PAUSE if not isinstance(answer, Wait) else IDLE_PAUSE * 2
                await asyncio.sleep(wait)

    async def _rules(self, fetcher: Fetcher, lease: Lease) -> RobotsRules | None:
        """The origin's rules from Redis; None after fetching robots.txt under this lease
        (the page then waits its turn like any other request to the host)."""
        origin = origin_of(lease.job.url)
        entry = await robots_cache.get(self.front.redis, self.name, origin)
        if entry is not None:
            if not lasting(entry.status, ""):
                return RobotsRules.disallow_all()
            return lasting_answer(entry.status, entry.body, self.product).rules
        hops = await fetcher.fetch_robots(robots_url(lease.job.url))
        last = hops[-1]
        polite = self.config.politeness
        ttl = polite.robots_ttl if lasting(last.status, last.error) else polite.robots_retry_delay
        entry = robots_cache.RobotsEntry(last.status, last.content)
        await robots_cache.put(self.front.redis, self.name, origin, entry, ttl)
        if lasting(last.status, last.error):
            rules = lasting_answer(last.status, last.content, self.product).rules
            if rules.crawl_delay:
                await self.front.set_crawl_delay(lease.host, rules.crawl_delay)
        await self.front.complete(lease, retry=lease.job)
        return None

    async def _visit(self, fetcher: Fetcher, lease: Lease) -> None:
        job = lease.job
        rules = await self._rules(fetcher, lease)
        if rules is None:
            return
        if not rules.is_allowed(path_query_of(job.url)):
            await self.front.complete(lease)
            return
        result = await fetcher.fetch(job.url)
        links: list[Job] = []
        max_depth = self.config.scope.max_depth
        deeper = max_depth is None or job.depth < max_depth
        if result.status == 200 and result.content and deeper:
            page = parse_html(result.content, job.url, result.content_type)
            links = [_job(link.url, job) for link in page.links]
        elif result.is_redirect and (location := result.header("Location")):
            target = canonical_link(location, job.url)
            links = [_job(target, job, hop=True)] if target else []
        status = result.status
        if status in (429, 503):
            wait = retry_after(result.header("Retry-After"), result.started_at)
            await self.front.complete(lease, outcome="slow", retry_after=wait, links=links)
        elif status == 0 or status >= 500:
            self.figures.errors += 1
            await self.front.complete(lease, outcome="fault", links=links)
        else:
            self.figures.pages += 1
            await self.front.complete(lease, links=links)


def _job(url: str, parent: Job, *, hop: bool = False) -> Job:
    depth = parent.depth if hop else parent.depth + 1
    hops = parent.hops + 1 if hop else 0
    return Job(url=url, host=host_of(url), depth=depth, referrer=parent.url, hops=hops)


async def run(url: str, name: str, worker: str, *, ttl: float = 10.0) -> Figures:
    """Join crawl ``name`` at ``url`` as ``worker`` and crawl until it is finished."""
    redis = Redis.from_url(url)
    try:
        front = RedisFrontier(redis, name, worker, ttl=ttl)
        raw = await front.stored_settings()
        if raw is None:
            raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
        config = settings.from_json(raw, Path("-"), Path("-"))
        return await ProofWorker(front, name, config).run()
    finally:
        await redis.aclose()


if __name__ == "__main__":
    figures = asyncio.run(run(*sys.argv[1:4]))
    print(f"pages {figures.pages} errors {figures.errors}")
