"""Starting a shared crawl, joining one, and the worker's own folder around it.

Data flow: ``gossamer crawl --frontier`` / ``gossamer worker`` (cli/distributed.py) ->
**run** -> Redis (create or read the crawl's settings; seeds through admission into the
shared queues) -> :class:`DistributedWorker` -> the worker's folder: WARC files, CDXJ,
``crawl.db`` and ``reports/``, written whatever ends the run (the crawl finished or stopped,
the time limit, Redis gone for longer than ``redis_patience``).

A crawl is named (``--name``, default ``crawl``): its keys are ``gossamer:{NAME}:*``, so one
Redis can hold several. ``crawl --frontier`` creates the crawl from its command line unless
it exists; then, as with ``worker``, the settings stored in Redis rule, the command line may
set only what is the worker's own (concurrency, time limit, ``--resolve``, timeouts), and it
may not loosen politeness. ``crawl --frontier`` on a stopped crawl sets it running again and
adds its seeds (URLs already seen are not queued twice): that is how a stopped crawl goes on.
With ``--recrawl`` it starts a recrawl of the crawl (``distributed/recrawl.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
from dataclasses import dataclass

from gossamer.config import CrawlConfig, Requested
from gossamer.crawling.fetching import proxies_of
from gossamer.crawling.folder import CrawlLock, save_snapshot
from gossamer.crawling.reports import report_now
from gossamer.crawling.scope import scope_of
from gossamer.crawling.verdict import judge
from gossamer.distributed import settings
from gossamer.distributed.connect import connect, redacted
from gossamer.distributed.control import set_state
from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import LEASE_TTL, RedisFrontier
from gossamer.distributed.patience import Patience
from gossamer.distributed.recrawl import join_recrawl
from gossamer.distributed.worker import DistributedWorker, WorkerResult
from gossamer.errors import ConfigError, StoreError
from gossamer.monitor.charts import warm_in_background
from gossamer.plan import prepare_out
from gossamer.render.choice import check_renderable
from gossamer.seeds import SeedList
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB

__all__ = ["Shared", "connect", "join_crawl", "redacted", "start_crawl"]

REDIS_PATIENCE = 60.0  # seconds a worker keeps retrying an unreachable Redis
CREATION_POLL = 0.2  # seconds between looks for a crawl not created yet


@dataclass(frozen=True, slots=True)
class Shared:
    """Where the shared crawl lives, and who this worker is."""

    url: str  # redis://[user:password@]host:port/db, rediss://..., redis+cluster://... (connect.py)
    name: str = "crawl"
    worker: str = ""  # default: this machine's name and the process id
    patience: float = REDIS_PATIENCE
    lease_ttl: float = LEASE_TTL

    def worker_name(self) -> str:
        return self.worker or f"{socket.gethostname()}-{os.getpid()}"


async def _stored(front: RedisFrontier, patience: Patience, config: CrawlConfig) -> CrawlConfig:
    """The crawl's settings; a worker started before the crawl waits for it (``patience``)."""
    waited = 0.0
    while (raw := await patience.call(front.stored_settings)) is None:
        if waited >= patience.limit:
            name = front.name
            raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
        await asyncio.sleep(CREATION_POLL)
        waited += CREATION_POLL
    return settings.from_json(raw, config.seeds, config.out)


async def _prepare(
    shared: Shared,
    local: CrawlConfig,
    wanted: Requested,
    seeds: SeedList | None,
    recrawl: str | None = None,
) -> WorkerResult:
    redis = connect(shared.url)
    patience = Patience(shared.patience, redacted(shared.url))
    try:
        front = RedisFrontier(redis, shared.name, shared.worker_name(), ttl=shared.lease_ttl)
        created = False
        if seeds is not None:
            created = await patience.call(lambda: front.create(local))
        config = local
        if not created:
            stored = await _stored(front, patience, local)
            values = dict(wanted.values)
            own_limit = values.pop("time_limit", None)  # each worker's own, not the crawl's
            config = settings.joined(stored, values, dict(wanted.labels))
            config = dataclasses.replace(config, time_limit=own_limit)
            proxies_of(config)  # this machine's route, checked as crawl checks its own
            check_renderable(config)  # a crawl that renders: this machine has a browser
            front.sites = SiteRules.of(config)  # the crawl's [[site]] tables, as stored
            await patience.call(front.open)  # its partitions, and their copy of the values
        if recrawl is not None:
            if created:
                raise ConfigError(
                    f"--recrawl asks the pages of an existing crawl again: there is no crawl"
                    f" named {shared.name!r} in this Redis yet"
                )
            await patience.call(lambda: front.begin_recrawl(time.time(), recrawl))
        if seeds is not None:
            await patience.call(lambda: set_state(redis, shared.name, "running"))
            if not created:  # a new run: what the last one deferred is asked again
                await patience.call(front.retry_deferred)
        return await _work(front, shared, config, seeds, patience)
    finally:
        await redis.aclose()


async def _work(
    front: RedisFrontier,
    shared: Shared,
    config: CrawlConfig,
    seeds: SeedList | None,
    patience: Patience,
) -> WorkerResult:
    prepare_out(config.out)
    warm_in_background()  # the end's report.html, its import done while the worker crawls
    with CrawlLock(config.out):
        db = MetadataDB(config.out / "crawl.db")
        stats = CrawlStats(concurrency=config.concurrency)
        faults: list[StoreError] = []
        try:
            # A recrawl under way: this folder's pages join the shared queues first.
            await patience.call(lambda: join_recrawl(front, db))
            worker = DistributedWorker(
                front, shared.name, config, db=db, stats=stats, patience=patience
            )

            loop = asyncio.get_running_loop()

            def on_fault(exc: StoreError) -> None:  # on the database writer's thread
                faults.append(exc)
                loop.call_soon_threadsafe(worker.stop, "store error")

            db.start_writer(on_fault=on_fault)
            if seeds is not None:
                admitter = worker.recording.admitter
                for seed in seeds.seeds:
                    admitter.admit(seed.urls[0], 0, None, fallbacks=seed.urls[1:])
                jobs = worker.links.take()
                await patience.call(lambda: front.add(jobs))
            result = await worker.run()
            if faults:
                raise faults[0]
            if seeds is not None:  # the process that brought the seeds judges the crawl
                judge(stats, result.reason, await patience.call(front.pages))
            return result
        finally:
            try:
                # The snapshot with stats.json's duration, which recover and merge keep.
                save_snapshot(db, stats)
                report_now(config.out, stats, db, final=True, scope=scope_of(config.scope))
            finally:
                with contextlib.suppress(StoreError):  # the fault, if any, is already raised
                    db.close()


def start_crawl(
    shared: Shared,
    config: CrawlConfig,
    wanted: Requested,
    seeds: SeedList,
    recrawl: str | None = None,
) -> WorkerResult:
    """``gossamer crawl --frontier``: create (or go on with) the shared crawl, then work in it;
    ``recrawl`` ("all", "due"): ask the pages of every worker's folder again first."""
    return asyncio.run(_prepare(shared, config, wanted, seeds, recrawl))


def join_crawl(shared: Shared, config: CrawlConfig, wanted: Requested) -> WorkerResult:
    """``gossamer worker``: work in the shared crawl named in Redis until it ends."""
    return asyncio.run(_prepare(shared, config, wanted, None))
