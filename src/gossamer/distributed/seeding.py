"""Seeds added to a running shared crawl: ``gossamer ctl add-seeds FILE``.

Data flow: seeds file (or the Crawl page's form) -> **seeding** (read and canonicalised as
``gossamer crawl`` reads them) -> the crawl's shared seen-set and queues in Redis -> any
worker. A URL the crawl has already seen is not queued again.
"""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import RedisFrontier
from gossamer.frontier.hosts import Job
from gossamer.seeds import SeedList, read_seeds
from gossamer.urls import host_of

__all__ = ["add_seed_list", "add_seeds"]


async def add_seeds(redis: Redis, name: str, seeds_file: Path) -> int:
    """Queue the seeds of ``seeds_file`` in the crawl ``name``; how many were new."""
    return await add_seed_list(redis, name, read_seeds(seeds_file))


async def add_seed_list(redis: Redis, name: str, seeds: SeedList) -> int:
    """Queue ``seeds`` in the crawl ``name`` (from a file, or the Crawl page); how many were
    new."""
    if not await redis.exists(f"gossamer:{name}:settings"):
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    jobs = [
        Job(url=seed.urls[0], host=host_of(seed.urls[0]), depth=0, fallbacks=seed.urls[1:])
        for seed in seeds.seeds
    ]
    return await RedisFrontier(redis, name, "ctl").add(jobs)
