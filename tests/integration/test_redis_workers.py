"""The shared frontier with workers in separate processes and a real redis-server: one worker
per host at a time, delays across workers, a SIGKILLed worker, and Redis restarts with AOF.

Separate processes stand for separate machines here: they share nothing but the Redis
connection, which is all a worker on another machine would share.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from redis.asyncio import Redis

from gossamer.distributed import Done, Lease, Leased, Lost, RedisFrontier
from gossamer.distributed.keys import crawl_prefix
from gossamer.frontier.hosts import Job
from tests.unit.distributed.redis_rig import (
    RedisServer,
    closed,
    crawl_config,
    crawl_name,
    created,
    fresh_server,
    redis_server,
)

__all__ = ["crawl_name", "fresh_server", "redis_server"]  # fixtures used below

ROOT = Path(__file__).resolve().parents[2]
DELAY = 0.02


def _worker(server: RedisServer, name: str, worker: str, *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.unit.distributed.proc_worker", server.url, name]
    return subprocess.Popen(
        [*command, worker, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def _jobs(hosts: int, pages: int) -> list[Job]:
    return [
        Job(url=f"http://h{h}.test/{p}", host=f"h{h}.test")
        for h in range(hosts)
        for p in range(pages)
    ]


def test_three_worker_processes_share_hosts_politely(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    jobs = _jobs(12, 6)

    async def seed() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=DELAY))
        assert await front.add(jobs) == len(jobs)
        await closed([front])

    async def results() -> tuple[list[str], list[str]]:
        redis = Redis.from_url(redis_server.url, decode_responses=True)
        test = crawl_prefix(crawl_name) + "test:"
        fetches = await redis.lrange(test + "fetches", 0, -1)
        overlaps = await redis.lrange(test + "overlaps", 0, -1)
        await redis.aclose()
        return [str(f) for f in fetches], [str(o) for o in overlaps]

    asyncio.run(seed())
    workers = [_worker(redis_server, crawl_name, f"p{i}", "crawl") for i in range(3)]
    for proc in workers:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    fetches, overlaps = asyncio.run(results())
    assert overlaps == []  # never two workers on one host at once
    rows = [line.split() for line in fetches]
    assert sorted(row[3] for row in rows) == sorted(job.url for job in jobs)  # each page once
    assert len({row[4] for row in rows}) > 1  # the work was shared
    by_host: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for host, start, end, *_ in rows:
        by_host[host].append((float(start), float(end)))
    for host, spans in by_host.items():
        spans.sort()
        gaps = [b[0] - a[1] for a, b in itertools.pairwise(spans)]
        assert min(gaps) >= DELAY, f"{host}: a request {min(gaps):.4f}s after the last one"


def test_sigkilled_worker_loses_nothing(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    jobs = _jobs(4, 2)

    async def seed() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=0.0))
        await front.add(jobs)
        await closed([front])

    asyncio.run(seed())
    doomed = _worker(redis_server, crawl_name, "doomed", "hold", "3")
    assert doomed.stdout is not None
    held = [doomed.stdout.readline().split() for _ in range(3)]
    assert all(line[0] == "LEASED" for line in held)
    doomed.kill()
    doomed.wait(timeout=30)

    async def recover() -> None:
        redis = Redis.from_url(redis_server.url)
        seconds, micros = await redis.time()
        later = seconds + micros / 1e6 + 5.0  # past the 1 s TTL, without waiting for it
        heir = RedisFrontier(redis, crawl_name, "heir", clock=lambda: later)
        hosts, requeued = await heir.reap()
        assert sorted(hosts) == sorted(line[1] for line in held)
        assert requeued == 3
        dead = held[0]
        job = Job(url=f"http://{dead[1]}/", host=dead[1])
        stale = await heir.complete(Lease(host=dead[1], token=dead[2], job=job))
        assert stale == Lost()  # the dead worker's token no longer completes anything
        fetched = []
        while isinstance(answer := await heir.lease(), Leased):
            fetched.append(answer.lease.job.url)
            assert isinstance(await heir.complete(answer.lease), Done)
        assert sorted(fetched) == sorted(job.url for job in jobs)  # nothing was lost
        await redis.aclose()

    asyncio.run(recover())


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
def test_redis_restart_with_aof_loses_no_queued_url(
    fresh_server: RedisServer, tmp_path: Path, kill: bool
) -> None:
    jobs = _jobs(40, 25)

    async def before() -> tuple[dict[str, list[str]], list[str]]:
        [front] = await created(fresh_server, "aof", crawl_config(tmp_path, delay=0.0))
        assert await front.add(jobs) == len(jobs)
        leases = [(await front.lease()) for _ in range(3)]
        assert all(isinstance(answer, Leased) for answer in leases)
        state = await _snapshot(front)
        await closed([front])
        return state

    async def after() -> tuple[dict[str, list[str]], list[str]]:
        front = RedisFrontier(Redis.from_url(fresh_server.url), "aof", "w0")
        state = await _snapshot(front)
        assert await front.add(jobs) == 0  # the seen-set came back too
        await closed([front])
        return state

    queued = asyncio.run(before())
    fresh_server.restart(kill=kill)
    assert asyncio.run(after()) == queued


async def _snapshot(front: RedisFrontier) -> tuple[dict[str, list[str]], list[str]]:
    """Every host's queue and the leased in-flight URLs."""
    queues = {f"h{h}.test": [j.url for j in await front.queued(f"h{h}.test")] for h in range(40)}
    in_flight = []
    for part in range(front.parts):
        leased: dict[bytes, bytes] = await front.redis.hgetall(front.part_prefix(part) + "lease")
        for _, raw in sorted(leased.items()):
            in_flight.append(raw.decode().split("\t", 3)[3])  # token, worker, reserved, job
    return queues, in_flight
