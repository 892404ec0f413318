"""Redis round-trips and memory of the shared frontier (issue 12).

    python benchmarks/redis_frontier.py --pages 5000 --workers 4 --seen 1000000

Starts its own ``redis-server`` on a free loopback port in a temporary folder (AOF on,
``appendfsync everysec``) and stops it at the end. Two measurements:

* **Commands per page**: asyncio workers crawl a pretend web (no HTTP: each "fetch" returns 5
  links, 2 of them to pages already seen) through :class:`RedisFrontier`, heartbeating every
  50 pages. Counted: client round-trips per page (what crosses the network) and Redis commands
  per page including those run inside the Lua scripts (``INFO commandstats``).
* **Seen-set bytes per URL**: N fingerprints added to the sharded integer sets; Redis's own
  figures (``INFO memory`` used_memory difference, and the sum of ``MEMORY USAGE`` over the
  shard keys), then a straight-line fit of two sizes extrapolated to 10 million URLs.
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
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.distributed import Finished, Leased, RedisFrontier
from gossamer.distributed.codec import seen_member
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


class Counting:
    """Counts the commands a client sends (one per script call or pipeline command)."""

    def __init__(self, redis: Redis) -> None:
        self.calls = 0
        original: Callable[..., Awaitable[Any]] = redis.execute_command

        async def counted(*args: Any, **options: Any) -> Any:
            self.calls += 1
            return await original(*args, **options)

        redis.execute_command = counted  # type: ignore[method-assign]


async def crawl(url: str, pages: int, workers: int, hosts: int) -> dict[str, float]:
    config = CrawlConfig(seeds=Path("s"), out=Path("o"), politeness=PolitenessConfig(delay=0.0))
    clients = [Redis.from_url(url) for _ in range(workers)]
    fronts = [RedisFrontier(c, "bench", f"w{i}") for i, c in enumerate(clients)]
    await fronts[0].create(config)
    await fronts[0].add(page(i, hosts) for i in range(hosts))
    await clients[0].config_resetstat()
    counters = [Counting(c) for c in clients]
    fetched = [0]
    started = time.perf_counter()

    async def worker(front: RedisFrontier) -> None:
        done = 0
        while fetched[0] < pages:
            answer = await front.lease()
            if isinstance(answer, Finished):
                return
            if not isinstance(answer, Leased):
                await asyncio.sleep(0.001)
                continue
            i = int(answer.lease.job.url.rsplit("p", 1)[1])
            links = [page(i * 3 + k, hosts) for k in range(1, 4)] + [page(0, hosts), page(1, hosts)]
            await front.complete(answer.lease, links=links)
            fetched[0] += 1
            done += 1
            if done % 50 == 0:
                await front.heartbeat({"pages": done, "errors": 0})

    await asyncio.gather(*(worker(front) for front in fronts))
    elapsed = time.perf_counter() - started
    info = await clients[0].info("commandstats")
    inside = sum(int(v["calls"]) for v in info.values())
    trips = sum(counter.calls for counter in counters) - 1  # less the INFO call itself
    for client in clients:
        await client.aclose()
    return {
        "pages": fetched[0],
        "round_trips_per_page": round(trips / fetched[0], 3),
        "redis_commands_per_page": round(inside / fetched[0], 2),
        "pages_per_second": round(fetched[0] / elapsed, 1),
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


async def flush(url: str) -> None:
    redis = Redis.from_url(url)
    await redis.flushall()
    await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--seen", type=int, nargs="*", default=[500_000, 1_000_000])
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with redis_server() as url:
        for workers in args.workers:
            asyncio.run(flush(url))
            report[f"crawl_{workers}_workers"] = asyncio.run(
                crawl(url, args.pages, workers, args.hosts)
            )
        if args.seen:
            report["seen_set"] = asyncio.run(seen_memory(url, args.seen))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
