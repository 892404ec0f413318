"""A crawl shared through Redis, at issue 12's scale, judged by the test web's own audit.

Two parts, one run:

1. **Crash run**: ``gossamer crawl --frontier`` and ``--crash-workers`` - 1 ``gossamer worker``
   processes (4 in all by default) crawl a test web of ``--hosts`` hosts x ``--pages`` pages
   (the special hosts included: Crawl-delay, a 5xx robots.txt, redirects). Once the last
   worker has stored ``--kill-after`` pages it is killed with SIGKILL; once the others have
   gone on a while, Redis is killed too and started again from its AOF. The audit then
   counts, across every worker: moments with two requests in flight to one host name,
   Crawl-delay and robots.txt violations, expected pages never fetched, and pages fetched
   twice (allowed: the killed worker's requests in flight, at most its concurrency).
2. **Throughput**: a latency-bound web (every answer ``--latency`` late; each worker's
   concurrency, not the server, is the limit) crawled to ``--target`` pages by each number
   of workers in ``--speed-workers`` (1, 2 and 4 by default; none: no throughput part), and
   Redis's commands and network bytes per stored page (``INFO``), with the workers' CPU per
   page (``os.wait4``).

    .venv/bin/python benchmarks/shared_crawl.py --hosts 210 --pages 100

Needs ``redis-server`` (``make redis`` or apt). Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from gossamer.distributed.keys import crawl_prefix, part_prefix
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

RESOLVE = "*.web.test:127.0.0.1"
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.5\nrobots_retries = 1\n"
    "[scope]\nmax_depth = 50\n"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Redis:
    """redis-server with AOF in a folder; ``fsync`` as Redis's ``appendfsync``: ``always``
    for the crash run (a restart then loses no acknowledged step, so every repeated fetch
    is one the killed worker had in flight), ``everysec`` (Redis's default) otherwise."""

    def __init__(self, folder: Path, fsync: str = "everysec") -> None:
        self.folder, self.port, self.fsync = folder, free_port(), fsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        server = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [server, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", self.fsync, "--save", "",
             "--logfile", str(self.folder / "log")],
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                return
            except redis.exceptions.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def stop(self, *, kill: bool = False) -> None:
        if self.process is not None:
            (self.process.kill if kill else self.process.terminate)()
            self.process.wait(timeout=30)
            self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


@dataclass
class Worker:
    name: str
    process: subprocess.Popen[bytes]
    cpu: float = 0.0
    code: int | None = None

    def wait(self) -> None:
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.code = self.process.returncode
        self.cpu = usage.ru_utime + usage.ru_stime


def spawn(args: list[str], name: str, log: Path) -> Worker:
    argv = [sys.executable, "-m", "gossamer", *args, "--worker-name", name]
    with log.open("wb") as out:
        return Worker(name, subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT))


def pages_of(client: redis.Redis, crawl: str) -> dict[str, int]:
    try:
        raw = client.hgetall(crawl_prefix(crawl) + "workers")
    except redis.exceptions.RedisError:
        return {}
    return {k.decode(): int(json.loads(v)["pages"]) for k, v in raw.items()}


def wait_for(condition, what: str, limit: float = 600.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def crash_run(args: argparse.Namespace, work: Path) -> dict[str, object]:
    spec = WebSpec(seed=args.seed, hosts=args.hosts, pages_per_host=args.pages, seed_hosts=20,
                   latency=args.crash_latency)  # fmt: skip
    server = Redis(work / "redis-crash", fsync="always")
    server.start()
    (work / "c.toml").write_text(CONFIG)
    common = ["--frontier", server.url, "--name", "crash", "--lease-ttl", "5",
              "--resolve", RESOLVE, "--concurrency", str(args.concurrency)]  # fmt: skip
    try:
        with ThreadedTestWeb(build_web(spec)) as site:
            seeds = work / "seeds.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            started = time.monotonic()
            workers = [spawn(["crawl", str(seeds), "--out", str(work / "w1"), "--config",
                              str(work / "c.toml"), "--no-progress", *common], "w1",
                             work / "w1.log")]  # fmt: skip
            client = server.client()
            wait_for(lambda: bool(pages_of(client, "crash")), "the crawl to start")
            for name in (f"w{i}" for i in range(2, args.crash_workers + 1)):
                workers.append(spawn(["worker", "--out", str(work / name), *common], name,
                                     work / f"{name}.log"))  # fmt: skip
            last = f"w{args.crash_workers}"  # the one killed
            wait_for(lambda: pages_of(client, "crash").get(last, 0) >= args.kill_after, last)
            workers[-1].process.send_signal(signal.SIGKILL)
            workers[-1].wait()
            killed_at = time.monotonic() - started
            wait_for(lambda: sum(pages_of(client, "crash").values()) >= args.kill_after * 3,
                     "more pages")  # fmt: skip
            server.stop(kill=True)
            server.start()
            restarted_at = time.monotonic() - started
            for worker in workers[:-1]:
                worker.wait()
            wall = time.monotonic() - started
            report = site.report()
            expected = len(site.expected())
        figures = pages_of(server.client(), "crash")
    finally:
        server.stop()
    return {
        "hosts": args.hosts,
        "expected_pages": expected,
        "pages_by_worker": figures,
        "exit_codes": {w.name: w.code for w in workers},
        "workers": args.crash_workers,
        "killed_last_at_s": round(killed_at, 1),
        "redis_restarted_at_s": round(restarted_at, 1),
        "wall_s": round(wall, 1),
        "concurrent_violations": report.concurrent_violations,
        "crawl_delay_violations": report.crawl_delay_violations,
        "robots_violations": report.robots_violations,
        "missing": len(report.missing),
        "repeated_fetches": report.repeated_fetches,
        "allowed_repeats": args.concurrency,
    }


def stored(client: redis.Redis, name: str) -> int:
    """Pages stored crawl-wide: the sum over the crawl's partitions."""
    parts = int(client.hget(crawl_prefix(name) + "politeness", "parts") or 1)
    return sum(int(client.get(part_prefix(name, k) + "pages") or 0) for k in range(parts))


def throughput(args: argparse.Namespace, work: Path, workers: int) -> dict[str, object]:
    spec = WebSpec(seed=args.seed + 1, hosts=args.hosts, pages_per_host=args.pages,
                   seed_hosts=args.hosts, special_hosts=False, crawl_delay_hosts=False,
                   latency=args.latency)  # fmt: skip
    server = Redis(work / f"redis-{workers}")
    server.start()
    name = f"speed{workers}"
    common = ["--frontier", server.url, "--name", name, "--resolve", RESOLVE,
              "--concurrency", str(args.speed_concurrency)]  # fmt: skip
    (work / "t.toml").write_text(CONFIG)
    try:
        with ThreadedTestWeb(build_web(spec)) as site:
            seeds = work / f"seeds-{workers}.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            client = server.client()
            client.config_resetstat()
            started = time.monotonic()
            first = ["crawl", str(seeds), "--out", str(work / f"s{workers}-0"),
                     "--config", str(work / "t.toml"), "--max-pages", str(args.target),
                     "--no-progress", *common]  # fmt: skip
            running = [spawn(first, "s0", work / f"s{workers}-0.log")]
            if workers > 1:
                wait_for(lambda: bool(pages_of(client, name)), "the crawl to start")
            for i in range(1, workers):
                running.append(spawn(["worker", "--out", str(work / f"s{workers}-{i}"), *common],
                                     f"s{i}", work / f"s{workers}-{i}.log"))  # fmt: skip
            # The rate is taken once every worker has stored a page (start-up left out).
            wait_for(lambda: len([n for n in pages_of(client, name).values() if n]) == workers,
                     "every worker to store a page")  # fmt: skip
            window_start, pages_start = time.monotonic(), stored(client, name)
            for worker in running:
                worker.wait()
            window = time.monotonic() - window_start
            counted = stored(client, name)
            wall = time.monotonic() - started
            report = site.report()
            info = client.info("stats")
            commands = client.info("commandstats")
        pages = sum(pages_of(client, name).values())
    finally:
        server.stop()
    calls = sum(int(v["calls"]) for v in commands.values())
    cpu = sum(w.cpu for w in running)
    return {
        "workers": workers,
        "pages": pages,
        "wall_s": round(wall, 2),
        "pages_per_s": round((counted - pages_start) / window, 1),
        "pages_per_s_with_start_up": round(pages / wall, 1),
        "cpu_ms_per_page": round(1000 * cpu / max(pages, 1), 2),
        "redis_commands_per_page": round(calls / max(pages, 1), 2),
        "redis_bytes_in_per_page": round(int(info["total_net_input_bytes"]) / max(pages, 1)),
        "redis_bytes_out_per_page": round(int(info["total_net_output_bytes"]) / max(pages, 1)),
        "by_command": {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in commands.items()},
        "concurrent_violations": report.concurrent_violations,
        "exit_codes": [w.code for w in running],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=100, help="pages per host")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32, help="per worker, crash run")
    parser.add_argument("--crash-latency", type=float, default=0.005)
    parser.add_argument("--crash-workers", type=int, default=4, help="the last one is killed")
    parser.add_argument("--kill-after", type=int, default=1500, help="its pages before the kill")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds, throughput web")
    parser.add_argument("--speed-concurrency", type=int, default=8)
    parser.add_argument("--target", type=int, default=2000, help="pages, throughput runs")
    parser.add_argument("--speed-workers", type=int, nargs="*", default=[1, 2, 4])
    parser.add_argument("--skip-crash", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gossamer-shared-"))
    result: dict[str, object] = {}
    try:
        if not args.skip_crash:
            result["crash"] = crash_run(args, work)
            print(json.dumps(result["crash"], indent=1), flush=True)
        runs = [throughput(args, work, n) for n in args.speed_workers]
        result["throughput"] = runs
        if not runs:
            if args.json:
                args.json.write_text(json.dumps(result, indent=1) + "\n")
            return
        base = float(runs[0]["pages_per_s"])  # type: ignore[arg-type]
        result["speed_up"] = {
            str(run["workers"]): round(float(run["pages_per_s"]) / base, 2)  # type: ignore[arg-type]
            for run in runs
        }
        print(json.dumps(result["throughput"], indent=1))
        print(f"pages/s against {args.speed_workers[0]} worker(s): {result['speed_up']}")
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
