"""Crawl one local test web with Gossamer and with Scrapy, and compare what each costs.

Role: measurement only (issue 4). The test web runs in this process on 127.0.0.1 (its own
thread and event loop); each crawler runs as a child process, as a user would start it, and is
measured from spawn to exit: wall time, CPU time and peak RSS come from ``os.wait4``, so they
belong to that crawler alone. Pages are counted on the server side, from the test web's audit,
which also judges both crawlers' politeness with the same rules. Each crawl gets a fresh server,
so neither crawler finds the other's pages already rendered.

``--gossamer-workers 1 2`` crawls once per worker count (``gossamer crawl --workers N``: a
coordinator process and N crawler processes). ``os.wait4`` on the coordinator reports CPU time
of the coordinator plus every child it waited for (it joins its workers), so CPU covers the
whole crawl; its ``ru_maxrss`` is the largest single process, not their sum. The sum comes from
sampling ``/proc`` for the crawler's process tree every 0.1 s (RSS, which counts shared library
pages once per process, and PSS, which splits them). The benchmark process's own CPU during a
crawl is the test web's (minus the sampler's), so the reader can see where the cores went.

Scrapy lives in its own virtualenv, ``benchmarks/.venv-scrapy`` (created on first use), never in
the project's. Both crawlers get the same page budget, concurrency and politeness: one request
in flight per host, no delay between requests, robots.txt obeyed. The web has no Crawl-delay
hosts, because Scrapy ignores Crawl-delay and the comparison is about speed.

    .venv/bin/python benchmarks/compare_scrapy.py --hosts 200 --pages 100 --budget 15000 \\
        --gossamer-commit HEAD --quiet-wait 240 --json /tmp/a.json
    .venv/bin/python benchmarks/compare_scrapy.py --merge /tmp/a.json /tmp/b.json /tmp/c.json
    .venv/bin/python benchmarks/compare_scrapy.py --gossamer-workers 1 2 --repeat 3
    .venv/bin/python benchmarks/compare_scrapy.py --scenario latency --latency 0.5  # Gossamer
    .venv/bin/python benchmarks/compare_scrapy.py --scenario latency --latency 0.1 --delay 1 \\
        --hosts 1000 --seed-hosts 1000 --pages 25 --gossamer-workers 1 2
    .venv/bin/python benchmarks/compare_scrapy.py --profile /tmp/prof  # py-spy, Gossamer

It prints one JSON document and, for the comparison, markdown tables (medians, then each run).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gossamer.testweb import ThreadedTestWeb, Web, WebSpec, build_web

HERE = Path(__file__).resolve().parent
PROJECT_BIN = Path(sys.executable).parent
SCRAPY_VENV = HERE / ".venv-scrapy"
SCRAPY_BIN = SCRAPY_VENV / "bin"
SPIDER = HERE / "scrapy_spider.py"
CRAWLERS = ("gossamer", "scrapy")
# Scrapy 2.19's default asyncio reactor lets a burst of queued requests past a per-domain
# concurrency of 1 (the downloader starts each download as a task, and a task counts as
# "transferring" only once it runs); Twisted's own epoll reactor starts it at once and keeps
# the limit. So the comparison uses epoll unless told otherwise.
REACTORS = {
    "epoll": "twisted.internet.epollreactor.EPollReactor",
    "asyncio": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
}


@dataclass(frozen=True, slots=True)
class Exit:
    """What the kernel reports about one finished child."""

    status: int
    wall: float
    cpu: float  # user + system seconds
    peak_rss_mb: float


@dataclass(frozen=True, slots=True)
class CrawlRun:
    """One crawl by one crawler, measured by the parent and judged by the server."""

    crawler: str
    exit_status: int
    wall_seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    server_cpu_seconds: float  # this process (the test web) during the crawl
    other_cpu_seconds: float  # everything else on the machine during the crawl: noise
    pages: int  # requests other than robots.txt, as the server saw them
    pages_200: int
    robots_requests: int
    pages_per_second: float
    cpu_per_page_ms: float
    concurrent_violations: int
    robots_violations: int
    crawl_delay_violations: int
    repeated_fetches: int
    reported_pages: int  # the crawler's own count of stored pages
    output_bytes: int
    stop_reason: str


def gossamer_snapshot(commit: str, work: Path) -> Path:
    """Unpack ``src/`` of one commit (read-only ``git archive``) and return its src folder.

    Others edit the working tree while benchmarks run; a snapshot keeps every crawl of a run,
    and a later rerun, on the same code. Put first on PYTHONPATH, it shadows the editable
    install.
    """
    full = subprocess.run(
        ["git", "-C", str(HERE.parent), "rev-parse", "--verify", f"{commit}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    target = work / f"gossamer-{full[:12]}"
    if not (target / "src" / "gossamer").is_dir():
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent), "archive", "--format=tar", full, "src"],
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    return target / "src"


def ensure_scrapy_venv() -> None:
    """Create ``benchmarks/.venv-scrapy`` with Scrapy and py-spy unless it is there already."""
    if (SCRAPY_BIN / "scrapy").exists():
        return
    print(f"creating {SCRAPY_VENV} (Scrapy, py-spy)", file=sys.stderr)
    subprocess.run(["python3", "-m", "venv", str(SCRAPY_VENV)], check=True)
    pip = [str(SCRAPY_BIN / "pip"), "install", "--quiet"]
    subprocess.run([*pip, "scrapy", "py-spy"], check=True)


def run_measured(argv: Sequence[str], *, cwd: Path, env: dict[str, str], log: Path) -> Exit:
    """Run ``argv`` to completion; its own rusage comes back from ``os.wait4``."""
    with log.open("wb") as sink:
        started = time.perf_counter()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
    return Exit(
        status=child.returncode,
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
    )


def gossamer_argv(seeds: Path, out: Path, budget: int | None, concurrency: int) -> list[str]:
    config = out.parent / "gossamer.toml"
    # Same politeness as the Scrapy side: one request per host at a time, no delay.
    config.write_text("[politeness]\ndelay = 0.0\n", encoding="utf-8")
    argv = [
        str(PROJECT_BIN / "gossamer"),
        "crawl",
        str(seeds),
        "--out",
        str(out),
        "--resolve",
        "*.web.test:127.0.0.1",
        "--concurrency",
        str(concurrency),
        "--no-progress",
        "--config",
        str(config),
    ]
    return [*argv, "--max-pages", str(budget)] if budget else argv


def scrapy_argv(
    seeds: Path, out: Path, budget: int | None, concurrency: int, extra: Sequence[str] = ()
) -> list[str]:
    """``extra`` holds further ``KEY=VALUE`` settings, e.g. the reactor; they come last and win."""
    out.mkdir(parents=True)
    argv = [
        str(SCRAPY_BIN / "scrapy"),
        "runspider",
        str(SPIDER),
        "-a",
        f"seeds={seeds}",
        "-a",
        f"stats={out / 'stats.json'}",
        "-O",
        f"{out / 'pages.jsonl'}:jsonlines",
        "-s",
        f"CONCURRENT_REQUESTS={concurrency}",
        "-s",
        f"CLOSESPIDER_PAGECOUNT={budget or 0}",
        # Reactor settings: Scrapy reads them before the spider's own settings apply.
        "-s",
        "TWISTED_DNS_RESOLVER=scrapy_resolver.TestWebResolver",
        "-s",
        "REACTOR_THREADPOOL_MAXSIZE=20",
    ]
    for setting in extra:
        argv += ["-s", setting]
    return argv


def crawler_report(crawler: str, out: Path) -> tuple[int, str]:
    """The crawler's own count of stored pages and why it stopped."""
    try:
        if crawler == "gossamer":
            stats = json.loads((out / "reports" / "stats.json").read_text(encoding="utf-8"))
            lines = (out.parent / "crawler.log").read_text(encoding="utf-8").splitlines()
            stopped = next((ln for ln in reversed(lines) if ln.startswith("stopped:")), "")
            return int(stats["pages"]), stopped.removeprefix("stopped: ").split(";")[0]
        stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
        return int(stats.get("item_scraped_count", 0)), str(stats.get("finish_reason", ""))
    except (OSError, ValueError, KeyError):
        return 0, "no report"


def machine_busy_seconds() -> float:
    """CPU seconds spent by every process since boot, from the first line of /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, idle, iowait, irq, softirq = fields
    del idle, iowait
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def wait_for_quiet(limit: float, *, window: float = 2.0, busy_cores: float = 0.15) -> float:
    """Wait up to ``limit`` seconds for other work on the machine to calm down.

    Other sessions may share this machine; a crawl measured while they run is slower than it
    should be. This samples the whole machine's CPU use over short windows (a plain sleep: there
    is no event to wait on for "the machine went quiet") and returns the last busy fraction.
    """
    deadline = time.monotonic() + limit
    while True:
        before = machine_busy_seconds()
        time.sleep(window)
        busy = (machine_busy_seconds() - before) / window
        if busy < busy_cores or time.monotonic() >= deadline:
            return busy


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def crawl_once(
    web: Web,
    crawler: str,
    *,
    budget: int | None,
    concurrency: int,
    work: Path,
    scrapy_settings: Sequence[str] = (),
    quiet_wait: float = 0.0,
    gossamer_src: Path | None = None,
) -> CrawlRun:
    """Serve a fresh copy of ``web`` and let one crawler loose on it."""
    run_dir = work / crawler
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    out = run_dir / "out"
    env = dict(os.environ)
    with ThreadedTestWeb(web) as site:
        seeds = run_dir / "seeds.txt"
        seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
        if crawler == "gossamer":
            argv = gossamer_argv(seeds, out, budget, concurrency)
            if gossamer_src is not None:
                env["PYTHONPATH"] = str(gossamer_src)
        else:
            argv = scrapy_argv(seeds, out, budget, concurrency, scrapy_settings)
            # The resolver module sits beside this file; Scrapy loads it by dotted name.
            env["PYTHONPATH"] = str(HERE)
        if quiet_wait:
            wait_for_quiet(quiet_wait)
        server_before = resource.getrusage(resource.RUSAGE_SELF)
        machine_before = machine_busy_seconds()
        done = run_measured(argv, cwd=run_dir, env=env, log=run_dir / "crawler.log")
        machine_after = machine_busy_seconds()
        server_after = resource.getrusage(resource.RUSAGE_SELF)
        records = site.audit.records()
        report = site.report()
    robots = [r for r in records if web.is_robots(r.host, r.target)]
    pages = len(records) - len(robots)
    statuses = Counter(r.status for r in records if not web.is_robots(r.host, r.target))
    reported, reason = crawler_report(crawler, out)
    server_cpu = (server_after.ru_utime + server_after.ru_stime) - (
        server_before.ru_utime + server_before.ru_stime
    )
    return CrawlRun(
        crawler=crawler,
        exit_status=done.status,
        wall_seconds=round(done.wall, 2),
        cpu_seconds=round(done.cpu, 2),
        peak_rss_mb=round(done.peak_rss_mb, 1),
        server_cpu_seconds=round(server_cpu, 2),
        other_cpu_seconds=round(machine_after - machine_before - done.cpu - server_cpu, 2),
        pages=pages,
        pages_200=statuses[200],
        robots_requests=len(robots),
        pages_per_second=round(pages / done.wall, 1),
        cpu_per_page_ms=round(1000 * done.cpu / max(pages, 1), 3),
        concurrent_violations=report.concurrent_violations,
        robots_violations=report.robots_violations,
        crawl_delay_violations=report.crawl_delay_violations,
        repeated_fetches=report.repeated_fetches,
        reported_pages=reported,
        output_bytes=folder_bytes(out) if out.exists() else 0,
        stop_reason=reason,
    )


def scrapy_settings(args: argparse.Namespace) -> list[str]:
    return [f"TWISTED_REACTOR={REACTORS[args.scrapy_reactor]}", *args.scrapy_set]


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Add the medians over ``result["runs"]`` and, with both crawlers, their ratios."""
    keys = ("pages_per_second", "cpu_per_page_ms", "peak_rss_mb", "wall_seconds", "pages")
    medians = {}
    for crawler in CRAWLERS:
        mine = [run for run in result["runs"] if run["crawler"] == crawler]
        if mine:
            medians[crawler] = {
                key: statistics.median(float(run[key]) for run in mine) for key in keys
            }
    result["median"] = medians
    if len(medians) == len(CRAWLERS):
        g, s = medians["gossamer"], medians["scrapy"]
        pairs = {
            "pages_per_second": "pages_per_second",
            "cpu_per_page": "cpu_per_page_ms",
            "peak_rss": "peak_rss_mb",
        }
        result["ratio_gossamer_over_scrapy"] = {
            name: round(g[key] / s[key], 2) if s[key] else None for name, key in pairs.items()
        }
    return result


def merge(paths: Sequence[Path]) -> dict[str, Any]:
    """Pool the runs of several throughput results (same web and budget) into one."""
    results = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    first = results[0]
    for other in results[1:]:
        if (other["web"], other["budget"]) != (first["web"], first["budget"]):
            raise SystemExit(f"cannot merge: different web or budget in {paths}")
    pooled = {**first, "runs": [run for result in results for run in result["runs"]]}
    pooled["repetitions"] = sum(result["repetitions"] for result in results)
    return summarise(pooled)


def compare(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    ensure_scrapy_venv()
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        crawl_delay_hosts=False,
        special_hosts=False,
    )
    web = build_web(spec)
    runs: list[CrawlRun] = []
    first = CRAWLERS if args.start_with == CRAWLERS[0] else CRAWLERS[::-1]
    for repetition in range(args.repeat):
        # Alternate who goes first, so neither always meets a warmer machine.
        order = first if repetition % 2 == 0 else first[::-1]
        for crawler in order:
            if crawler in args.crawlers:
                run = crawl_once(
                    web,
                    crawler,
                    budget=args.budget,
                    concurrency=args.concurrency,
                    work=work,
                    scrapy_settings=scrapy_settings(args),
                    quiet_wait=args.quiet_wait,
                    gossamer_src=args.gossamer_src,
                )
                print(json.dumps(asdict(run)), file=sys.stderr, flush=True)
                runs.append(run)
    result: dict[str, Any] = {
        "scenario": "throughput",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "web": asdict(spec),
        "web_urls_expected": len(web.expected(0)),
        "budget": args.budget,
        "concurrency": args.concurrency,
        "gossamer_source": args.gossamer_source,
        "scrapy_settings": scrapy_settings(args),
        "repetitions": args.repeat,
        "versions": versions(),
        "runs": [asdict(run) for run in runs],
    }
    return summarise(result)


def versions() -> dict[str, str]:
    probe = "import importlib.metadata as m; print(m.version('{}'))"
    found = {}
    for name, python in (
        ("gossamer", PROJECT_BIN / "python"),
        ("aiohttp", PROJECT_BIN / "python"),
        ("scrapy", SCRAPY_BIN / "python"),
        ("twisted", SCRAPY_BIN / "python"),
    ):
        done = subprocess.run(
            [str(python), "-c", probe.format(name)], capture_output=True, text=True, check=False
        )
        found[name] = done.stdout.strip() or "?"
    found["python"] = sys.version.split()[0]
    return found


def markdown(result: dict[str, Any]) -> str:
    """The comparison as a markdown table (medians), then one line per run's audit."""
    medians = result["median"]
    rows = [
        "| crawler | pages/s | CPU ms/page | peak RSS MB | wall s | pages |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for crawler, m in medians.items():
        rows.append(
            f"| {crawler} | {m['pages_per_second']:.0f} | {m['cpu_per_page_ms']:.2f} |"
            f" {m['peak_rss_mb']:.0f} | {m['wall_seconds']:.1f} | {m['pages']:.0f} |"
        )
    ratio = result.get("ratio_gossamer_over_scrapy")
    if ratio:
        rows.append(
            f"| Gossamer / Scrapy | {ratio['pages_per_second']:.2f}x |"
            f" {ratio['cpu_per_page']:.2f}x | {ratio['peak_rss']:.2f}x | | |"
        )
    rows += [
        "",
        "| run | crawler | exit | pages/s | CPU ms/page | RSS MB | pages (200) | robots.txt |"
        " overlaps | robots viol. | repeats | own count | stop | output MB | other CPU s |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
        " ---: | ---: |",
    ]
    for index, run in enumerate(result["runs"], start=1):
        rows.append(
            f"| {index} | {run['crawler']} | {run['exit_status']} |"
            f" {run['pages_per_second']:.0f} | {run['cpu_per_page_ms']:.2f} |"
            f" {run['peak_rss_mb']:.0f} | {run['pages']} ({run['pages_200']}) |"
            f" {run['robots_requests']} | {run['concurrent_violations']} |"
            f" {run['robots_violations']} | {run['repeated_fetches']} | {run['reported_pages']} |"
            f" {run['stop_reason']} | {run['output_bytes'] / 1e6:.1f} |"
            f" {run.get('other_cpu_seconds', '?')} |"
        )
    return "\n".join(rows)


def latency(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Gossamer alone on a slow web: how close does it come to the politeness bound?"""
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        seed_hosts=args.seed_hosts,
        crawl_delay_hosts=False,
        special_hosts=False,
        latency=args.latency,
    )
    web = build_web(spec)
    run = crawl_once(
        web,
        "gossamer",
        budget=args.budget,
        concurrency=args.concurrency,
        work=work,
        quiet_wait=args.quiet_wait,
        gossamer_src=args.gossamer_src,
    )
    # Every request, robots.txt included, holds its host for one server latency (delay is 0).
    in_flight = min(args.concurrency, args.hosts)
    bound = in_flight / args.latency
    requests = run.pages + run.robots_requests
    return {
        "scenario": "latency",
        "gossamer_source": args.gossamer_source,
        "web": asdict(spec),
        "run": asdict(run),
        "requests_per_second": round(requests / run.wall_seconds, 1),
        "bound_requests_per_second": round(bound, 1),
        "fraction_of_bound": round(requests / run.wall_seconds / bound, 3),
    }


def profile(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One crawl per crawler under py-spy (not timed); where its CPU goes, by function."""
    ensure_scrapy_venv()
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        crawl_delay_hosts=False,
        special_hosts=False,
    )
    web = build_web(spec)
    work.mkdir(parents=True, exist_ok=True)
    found: dict[str, Any] = {
        "scenario": "profile",
        "gossamer_source": args.gossamer_source,
        "web": asdict(spec),
        "budget": args.budget,
    }
    for crawler in args.crawlers:
        stacks = work / f"{crawler}.collapsed.txt"
        out = work / crawler / "out"
        if out.parent.exists():
            shutil.rmtree(out.parent)
        out.parent.mkdir(parents=True)
        env = dict(os.environ, PYTHONPATH=str(HERE))
        with ThreadedTestWeb(web) as site:
            seeds = work / "seeds.txt"
            seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
            if crawler == "gossamer":
                crawl = gossamer_argv(seeds, out, args.budget, args.concurrency)
                if args.gossamer_src is not None:
                    env["PYTHONPATH"] = str(args.gossamer_src)
            else:
                crawl = scrapy_argv(
                    seeds, out, args.budget, args.concurrency, scrapy_settings(args)
                )
            # --function folds a function's lines together; raw is the collapsed-stack text
            # that speedscope and flamegraph.pl both read.
            spy = [str(SCRAPY_BIN / "py-spy"), "record", "--function", "--format", "raw"]
            spy += ["--rate", str(args.rate), "-o", str(stacks), "--", *crawl]
            log = work / crawler / "crawler.log"
            with log.open("wb") as sink:
                subprocess.run(spy, check=True, env=env, stdout=sink, stderr=subprocess.STDOUT)
        found[crawler] = {"stacks": str(stacks), **hot_functions(stacks, args.top)}
    return found


def hot_functions(stacks: Path, top: int) -> dict[str, Any]:
    """Self and total time per function from py-spy's collapsed stacks."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in stacks.read_text(encoding="utf-8").splitlines():
        path, _, count_text = line.rpartition(" ")
        if not path:
            continue
        count = int(count_text)
        frames = path.split(";")[1:]  # the first frame names the process and thread
        samples += count
        if frames:
            own[frames[-1]] += count
        for frame in set(frames):
            total[frame] += count

    def table(counter: Counter[str]) -> list[dict[str, Any]]:
        return [
            {"function": name, "samples": n, "percent": round(100 * n / max(samples, 1), 1)}
            for name, n in counter.most_common(top)
        ]

    return {"samples": samples, "self": table(own), "total": table(total)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=("throughput", "latency"), default="throughput")
    parser.add_argument("--hosts", type=int)
    parser.add_argument("--pages", type=int, help="pages per host")
    parser.add_argument("--budget", type=int, help="page budget for each crawler")
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--crawlers", nargs="+", choices=CRAWLERS, help="default: both; profile: gossamer"
    )
    parser.add_argument(
        "--quiet-wait", type=float, default=0.0, help="seconds to wait for an idle machine"
    )
    parser.add_argument(
        "--gossamer-commit", help="crawl with src/ of this commit (default: the working tree)"
    )
    parser.add_argument("--start-with", choices=CRAWLERS, default=CRAWLERS[0])
    parser.add_argument("--scrapy-reactor", choices=sorted(REACTORS), default="epoll")
    parser.add_argument(
        "--scrapy-set", action="append", default=[], metavar="KEY=VALUE", help="Scrapy -s"
    )
    parser.add_argument("--latency", type=float, default=0.1, help="seconds, latency scenario")
    parser.add_argument("--seed-hosts", type=int, default=100, help="latency scenario")
    parser.add_argument("--profile", type=Path, help="profile Gossamer with py-spy into DIR")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-vs-scrapy"))
    parser.add_argument("--json", type=Path, help="also write the JSON result here")
    parser.add_argument("--merge", type=Path, nargs="+", help="pool earlier JSON results")
    args = parser.parse_args()
    latency_run = args.scenario == "latency"
    args.hosts = args.hosts or (1000 if latency_run else 200)
    args.pages = args.pages or (5 if latency_run else 100)
    if args.budget is None and not latency_run:
        args.budget = 15_000
    args.crawlers = args.crawlers or (["gossamer"] if args.profile else list(CRAWLERS))
    args.out.mkdir(parents=True, exist_ok=True)
    args.gossamer_src = None
    args.gossamer_source = "working tree"
    if args.gossamer_commit:
        args.gossamer_src = gossamer_snapshot(args.gossamer_commit, args.out)
        args.gossamer_source = f"commit {args.gossamer_src.parent.name.removeprefix('gossamer-')}"
    if args.merge:
        result = merge(args.merge)
    elif args.profile is not None:
        result = profile(args, args.profile)
    elif latency_run:
        result = latency(args, args.out)
    else:
        result = compare(args, args.out)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    if result["scenario"] == "throughput":
        print()
        print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
