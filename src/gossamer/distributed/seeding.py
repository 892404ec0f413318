"""Seeds added to a running shared crawl: ``gossamer ctl add-seeds FILE``.

Data flow: seeds file (or the Crawl page's form) -> **seeding** (read and canonicalised as
``gossamer crawl`` reads them, with the crawl's own longest URL) -> the crawl's shared
seen-set and queues in Redis -> any worker. A URL the crawl has already seen is not queued
again; a line that is no seed is given back with its number, for the caller to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis

from gossamer.crawling.scope import scope_of
from gossamer.distributed import settings
from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import RedisFrontier
from gossamer.distributed.keys import crawl_prefix
from gossamer.frontier.hosts import Job
from gossamer.seeds import SeedList, SeedProblem, read_seeds
from gossamer.urls import host_of

__all__ = ["SeedsAdded", "add_seed_list", "add_seeds"]


@dataclass(frozen=True, slots=True)
class SeedsAdded:
    queued: int  # seed URLs new to the crawl, now queued
    seeds: int  # usable seed lines in the file
    problems: tuple[SeedProblem, ...]  # the lines left out, with their numbers and why


async def _stored(redis: Redis, name: str) -> bytes | str:
    raw: bytes | str | None = await redis.get(crawl_prefix(name) + "settings")
    if raw is None:
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    return raw


async def add_seeds(redis: Redis, name: str, seeds_file: Path) -> SeedsAdded:
    """Queue the seeds of ``seeds_file`` in the crawl ``name``: read with the crawl's own
    ``scope.max_url_length``, as ``gossamer crawl`` would have read them. A file without one
    usable seed raises ``SeedError``, as for ``crawl``."""
    config = settings.from_json(await _stored(redis, name), seeds_file, Path())
    seeds = read_seeds(seeds_file, max_url_length=config.scope.max_url_length)
    queued = await add_seed_list(redis, name, seeds)
    return SeedsAdded(queued, len(seeds.seeds), seeds.problems)


async def add_seed_list(redis: Redis, name: str, seeds: SeedList) -> int:
    """Queue ``seeds`` in the crawl ``name`` (from a file, or the Crawl page); how many were
    new. A seed the crawl's scope rules refuse is not queued, as a local crawl's admission
    refuses it."""
    scope = scope_of(settings.from_json(await _stored(redis, name), Path(), Path()).scope)
    jobs = [
        Job(url=seed.urls[0], host=host_of(seed.urls[0]), depth=0, fallbacks=seed.urls[1:])
        for seed in seeds.seeds
        if scope.refusal(seed.urls[0]) is None
    ]
    front = RedisFrontier(redis, name, "ctl")
    await front.open()
    return await front.add(jobs)
