"""Redis round trips, commands, CPU and memory of the shared frontier (issues 12 and 32).

    python benchmarks/redis_frontier.py --pages 20000 --workers 1 2 4 8 --seen --queue 1000000

Starts its own ``redis-server`` on a free loopback port in a temporary folder (AOF on,
``appendfsync everysec``) and stops it at the end. Three measurements:

* **Per stored page**: ``--workers`` worker processes crawl a pretend web (no HTTP: each
  "fetch" answers at once with 5 links, 3 to new pages, 2 to pages already seen, deduplicated
  in the worker first as the real worker's link buffer does) through the worker's own rounds
  (``distributed/rounds.py``: batched leases, completions and links, one pipeline a round),
  ``--concurrency`` loops each, to a page target of ``--pages``. Counted: client round trips
  (every command or pipeline a connection sends), Redis commands including those run inside
  the Lua scripts (``INFO commandstats``), Redis's CPU (``INFO cpu`` user + sys, before and
  after) and the workers' CPU (their process time), per stored page, and pages/s.
* **Seen-set bytes per URL** (``--seen N ...``): N fingerprints added to the sharded integer
  sets of one partition; Redis's own figures (``INFO memory`` used_memory difference, and the
  sum of ``MEMORY USAGE`` over the shard keys), then a straight-line fit of two sizes
  extrapolated to 10 million URLs.
* **Queue bytes per job** (``--queue N``): N jobs as the frontier writes them in the lists of
  50,000 hosts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.distributed import RedisFrontier
from gossamer.distributed.codec import encode_job, seen_member
from gossamer.frontier.hosts import Job


@contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = Path(tempfile.mkdtemp(prefix="redis-bench-"))
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder)]
    command += ["--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
    command += ["--logfile", str(folder / "redis.log")]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while (
            subprocess.run(
                ["redis-cli", "-p", str(port), "ping"], capture_output=True, check=False
            ).stdout.strip()
            != b"PONG"
        ):
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("redis-server did not start")
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def page(i: int, hosts: int) -> Job:
    host = f"h{i % hosts}.test"
    return Job(url=f"http://{host}/p{i}", host=host)


class Trips:
    """Counts client round trips: each command or pipeline a connection sends is one."""

    calls = 0

    @classmethod
    def install(cls) -> None:
        from redis.asyncio.connection import Connection  # noqa: PLC0415

        original = Connection.send_packed_command

        async def counted(self: Connection, command: Any, check_health: bool = True) -> None:
            cls.calls += 1
            await original(self, command, check_health)

        Connection.send_packed_command = counted  # type: ignore[method-assign]


def worker_process(url: str, name: str, hosts: int, concurrency: int, out: Any) -> None:
    """One worker process: ``concurrency`` loops take leases from its rounds, "fetch" at once
    and complete with 5 links (3 new pages, 2 seen), deduplicated in the worker first, as
    the real worker's link buffer does; until the crawl's page target is stored."""
    Trips.install()
    asyncio.run(_worker(url, name, hosts, concurrency, out))


async def _worker(url: str, name: str, hosts: int, concurrency: int, out: Any) -> None:
    from gossamer.distributed.frontier import Completion  # noqa: PLC0415
    from gossamer.distributed.patience import Patience  # noqa: PLC0415
    from gossamer.distributed.rounds import Rounds  # noqa: PLC0415
    from gossamer.frontier.politeness import Answer, Outcome  # noqa: PLC0415

    redis = Redis.from_url(url)
    front = RedisFrontier(redis, "bench", name)
    await front.open()
    rounds = Rounds(
        front,
        concurrency=concurrency,
        patience=Patience(30.0, url),
        on_lost=lambda host: None,
        clock_offset=lambda: 0.0,
    )
    seen: set[str] = set()
    stored = [0]
    ok = Outcome(Answer.OK)
    cpu0 = time.process_time()
    Trips.calls = 0

    async def loop() -> None:
        while (lease := await rounds.take()) is not None:
            i = int(lease.job.url.rsplit("p", 1)[1])
            links = []
            for k in (i * 3 + 1, i * 3 + 2, i * 3 + 3, 0, 1):
                job = page(k, hosts)
                if job.url not in seen:
                    seen.add(job.url)
                    links.append(job)
            rounds.complete(Completion(lease, ok, count_page=True), links)
            stored[0] += 1
            await asyncio.sleep(0)

    async def beat() -> None:
        while True:
            await front.heartbeat(
                {"pages": stored[0], "errors": 0, "lease_ttl": 30}, dict(rounds.held)
            )
            await asyncio.sleep(1.0)

    pump = asyncio.create_task(rounds.run())
    beating = asyncio.create_task(beat())
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    await rounds.close()
    await pump
    await rounds.give_back()
    beating.cancel()
    cpu = time.process_time() - cpu0
    await redis.aclose()
    out.put({"pages": stored[0], "trips": Trips.calls, "cpu": cpu, "rounds": rounds.rounds})


async def _redis_cpu(url: str) -> float:
    redis = Redis.from_url(url)
    info = await redis.info("cpu")
    await redis.aclose()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def _setup(url: str, pages: int, hosts: int) -> None:
    config = CrawlConfig(
        seeds=Path("s"), out=Path("o"), politeness=PolitenessConfig(delay=0.0), max_pages=pages
    )
    redis = Redis.from_url(url)
    front = RedisFrontier(redis, "bench", "seeder")
    await front.create(config)
    await front.add(page(i, hosts) for i in range(hosts))
    await redis.config_resetstat()
    await redis.aclose()


async def _commands(url: str) -> int:
    redis = Redis.from_url(url)
    info = await redis.info("commandstats")
    await redis.aclose()
    return sum(int(v["calls"]) for k, v in info.items() if k not in ("cmdstat_info",))


def crawl(url: str, pages: int, workers: int, hosts: int, concurrency: int) -> dict[str, float]:
    import multiprocessing  # noqa: PLC0415

    asyncio.run(_setup(url, pages, hosts))
    before = asyncio.run(_redis_cpu(url))
    queue: Any = multiprocessing.Queue()
    started = time.perf_counter()
    procs = [
        multiprocessing.Process(
            target=worker_process, args=(url, f"w{i}", hosts, concurrency, queue)
        )
        for i in range(workers)
    ]
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    elapsed = time.perf_counter() - started
    for proc in procs:
        proc.join()
    redis_cpu = asyncio.run(_redis_cpu(url)) - before
    commands = asyncio.run(_commands(url))
    stored = sum(r["pages"] for r in results)
    return {
        "pages": stored,
        "round_trips_per_page": round(sum(r["trips"] for r in results) / stored, 3),
        "redis_commands_per_page": round(commands / stored, 2),
        "redis_cpu_us_per_page": round(redis_cpu / stored * 1e6, 1),
        "worker_cpu_us_per_page": round(sum(r["cpu"] for r in results) / stored * 1e6, 1),
        "pages_per_second": round(stored / elapsed, 1),
    }


async def seen_memory(url: str, counts: list[int]) -> dict[str, Any]:
    redis = Redis.from_url(url)
    await redis.flushall()
    base = int((await redis.info("memory"))["used_memory"])
    added = 0
    rows: list[dict[str, Any]] = []
    for count in sorted(counts):
        async with redis.pipeline(transaction=False) as pipe:
            for i in range(added, count):
                shard, member = seen_member(f"https://host-{i % 50_000}.example.org/page-{i}")
                pipe.sadd(f"gossamer:m:seen:{shard}", member)
                if len(pipe) >= 10_000:
                    await pipe.execute()
            await pipe.execute()
        added = count
        used = int((await redis.info("memory"))["used_memory"]) - base
        usage, keys, encodings = 0, 0, set()
        async for key in redis.scan_iter("gossamer:m:seen:*", count=5_000):
            usage += int(await redis.memory_usage(key, samples=0) or 0)
            keys += 1
            if keys <= 50:
                encodings.add(await redis.object("encoding", key))
        rows.append(
            {
                "urls": count,
                "keys": keys,
                "used_memory_bytes": used,
                "used_memory_bytes_per_url": round(used / count, 2),
                "memory_usage_bytes_per_url": round(usage / count, 2),
                "encodings": sorted(e.decode() for e in encodings),
            }
        )
    await redis.aclose()
    result: dict[str, Any] = {"sizes": rows}
    if len(rows) >= 2:
        a, b = rows[0], rows[1]  # the two smallest sizes; any larger one checks the line
        slope = (b["used_memory_bytes"] - a["used_memory_bytes"]) / (b["urls"] - a["urls"])
        fixed = b["used_memory_bytes"] - slope * b["urls"]
        result["per_url_marginal_bytes"] = round(slope, 2)
        result["fixed_bytes"] = round(fixed)
        result["bytes_per_url_at_10M_extrapolated"] = round(
            (fixed + slope * 10_000_000) / 10_000_000, 2
        )
    return result


async def queue_memory(url: str, count: int, hosts: int = 50_000) -> dict[str, Any]:
    """Bytes per queued job: ``count`` jobs (JSON as the frontier writes them, URLs of a
    realistic length, a referrer and a depth) in the per-host lists of ``hosts`` hosts."""
    redis = Redis.from_url(url)
    await redis.flushall()
    base = int((await redis.info("memory"))["used_memory"])
    async with redis.pipeline(transaction=False) as pipe:
        for i in range(count):
            host = f"host-{i % hosts}.example.org"
            job = Job(
                url=f"https://{host}/section-{i % 97}/page-{i}.html",
                host=host,
                depth=3,
                referrer=f"https://{host}/section-{i % 97}/",
            )
            pipe.rpush(f"gossamer:{{m:0}}:q:{host}", encode_job(job))
            if len(pipe) >= 10_000:
                await pipe.execute()
        await pipe.execute()
    used = int((await redis.info("memory"))["used_memory"]) - base
    sample = await redis.object("encoding", "gossamer:{m:0}:q:host-0.example.org")
    await redis.aclose()
    return {
        "jobs": count,
        "hosts": hosts,
        "bytes_per_job": round(used / count, 1),
        "encoding": sample.decode() if isinstance(sample, bytes) else sample,
    }


async def flush(url: str) -> None:
    redis = Redis.from_url(url)
    await redis.flushall()
    await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=64, help="loops per worker")
    parser.add_argument("--queue", type=int, default=0, help="jobs for the queue's bytes/job")
    parser.add_argument("--seen", type=int, nargs="*", default=[500_000, 1_000_000])
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with redis_server() as url:
        for workers in args.workers:
            asyncio.run(flush(url))
            report[f"crawl_{workers}_workers"] = crawl(
                url, args.pages, workers, args.hosts, args.concurrency
            )
        if args.seen:
            report["seen_set"] = asyncio.run(seen_memory(url, args.seen))
        if args.queue:
            report["queue"] = asyncio.run(queue_memory(url, args.queue))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
