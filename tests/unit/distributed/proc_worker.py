"""A shared-frontier worker in its own process, for the multi-process and SIGKILL tests.

``python -m tests.unit.distributed.proc_worker URL NAME WORKER crawl`` leases and completes
until the crawl is finished, recording in Redis (``gossamer:{NAME}:test:*``) each fetch with
Redis TIME at its start and end and any moment a host was held by two workers at once.
``... hold N`` leases N hosts, prints ``LEASED host token`` per lease, and waits to be killed.
"""

from __future__ import annotations

import asyncio
import sys

from redis.asyncio import Redis

from gossamer.distributed import Finished, Leased, RedisFrontier

FETCH_TIME = 0.002  # seconds a pretend fetch holds its host, so leases overlap in time


async def _time(redis: Redis) -> float:
    seconds, micros = await redis.time()
    return float(seconds) + micros / 1e6


async def crawl(front: RedisFrontier) -> None:
    redis, test = front.redis, front.prefix + "test:"
    while True:
        answer = await front.lease()
        if isinstance(answer, Finished):
            return
        if not isinstance(answer, Leased):
            await asyncio.sleep(0.002)  # another worker holds the hosts with work: ask again
            continue
        lease = answer.lease
        if await redis.incr(test + "busy:" + lease.host) != 1:
            await redis.rpush(test + "overlaps", lease.host)
        start = await _time(redis)
        await asyncio.sleep(FETCH_TIME)
        end = await _time(redis)
        await redis.decr(test + "busy:" + lease.host)
        record = f"{lease.host} {start!r} {end!r} {lease.job.url} {front.worker}"
        await redis.rpush(test + "fetches", record)
        await front.complete(lease)


async def hold(front: RedisFrontier, count: int) -> None:
    for _ in range(count):
        answer = await front.lease()
        assert isinstance(answer, Leased), answer
        print(f"LEASED {answer.lease.host} {answer.lease.token}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until killed


async def main(url: str, name: str, worker: str, mode: str, *rest: str) -> None:
    front = RedisFrontier(Redis.from_url(url), name, worker, ttl=1.0)
    try:
        if mode == "crawl":
            await crawl(front)
        else:
            await hold(front, int(rest[0]))
    finally:
        await front.redis.aclose()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
