"""The shared crawl's page target as credit: a lease takes one page of it, a completion counts
the page or gives it back, the credit of a worker gone comes back once its leases are reaped,
and once the target is stored nobody is handed more work."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.crawling.limits import page_room
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
        assert await a.redis.get(a.prefix + "credit") == b"0"  # third and fourth hold it
        assert isinstance(await a.complete(third, count_page=True), Done)
        assert isinstance(await a.lease(), Idle)  # one stored, one reserved
        done = await a.complete(fourth, count_page=True)
        assert isinstance(done, Done) and done.pages == 2
        assert await a.lease() == Halted("target")
        assert await b.lease() == Halted("target")
        assert await a.redis.get(a.prefix + "credit") == b"0"
        await closed([a, b])

    asyncio.run(main())


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    stored=st.integers(0, 12),
    reserved=st.integers(0, 12),
    target=st.integers(0, 15),  # 0: no page target
)
def test_lease_is_the_lua_mirror_of_page_room(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory,
    stored: int, reserved: int, target: int,
) -> None:  # fmt: skip
    """A lease hands out work, answers idle or stops for the target exactly as
    ``crawling/limits.page_room`` says, for the pages stored and the credit another worker,
    alive, holds (``reserved``)."""
    tmp = tmp_path_factory.mktemp("room")

    async def main() -> None:
        config = dataclasses.replace(crawl_config(tmp, delay=0.0), max_pages=target or None)
        (front,) = await created(redis_server, f"room-{next(_rooms)}", config, clock=FakeClock())
        await front.add([Job(url="http://r.test/", host="r.test")])
        await front.redis.set(front.part_prefix(0) + "pages", stored)
        if target:
            await front.redis.set(front.prefix + "credit", max(0, target - stored - reserved))
            await front.redis.hset(front.prefix + "granted", "other", reserved)
            await front.redis.hset(front.prefix + "beats", "other", repr(await front.now()))
        answer = await front.lease()
        await closed([front])
        room = page_room(stored, reserved, target or None)
        expected = {True: Leased, False: Idle, None: Halted}[room]
        assert isinstance(answer, expected), (answer, room)

    asyncio.run(main())


_rooms = itertools.count()
