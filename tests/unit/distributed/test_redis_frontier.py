"""The shared frontier against a real redis-server: dedup, leases, delays, the reaper, fencing.

Time is an injected clock (FakeClock) moved by hand, so delays and lease expiry are tested
without waiting; the Lua scripts take it instead of Redis TIME.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from redis.asyncio import Redis

from gossamer.distributed import (
    Done,
    Finished,
    Halted,
    Idle,
    Lease,
    Leased,
    Lost,
    RedisFrontier,
    SharedFrontierError,
    Wait,
    set_state,
    status,
)
from gossamer.distributed.connect import connect
from gossamer.frontier.hosts import Job
from tests.unit.distributed.redis_rig import (
    FakeClock,
    RedisServer,
    closed,
    crawl_config,
    created,
    free_port,
)


def job(url: str, host: str = "a.test") -> Job:
    return Job(url=url, host=host)


async def leased(frontier: RedisFrontier) -> Lease:
    answer = await frontier.lease()
    assert isinstance(answer, Leased), answer
    return answer.lease


def test_seen_set_queues_each_url_once(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path))
        urls = [f"http://a.test/{i}" for i in range(50)]
        assert await front.add(job(u) for u in urls + urls[:10]) == 50
        assert await front.add(job(u) for u in urls) == 0
        assert [j.url for j in await front.queued("a.test")] == urls
        lease = await leased(front)
        # a link back to a queued or fetched page is not queued again
        done = await front.complete(lease, links=[job(urls[0]), job("http://a.test/new")])
        assert isinstance(done, Done)
        assert done.queued == 1
        await closed([front])

    asyncio.run(main())


def test_leases_are_exclusive_across_concurrent_workers(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    hosts = [f"h{i}.test" for i in range(12)]
    urls = [f"http://{h}/{p}" for h in hosts for p in range(6)]

    async def main() -> None:
        fronts = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=0.0), 6)
        await fronts[0].add(Job(url=u, host=u.split("/")[2]) for u in urls)
        busy: set[str] = set()
        fetched: list[str] = []
        changed = asyncio.Condition()
        completions = [0]  # bumped at every completion, so no wake-up is missed

        async def worker(front: RedisFrontier) -> None:
            while True:
                before = completions[0]

                def moved(before: int = before) -> bool:
                    return completions[0] != before

                answer = await front.lease()
                if isinstance(answer, Finished):
                    return
                if not isinstance(answer, Leased):  # Idle: others hold every host with work
                    async with changed:
                        await changed.wait_for(moved)
                    continue
                lease = answer.lease
                assert lease.host not in busy, f"{lease.host} leased twice at once"
                busy.add(lease.host)
                await asyncio.sleep(0)  # let the other workers try to lease meanwhile
                busy.discard(lease.host)
                fetched.append(lease.job.url)
                assert isinstance(await front.complete(lease), Done)
                async with changed:
                    completions[0] += 1
                    changed.notify_all()

        async with asyncio.TaskGroup() as group:
            for front in fronts:
                group.create_task(worker(front))
        assert sorted(fetched) == sorted(urls)
        await closed(fronts)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_delay_and_crawl_delay_hold_across_workers(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def main() -> None:
        config = crawl_config(tmp_path, delay=2.0, crawl_delay_cap=30.0)
        a, b = await created(redis_server, crawl_name, config, 2, clock=clock)
        await a.add(job(f"http://a.test/{i}") for i in range(4))
        lease = await leased(a)
        assert isinstance(await b.lease(), Idle)  # the only host is leased to a
        clock.now += 0.5
        assert isinstance(await a.complete(lease), Done)
        nxt = (await a.timing("a.test")).next_time
        assert nxt == pytest.approx(clock.now + 2.0)
        clock.now += 1.0
        assert await b.lease() == Wait(nxt)  # another worker waits out the delay
        clock.now = nxt
        lease = await leased(b)
        assert await b.set_crawl_delay("a.test", 5.0) == 5.0
        assert isinstance(await b.complete(lease), Done)
        nxt = (await b.timing("a.test")).next_time
        assert nxt == pytest.approx(clock.now + 5.0)  # Crawl-delay above delay
        assert await a.set_crawl_delay("a.test", 900.0) == 30.0  # clamped by the stored cap
        await closed([a, b])

    asyncio.run(main())


def test_faults_back_off_and_retries_are_queued(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def main() -> None:
        config = crawl_config(tmp_path, delay=0.5, max_backoff=60.0)
        [front] = await created(redis_server, crawl_name, config, clock=clock)
        await front.add([job("http://a.test/1"), job("http://a.test/2")])
        waits, retries = [], []
        for _ in range(3):
            lease = await leased(front)
            retries.append(lease.job.retries)
            done = await front.complete(lease, outcome="fault", retry=lease.job.again())
            assert isinstance(done, Done)
            nxt = (await front.timing("a.test")).next_time
            waits.append(nxt - clock.now)
            clock.now = nxt
        assert waits == pytest.approx([1.0, 2.0, 4.0])  # max(delay, 1) doubled per fault
        lease = await leased(front)
        retries.append(lease.job.retries)
        done = await front.complete(lease, outcome="slow", retry_after=3600.0)
        assert isinstance(done, Done)
        nxt = (await front.timing("a.test")).next_time
        assert nxt - clock.now == pytest.approx(60.0)  # capped by max_backoff
        clock.now = nxt
        lease = await leased(front)
        retries.append(lease.job.retries)
        assert isinstance(await front.complete(lease), Done)
        assert (await front.host_state("a.test"))["errors"] == 0
        # each failed job came back at the end of the queue, marked as a retry
        assert retries == [0, 0, 1, 1, 2]
        assert await front.queued("a.test") == []
        await closed([front])

    asyncio.run(main())


def test_dead_worker_returns_its_hosts_and_in_flight_urls(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def main() -> None:
        config = crawl_config(tmp_path, delay=1.0)
        a, b = await created(redis_server, crawl_name, config, 2, clock=clock, ttl=10.0)
        await a.add(job(f"http://a.test/{i}") for i in range(3))
        lost = await leased(a)
        clock.now += 6.0
        held = {lost.host: lost.token}
        assert await a.heartbeat({"pages": 0, "errors": 0}, held) == {"a.test"}
        clock.now += 6.0  # 12 s after the lease: alive thanks to the heartbeat
        assert isinstance(await b.lease(), Idle)
        clock.now += 5.0  # heartbeat stopped: the lease ran out at 16 s
        # the lease step reaps first; the dead worker's request may still be reaching the
        # host, so the host's delay counts from the reaping
        assert await b.lease() == Wait(clock.now + 1.0)
        clock.now += 1.0
        taken = await leased(b)
        assert taken.job == lost.job  # the in-flight URL went back to the front of the queue
        assert taken.token != lost.token
        assert await a.complete(lost) == Lost()  # fencing: the stale token cannot complete
        assert await a.heartbeat({"pages": 0, "errors": 0}, held) == set()
        assert [j.url for j in await a.queued("a.test")] == ["http://a.test/1", "http://a.test/2"]
        assert isinstance(await b.complete(taken), Done)
        await closed([a, b])

    asyncio.run(main())


def test_reaper_alone_requeues_expired_leases(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    clock = FakeClock()

    async def main() -> None:
        config = crawl_config(tmp_path, delay=0.0)
        a, b = await created(redis_server, crawl_name, config, 2, clock=clock, ttl=5.0)
        await a.add(Job(url=f"http://h{i}.test/", host=f"h{i}.test") for i in range(3))
        first, second = await leased(a), await leased(a)
        assert await b.reap() == ([], 0)  # nothing expired yet
        clock.now += 5.5
        hosts, requeued = await b.reap()
        assert sorted(hosts) == sorted([first.host, second.host])
        assert requeued == 2
        assert await a.complete(first) == Lost()
        again = {(await leased(b)).job.url for _ in range(3)}
        assert again == {f"http://h{i}.test/" for i in range(3)}
        await closed([a, b])

    asyncio.run(main())


def test_finished_only_when_nothing_is_queued_or_leased(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        a, b = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=0.0), 2)
        await a.add([job("http://a.test/")])
        lease = await leased(a)
        assert isinstance(await b.lease(), Idle)
        await a.complete(lease, links=[job("http://a.test/next")])
        lease = await leased(b)
        assert lease.job.url == "http://a.test/next"
        await b.complete(lease)
        assert isinstance(await a.lease(), Finished)
        await closed([a, b])

    asyncio.run(main())


def test_pause_resume_stop_and_status(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=0.0))
        await front.add([job("http://a.test/"), job("http://b.test/", "b.test")])
        lease = await leased(front)
        await front.heartbeat({"pages": 7, "errors": 1}, {lease.host: lease.token})
        await set_state(front.redis, crawl_name, "paused")
        assert await front.lease() == Halted("paused")
        seen = await status(front.redis, crawl_name)
        assert (seen.state, seen.queued_hosts, seen.leased_hosts) == ("paused", 1, 1)
        [figures] = seen.workers
        assert (figures.worker, figures.pages, figures.errors, figures.hosts) == ("w0", 7, 1, 1)
        await set_state(front.redis, crawl_name, "running")
        assert isinstance(await front.lease(), Leased)
        await set_state(front.redis, crawl_name, "stopped")
        assert await front.lease() == Halted("stopped")
        assert isinstance(await front.complete(lease), Done)  # in-flight work still lands
        with pytest.raises(SharedFrontierError, match="no crawl named"):
            await set_state(front.redis, "absent", "paused")
        await front.redis.hset(front.prefix + "workers", "evil", "{'pages': 1}")
        with pytest.raises(SharedFrontierError, match="evil"):
            await status(front.redis, crawl_name)
        await closed([front])

    asyncio.run(main())


def test_per_host_budget_is_shared(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        config = crawl_config(tmp_path)
        config = type(config)(
            seeds=config.seeds,
            out=config.out,
            scope=type(config.scope)(max_pages_per_host=3),
        )
        [front] = await created(redis_server, crawl_name, config)
        assert await front.add(job(f"http://a.test/{i}") for i in range(10)) == 3
        await closed([front])

    asyncio.run(main())


def test_malformed_job_in_redis_is_refused(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [front] = await created(redis_server, crawl_name, crawl_config(tmp_path, delay=0.0))
        prefix = front.part_prefix(front.part("x.test"))
        await front.redis.rpush(prefix + "q:x.test", "cos\nsystem\n(S'ls'\ntR.")  # a pickle
        await front.redis.zadd(prefix + "ready", {"x.test": 0})
        with pytest.raises(SharedFrontierError, match="not JSON"):
            await front.lease()
        await closed([front])

    asyncio.run(main())


def test_unreachable_redis_is_one_clear_error() -> None:
    async def main() -> None:
        redis = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
        front = RedisFrontier(redis, "absent", "w0")
        with pytest.raises(SharedFrontierError, match="Redis could not run a frontier step"):
            await front.lease()
        with pytest.raises(SharedFrontierError, match="Redis could not read the crawl's"):
            await front.stored_settings()
        await redis.aclose()

    asyncio.run(main())


def test_unreachable_cluster_is_one_clear_error() -> None:
    """No node of a cluster answers: the cluster client's own exception (no RedisError) is
    said as ours too, so a worker retries it under its patience and then says one line."""

    async def main() -> None:
        redis = connect(f"redis+cluster://127.0.0.1:{free_port()}")
        front = RedisFrontier(redis, "absent", "w0")
        with pytest.raises(SharedFrontierError, match="Redis could not"):
            await front.create(crawl_config(Path("/nonexistent")))
        await redis.aclose()

    asyncio.run(main())


def test_a_lease_whose_answer_was_lost_is_not_kept_alive(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    """A lease step that ran in Redis but whose answer never reached the worker (the
    connection dropped): the worker's heartbeat names the leases it knows, so that one
    expires."""
    clock = FakeClock()

    async def main() -> None:
        config = crawl_config(tmp_path, delay=0.0)
        a, b = await created(redis_server, crawl_name, config, 2, clock=clock, ttl=10.0)
        await a.add([job("http://a.test/1"), job("http://b.test/1", "b.test")])
        known = await leased(a)
        orphan = await leased(a)  # say this answer was lost on the way
        clock.now += 6.0
        mine = {known.host: known.token}
        assert await a.heartbeat({"pages": 0, "errors": 0}, mine) == {known.host}
        clock.now += 6.0  # the orphan ran out at 10 s, the known lease lives to 16 s
        taken = await leased(b)
        assert (taken.host, taken.job) == (orphan.host, orphan.job)
        assert isinstance(await a.complete(known), Done)
        await closed([a, b])

    asyncio.run(main())
