"""The shared crawl's page target in the LEASE and COMPLETE scripts: a lease reserves one page
of it, a completion counts the page or gives the reservation back, a reaped lease gives it
back, and once the target is stored nobody is handed more work."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.distributed import Done, Halted, Idle, Lease, Leased, Lost, RedisFrontier
from gossamer.frontier.hosts import Job
from tests.unit.distributed.redis_rig import FakeClock, RedisServer, closed, crawl_config, created


async def _leased(front: RedisFrontier) -> Lease:
    answer = await front.lease()
    assert isinstance(answer, Leased), answer
    return answer.lease


def test_leases_reserve_the_page_target_and_give_back_what_they_did_not_store(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def main() -> None:
        config = dataclasses.replace(crawl_config(tmp_path, delay=0.0), max_pages=2)
        a, b = await created(redis_server, crawl_name, config, 2, clock=clock, ttl=5.0)
        await a.add(Job(url=f"http://h{i}.test/", host=f"h{i}.test") for i in range(5))
        first, second = await _leased(a), await _leased(b)
        assert isinstance(await a.lease(), Idle)  # two pages reserved: the target is covered
        done = await a.complete(first)  # not a page (a 404, robots.txt): the reservation back
        assert isinstance(done, Done)
        clock.now += 6.0  # b's lease expires: reaped, its reservation back with its job
        third, fourth = await _leased(a), await _leased(a)
        assert await b.complete(second, count_page=True) == Lost()  # too late to count
        assert await a.redis.get(a.prefix + "reserved") == b"2"  # third and fourth
        assert isinstance(await a.complete(third, count_page=True), Done)
        assert isinstance(await a.lease(), Idle)  # one stored, one reserved
        done = await a.complete(fourth, count_page=True)
        assert isinstance(done, Done) and done.pages == 2
        assert await a.lease() == Halted("target")
        assert await b.lease() == Halted("target")
        assert await a.redis.get(a.prefix + "reserved") == b"0"
        await closed([a, b])

    asyncio.run(main())
