"""Proof of life of the shared frontier: three worker processes crawl the test web through one
Redis with the real fetcher, and the server's own audit finds no politeness fault.

The audit is the server's: requests in flight to one host name at once, Crawl-delay gaps,
robots.txt refusals, pages never fetched, pages fetched twice, across all three processes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from redis.asyncio import Redis

from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.distributed import RedisFrontier, status
from gossamer.frontier.hosts import Job
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.urls import host_of
from tests.unit.distributed.redis_rig import RedisServer, crawl_name, redis_server

__all__ = ["crawl_name", "redis_server"]  # fixtures used below

ROOT = Path(__file__).resolve().parents[2]


def test_three_processes_crawl_the_test_web_politely(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    spec = WebSpec(seed=12, hosts=16, pages_per_host=6, special_hosts=False, latency=0.002)
    with ThreadedTestWeb(build_web(spec)) as site:
        config = CrawlConfig(
            seeds=tmp_path / "seeds.txt",
            out=tmp_path / "out",
            concurrency=4,
            resolve=("*.web.test:127.0.0.1",),
            politeness=PolitenessConfig(delay=0.0, robots_retry_delay=0.2),
            scope=dataclasses.replace(ScopeConfig(), max_depth=25, sitemaps=False),
        )

        async def seed() -> None:
            front = RedisFrontier(Redis.from_url(redis_server.url), crawl_name, "seeder")
            assert await front.create(config)
            await front.add(Job(url=url, host=host_of(url)) for url in site.seeds())
            await front.redis.aclose()

        async def figures() -> list[int]:
            redis = Redis.from_url(redis_server.url)
            seen = await status(redis, crawl_name)
            await redis.aclose()
            return [worker.pages for worker in seen.workers]

        asyncio.run(seed())
        command = [sys.executable, "-m", "gossamer.distributed.proof", redis_server.url]
        workers = [
            subprocess.Popen([*command, crawl_name, f"p{i}"], cwd=ROOT, stdout=subprocess.PIPE)
            for i in range(3)
        ]
        for proc in workers:
            proc.communicate(timeout=120)
            assert proc.returncode == 0
        report = site.report()
    assert report.concurrent_violations == 0
    assert report.crawl_delay_violations == 0
    assert report.robots_violations == 0
    assert report.repeated_fetches == 0
    assert report.missing == ()
    pages = asyncio.run(figures())
    assert sum(pages) == len(site.expected())  # each worker's own count, from its heartbeat
    assert len([count for count in pages if count]) >= 2  # the work was shared
