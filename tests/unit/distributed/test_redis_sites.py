"""The shared frontier under ``[[site]]`` tables: each URL queued carries its host's site
budget and delay, which Redis keeps per host (the delay as the host's ``site`` field)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from redis.asyncio import Redis

from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig, SiteConfig
from gossamer.distributed import RedisFrontier
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import HostTiming
from tests.unit.distributed.redis_rig import FakeClock, RedisServer

_names = itertools.count()


async def _queued(server: RedisServer) -> tuple[dict[str, int], dict[str, HostTiming]]:
    config = CrawlConfig(
        seeds=Path("s"),
        out=Path("o"),
        politeness=PolitenessConfig(delay=0.25),
        scope=ScopeConfig(max_pages_per_host=4),
        sites=(SiteConfig(match="*.small.test", max_pages=2, delay=1.5),),
    )
    name = f"sites{next(_names)}"
    front = RedisFrontier(Redis.from_url(server.url), name, "w0", clock=FakeClock())
    # a joining worker knows the tables once it has read the settings (distributed/run.py)
    joiner = RedisFrontier(Redis.from_url(server.url), name, "w1", clock=FakeClock())
    try:
        assert await front.create(config)
        joiner.sites = front.sites
        hosts = ("www.small.test", "other.test")
        for host in hosts:
            jobs = [Job(url=f"http://{host}/{n}", host=host) for n in range(6)]
            await front.add(jobs[:3])
            await joiner.add(jobs[3:])
        queued = {host: len(await front.queued(host)) for host in hosts}
        return queued, {host: await front.timing(host) for host in hosts}
    finally:
        await front.redis.aclose()
        await joiner.redis.aclose()


def test_a_sites_budget_and_delay_are_kept_per_host(redis_server: RedisServer) -> None:
    queued, timing = asyncio.run(_queued(redis_server))
    assert queued == {"www.small.test": 2, "other.test": 4}
    assert timing == {"www.small.test": HostTiming(1.5), "other.test": HostTiming(0.25)}
