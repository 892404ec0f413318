"""Memory and speed of the seen-URL set and the disk-backed frontier (issue 3).

    python benchmarks/frontier_memory.py --seen 1000000 10000000 --pending 100000 1000000

Seen-set: bytes of resident memory per URL after adding N synthetic URLs, and add / lookup
rates. Frontier: resident memory as the number of pending URLs grows, with the real
``crawl.db`` backlog behind it (1,000 hosts; beyond each host's 64-URL window, URLs spill to
disk), and the rate of admitting and handing out URLs.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import tempfile
import time
from pathlib import Path

from gossamer.engine.backlog import DatabaseBacklog
from gossamer.frontier import Admission, Frontier, Job, SeenSet
from gossamer.robots import RobotsRules
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def url(i: int) -> str:
    return f"https://host-{i % 50_000}.example.org/section/{i // 7}/page-{i}.html?ref={i % 13}"


def seen_benchmark(count: int) -> dict[str, float]:
    gc.collect()
    before = rss_bytes()
    seen = SeenSet()
    started = time.perf_counter()
    for i in range(count):
        seen.add(url(i))
    added = time.perf_counter() - started
    gc.collect()
    after = rss_bytes()
    probes = min(count, 1_000_000)
    started = time.perf_counter()
    hits = sum(1 for i in range(0, probes) if url(i) in seen)
    looked = time.perf_counter() - started
    assert hits == probes
    return {
        "urls": count,
        "rss_bytes_per_url": round((after - before) / count, 2),
        "array_bytes_per_url": round(seen.nbytes / count, 2),
        "adds_per_second": round(count / added),
        "lookups_per_second": round(probes / looked),
    }


def frontier_benchmark(pending_steps: list[int], hosts: int = 1000) -> list[dict[str, float]]:
    folder = Path(tempfile.mkdtemp(prefix="gossamer-frontier-"))
    results = []
    try:
        db = MetadataDB(folder / "crawl.db", batch_size=5000)
        stats = CrawlStats()
        frontier = Frontier(
            delay=0.0,
            max_per_host=1,
            crawl_delay_cap=30.0,
            robots_ttl=1e9,
            robots_retry_delay=1.0,
            robots_retries=1,
            stats=stats,
            clock=time.monotonic,
            backlog=DatabaseBacklog(db),
        )
        for h in range(hosts):
            frontier.set_robots(f"https://h{h}.example.org", RobotsRules.allow_all())
        gc.collect()
        base = rss_bytes()
        added = 0
        for target in pending_steps:
            started = time.perf_counter()
            step_start = added
            while added < target:
                host = f"https://h{added % hosts}.example.org"
                job = Job(url=f"{host}/p/{added}", host=host, depth=1)
                admission = frontier.add(job)
                db.add_discovered(
                    [(job.url, host, 1, None)], spilled=admission is Admission.SPILLED
                )
                added += 1
            db.flush()
            elapsed = time.perf_counter() - started
            gc.collect()
            results.append(
                {
                    "pending": frontier.pending,
                    "rss_growth_mb": round((rss_bytes() - base) / 1e6, 1),
                    "seen_array_mb": round(frontier.seen_count * 8 / 1e6, 1),
                    "admits_per_second": round((added - step_start) / elapsed),
                }
            )
        started = time.perf_counter()
        handed = 0
        while handed < 200_000:
            job = frontier.pop_ready()
            if job is None:
                break
            frontier.done(job, success=True)
            handed += 1
        results.append(
            {
                "handed_out": handed,
                "pops_per_second": round(handed / (time.perf_counter() - started)),
            }
        )
        db.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seen", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--pending", type=int, nargs="*", default=[100_000, 500_000, 1_000_000])
    args = parser.parse_args()
    report = {
        "seen_set": [seen_benchmark(n) for n in args.seen],
        "frontier": frontier_benchmark(args.pending),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
