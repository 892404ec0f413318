"""``ctl status`` and the Crawl page of a shared crawl tell the truth: a silent worker is gone
and its hosts wait for takeover, every total is the sum of its rows, a host visited by two
workers is one domain. Against a real redis-server; a worker is made silent by heartbeating
through the real scripts with an injected clock a minute and more in the past, never by
waiting."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.distributed import Leased, RedisFrontier, status
from gossamer.distributed.livestatus import publish_status, worker_status
from gossamer.frontier.hosts import Job
from gossamer.stats import CrawlStats
from gossamer.web.redisfeed import RedisFeed
from tests.unit.distributed.redis_rig import FakeClock, RedisServer, closed, crawl_config, created

TTL = 10.0


def jobs(*hosts: str) -> list[Job]:
    return [Job(url=f"http://{host}/", host=host) for host in hosts]


async def take(frontier: RedisFrontier) -> str:
    answer = await frontier.lease()
    assert isinstance(answer, Leased), answer
    return answer.lease.host


async def redis_now(frontier: RedisFrontier) -> float:
    seconds, micros = await frontier.redis.time()
    return float(seconds) + micros / 1e6


async def silent(frontier: RedisFrontier, name: str, worker: str) -> RedisFrontier:
    """A handle of ``worker`` whose clock is a minute behind Redis's: what it leases and its
    heartbeat look as a worker's killed with SIGKILL a minute ago."""
    clock = FakeClock(await redis_now(frontier) - 60.0)
    return RedisFrontier(frontier.redis, name, worker, ttl=TTL, clock=clock)


def said(stats: CrawlStats, worker: str, state: str = "running") -> dict[str, Any]:
    return worker_status(
        stats,
        worker=worker,
        state=state,
        reason="",
        leased=0,
        concurrency=2,
        targets=(None, None),
    )


def pages_on(*hosts: str) -> CrawlStats:
    stats = CrawlStats()
    for host in hosts:
        stats.host(host).pages += 1
        stats.pages += 1
    return stats


def test_a_silent_worker_is_gone_and_its_hosts_wait_for_takeover(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [live] = await created(redis_server, crawl_name, crawl_config(tmp_path), ttl=TTL)
        await live.add(jobs("a.test", "b.test", "c.test"))
        assert await take(live) == "a.test"
        await live.heartbeat({"pages": 3, "errors": 0})
        dead = await silent(live, crawl_name, "dead")
        assert await take(dead) == "b.test"
        await dead.heartbeat({"pages": 5, "errors": 1})
        ended = await silent(live, crawl_name, "ended")
        await ended.heartbeat({"pages": 2, "errors": 0})
        last = said(pages_on("c.test"), "ended", state="ended")
        await publish_status(live.redis, live.prefix, "ended", last)

        found = await status(live.redis, crawl_name, ttl=TTL)
        rows = {w.worker: (w.state, w.hosts, w.takeover) for w in found.workers}
        assert rows == {"dead": ("gone", 0, 1), "ended": ("ended", 0, 0), "w0": ("working", 1, 0)}
        assert (found.leased_hosts, found.takeover_hosts) == (1, 1)
        assert [w.worker for w in found.alive] == ["w0"]
        # a worker's own longer TTL, if it says one, is what it is judged by
        await dead.heartbeat({"pages": 5, "errors": 1, "lease_ttl": 3600})
        found = await status(live.redis, crawl_name, ttl=TTL)
        assert {w.worker: w.state for w in found.workers}["dead"] == "working"
        await closed([live])

    asyncio.run(main())


def test_the_leased_total_is_the_sum_of_the_rows(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    """A worker that leased hosts since its last heartbeat (or before its first) is counted
    with them, in its row as in the total: both are read from the leases at one moment."""

    async def main() -> None:
        config = crawl_config(tmp_path, delay=0.0)
        a, b = await created(redis_server, crawl_name, config, workers=2, ttl=TTL)
        await a.add(jobs("a.test", "b.test", "c.test", "d.test"))
        await a.heartbeat({"pages": 0, "errors": 0})
        await take(a)
        await take(a)
        await take(b)  # b has not beaten yet
        found = await status(a.redis, crawl_name, ttl=TTL)
        assert {w.worker: w.hosts for w in found.workers} == {"w0": 2, "w1": 1}
        assert found.leased_hosts == sum(w.hosts for w in found.workers) == 3
        assert found.queued_hosts == 1
        await closed([a, b])

    asyncio.run(main())


def test_the_crawl_page_counts_a_shared_host_once_and_shows_the_dead(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [live] = await created(redis_server, crawl_name, crawl_config(tmp_path), ttl=TTL)
        await live.add(jobs("a.test", "b.test", "c.test"))
        await take(live)
        await live.heartbeat({"pages": 2, "errors": 0})
        await publish_status(
            live.redis, live.prefix, "w0", said(pages_on("a.test", "b.test"), "w0")
        )
        dead = await silent(live, crawl_name, "dead")
        await take(dead)
        await dead.heartbeat({"pages": 1, "errors": 0})
        # the dead worker visited a.test too, before the host went to w0
        await publish_status(live.redis, live.prefix, "dead", said(pages_on("a.test"), "dead"))

        feed = RedisFeed(live.redis, crawl_name, ttl=TTL)
        await feed.refresh()
        shown = feed.status
        assert shown["totals"]["pages"] == 3
        assert shown["totals"]["domains"] == 2
        assert shown["hosts"]["known"] == 2
        rows = {row["name"]: row for row in shown["workers"]}
        assert (rows["dead"]["state"], rows["dead"]["leased_hosts"]) == ("gone", 0)
        assert rows["dead"]["takeover_hosts"] == 1
        assert (rows["w0"]["state"], rows["w0"]["leased_hosts"]) == ("running", 1)
        assert shown["hosts"]["visiting"] == sum(r["leased_hosts"] for r in rows.values()) == 1
        assert shown["in_flight"] == sum(r["in_flight"] for r in rows.values()) == 1
        assert shown["hosts"]["takeover"] == 1
        assert shown["concurrency"] == 2  # the dead worker's loops are not counted
        assert "warning" not in await feed.command({"cmd": "resume"})
        await feed.close()

    asyncio.run(main())


def test_resuming_from_the_crawl_page_with_no_live_worker_warns(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path), ttl=TTL)
        dead = await silent(front, crawl_name, "dead")
        await dead.heartbeat({"pages": 1, "errors": 0})
        feed = RedisFeed(front.redis, crawl_name, ttl=TTL)
        reply = await feed.command({"cmd": "resume"})
        await feed.close()
        assert (reply["ok"], reply["state"]) == (True, "running")
        assert reply["warning"].startswith("no worker is alive to crawl it: start one with")

    asyncio.run(main())
