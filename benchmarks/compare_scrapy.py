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
whole crawl. Its ``ru_maxrss`` is no use for memory: it is the largest single process, and the
kernel carries the RSS high-water mark of the image a child replaces at exec into it, so a child
of this benchmark process never reports less than this process's own RSS (``/bin/true`` spawned
from a 400 MB parent reports 410 MB). Memory therefore comes from sampling ``/proc`` for the
crawler's process tree every 0.1 s: each process's ``VmHWM`` (its own exact high-water mark,
whose largest is "peak RSS"), and the largest sums over the tree of RSS (shared library pages
counted once per process) and of PSS (shared pages split between their processes). The
benchmark process's own CPU during a crawl is the test web's (minus the sampler's), so the
reader can see where the cores went.

Scrapy lives in its own virtualenv, ``benchmarks/.venv-scrapy`` (created on first use), never in
the project's. Both crawlers get the same page budget, concurrency and politeness: one request
in flight per host, no delay between requests, robots.txt obeyed. The web has no Crawl-delay
hosts, because Scrapy ignores Crawl-delay and the comparison is about speed.

    .venv/bin/python benchmarks/compare_scrapy.py --hosts 200 --pages 100 --budget 15000 \\
        --gossamer-commit HEAD --quiet-wait 240 --json /tmp/a.json
    .venv/bin/python benchmarks/compare_scrapy.py --merge /tmp/a.json /tmp/b.json /tmp/c.json
    .venv/bin/python benchmarks/compare_scrapy.py --gossamer-workers 1 2 --repeat 3
    .venv/bin/python benchmarks/compare_scrapy.py --budget 0 --host-sizes power  # real web's shape
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
from gossamer.testweb.audit import RequestRecord
from gossamer.testweb.model import HOST_SIZES

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
    """What the kernel reports about one finished child, and what sampling /proc saw."""

    status: int
    wall: float
    cpu: float  # user + system seconds, the child and every descendant it waited for
    wait4_maxrss_mb: float  # includes this process's RSS at spawn: see the module docstring
    started: float  # time.monotonic() at spawn, the test web audit's clock
    tree: TreeUsage


@dataclass(frozen=True, slots=True)
class TreeUsage:
    """The crawler's whole process tree, sampled from /proc every ``interval`` seconds."""

    largest_process_mb: float  # largest VmHWM of any process in the tree
    peak_rss_mb: float  # largest sum of RSS over the tree (shared pages counted per process)
    peak_pss_mb: float  # largest sum of PSS (shared pages split between their processes)
    processes: int  # most processes seen at once
    cpu_by_role: dict[str, float]  # last sampled CPU seconds: root, worker, helper
    sampler_cpu: float  # the sampler thread's own CPU, taken off the server's


class TreeSampler(threading.Thread):
    """Follow a process and its descendants in /proc until told to stop.

    Samples are 0.1 s apart (a plain sleep: /proc has no event for "memory changed"), so peaks
    between samples and the last 0.1 s of CPU are missed; wait4 stays the source for CPU.
    """

    def __init__(self, root: int, interval: float = 0.1) -> None:
        super().__init__(name="tree-sampler", daemon=True)
        self.root = root
        self.interval = interval
        self.halt = threading.Event()
        self._roles: dict[tuple[int, int], str] = {}  # (pid, start time) -> role
        self._cpu: dict[tuple[int, int], float] = {}
        self._hwm_kib: dict[tuple[int, int], int] = {}
        self.peak_rss_kib = 0
        self.peak_pss_kib = 0
        self.processes = 0
        self.own_cpu = 0.0

    def run(self) -> None:
        begun = time.thread_time()
        while not self.halt.wait(self.interval):
            self.sample()
        self.own_cpu = time.thread_time() - begun

    def usage(self) -> TreeUsage:
        by_role: dict[str, float] = {}
        for key, cpu in self._cpu.items():
            by_role[self._roles[key]] = by_role.get(self._roles[key], 0.0) + cpu
        return TreeUsage(
            largest_process_mb=round(max(self._hwm_kib.values(), default=0) / 1024, 1),
            peak_rss_mb=round(self.peak_rss_kib / 1024, 1),
            peak_pss_mb=round(self.peak_pss_kib / 1024, 1),
            processes=self.processes,
            cpu_by_role={role: round(cpu, 2) for role, cpu in sorted(by_role.items())},
            sampler_cpu=round(self.own_cpu, 3),
        )

    def sample(self) -> None:
        stats: dict[int, list[str]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    text = (entry / "stat").read_text()
                except OSError:
                    continue  # gone meanwhile
                stats[int(entry.name)] = text.rsplit(")", 1)[1].split()
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():
            children.setdefault(int(fields[1]), []).append(pid)
        tree, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            if pid in stats:
                tree.append(pid)
                todo += children.get(pid, [])
        rss = pss = 0
        page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
        ticks = os.sysconf("SC_CLK_TCK")
        for pid in tree:
            fields = stats[pid]  # fields[0] is field 3 of proc(5): state
            key = (pid, int(fields[19]))
            if key not in self._roles:
                self._roles[key] = self._role(pid)
            self._cpu[key] = (int(fields[11]) + int(fields[12])) / ticks
            rss += int(fields[21]) * page_kib
            self._hwm_kib[key] = max(self._hwm_kib.get(key, 0), _status_kib(pid, "VmHWM:"))
            pss += _pss_kib(pid)
        self.peak_rss_kib = max(self.peak_rss_kib, rss)
        self.peak_pss_kib = max(self.peak_pss_kib, pss)
        self.processes = max(self.processes, len(tree))

    def _role(self, pid: int) -> str:
        if pid == self.root:
            return "root"  # the coordinator, under --workers
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return "helper"
        # multiprocessing's spawn start method runs workers via spawn_main; its resource
        # tracker (also a child) is a helper.
        return "worker" if b"spawn_main" in cmdline else "helper"


def _status_kib(pid: int, field: str, file: str = "status") -> int:
    """A ``kB`` field of /proc/PID/status or smaps_rollup; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kib(pid: int) -> int:
    return _status_kib(pid, "Pss:", "smaps_rollup")


@dataclass(frozen=True, slots=True)
class CrawlRun:
    """One crawl by one crawler, measured by the parent and judged by the server."""

    crawler: str  # "gossamer" (one process), "gossamer-wN" (N workers) or "scrapy"
    workers: int  # Gossamer's --workers (1: the single-process crawler, no coordinator)
    exit_status: int
    wall_seconds: float
    cpu_seconds: float  # the crawler's whole process tree (wait4)
    peak_rss_mb: float  # largest single process (VmHWM, sampled; 0.1 s before exit at worst)
    wait4_maxrss_mb: float  # not the crawler's own: see the module docstring
    tree_peak_rss_mb: float  # largest sum over the tree (sampled)
    tree_peak_pss_mb: float
    processes: int
    cpu_by_role: dict[str, float]  # sampled; e.g. how much the coordinator used
    server_cpu_seconds: float  # this process (the test web) during the crawl, minus sampling
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
    """Run ``argv`` to completion; its rusage comes back from ``os.wait4``.

    On Linux that rusage is the child's own plus that of every descendant it waited for
    (``RUSAGE_BOTH`` in the kernel's ``wait_task_zombie``): CPU times add up, ``ru_maxrss`` is
    the largest of them. A process the child never waits for (an orphan) is not in it; the
    /proc sampler still sees it while it is in the tree.
    """
    with log.open("wb") as sink:
        started = time.monotonic()
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        sampler = TreeSampler(child.pid)
        sampler.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - started
        sampler.halt.set()
        sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
    return Exit(
        status=child.returncode,
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        wait4_maxrss_mb=usage.ru_maxrss / 1024,  # KiB on Linux
        started=started,
        tree=sampler.usage(),
    )


def gossamer_argv(  # noqa: PLR0917 - one knob each, as the CLI has them
    seeds: Path,
    out: Path,
    budget: int | None,
    concurrency: int,
    workers: int = 1,
    delay: float = 0.0,
    src: Path | None = None,
) -> list[str]:
    """``gossamer crawl`` with these knobs; ``src``: the crawler's src folder (None: the tree)."""
    config = out.parent / "gossamer.toml"
    # Same politeness as the Scrapy side: one request per host at a time, no delay (the
    # latency scenario may set one).
    config.write_text(f"[politeness]\ndelay = {delay!r}\n", encoding="utf-8")
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
    if workers > 1 or takes_workers(src):  # --workers defaults to one per core since 26fc621
        argv += ["--workers", str(workers)]
    return [*argv, "--max-pages", str(budget)] if budget else argv


def takes_workers(src: Path | None) -> bool:
    """Whether the crawler in ``src`` (None: the working tree) has ``--workers``; commits
    before it have only the single-process crawler."""
    crawl_cli = (src or HERE.parent / "src") / "gossamer" / "cli" / "crawl.py"
    return '"--workers"' in crawl_cli.read_text(encoding="utf-8")


def scrapy_argv(
    seeds: Path,
    out: Path,
    budget: int | None,
    concurrency: int,
    extra: Sequence[str] = (),
    *,
    bodies: bool = False,
) -> list[str]:
    """``extra`` holds further ``KEY=VALUE`` settings, e.g. the reactor; they come last and win.
    ``bodies``: the spider also keeps every body (in ``out/bodies.bin``)."""
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
    if bodies:
        argv += ["-a", f"bodies={out / 'bodies.bin'}"]
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


def label(crawler: str, workers: int) -> str:
    """A crawler variant's name in results: "gossamer", "gossamer-w2", "scrapy"."""
    return f"{crawler}-w{workers}" if crawler == "gossamer" and workers > 1 else crawler


def crawl_once(**kwargs: Any) -> CrawlRun:
    """Serve a fresh copy of ``web`` and let one crawler loose on it (see ``crawl_timed``)."""
    return crawl_timed(**kwargs)[0]


def crawl_timed(
    web: Web,
    crawler: str,
    *,
    budget: int | None,
    concurrency: int,
    work: Path,
    scrapy_settings: Sequence[str] = (),
    quiet_wait: float = 0.0,
    gossamer_src: Path | None = None,
    workers: int = 1,
    delay: float = 0.0,
) -> tuple[CrawlRun, list[RequestRecord], float]:
    """One crawl, plus the server's request records and the spawn time on the audit's clock."""
    name = label(crawler, workers)
    run_dir = work / name
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    out = run_dir / "out"
    env = dict(os.environ)
    with ThreadedTestWeb(web) as site:
        seeds = run_dir / "seeds.txt"
        seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
        if crawler == "gossamer":
            argv = gossamer_argv(seeds, out, budget, concurrency, workers, delay, gossamer_src)
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
    server_cpu = (
        (server_after.ru_utime + server_after.ru_stime)
        - (server_before.ru_utime + server_before.ru_stime)
        - done.tree.sampler_cpu
    )
    run = CrawlRun(
        crawler=name,
        workers=workers if crawler == "gossamer" else 1,
        exit_status=done.status,
        wall_seconds=round(done.wall, 2),
        cpu_seconds=round(done.cpu, 2),
        peak_rss_mb=done.tree.largest_process_mb,
        wait4_maxrss_mb=round(done.wait4_maxrss_mb, 1),
        tree_peak_rss_mb=done.tree.peak_rss_mb,
        tree_peak_pss_mb=done.tree.peak_pss_mb,
        processes=done.tree.processes,
        cpu_by_role=done.tree.cpu_by_role,
        server_cpu_seconds=round(server_cpu, 2),
        other_cpu_seconds=round(
            machine_after - machine_before - done.cpu - server_cpu - done.tree.sampler_cpu, 2
        ),
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
    return run, records, done.started


def scrapy_settings(args: argparse.Namespace) -> list[str]:
    return [f"TWISTED_REACTOR={REACTORS[args.scrapy_reactor]}", *args.scrapy_set]


MEDIAN_KEYS = (
    "pages_per_second",
    "cpu_per_page_ms",
    "peak_rss_mb",
    "tree_peak_rss_mb",
    "tree_peak_pss_mb",
    "wall_seconds",
    "pages",
    "cpu_seconds",
    "server_cpu_seconds",
    "other_cpu_seconds",
)


def _median(runs: Sequence[dict[str, Any]], key: str) -> float | None:
    values = [float(run[key]) for run in runs if run.get(key) is not None]
    return round(statistics.median(values), 3) if values else None


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Add the medians per crawler variant, ratios against Scrapy and the worker speed-ups."""
    labels = list(dict.fromkeys(run["crawler"] for run in result["runs"]))
    medians: dict[str, dict[str, Any]] = {}
    for name in labels:
        mine = [run for run in result["runs"] if run["crawler"] == name]
        medians[name] = {key: _median(mine, key) for key in MEDIAN_KEYS}
        medians[name]["runs"] = len(mine)
        medians[name]["workers"] = mine[0].get("workers", 1)
        # Cores kept busy: the crawler's tree and the test web (this process).
        medians[name]["crawler_cores"] = statistics.median(
            run["cpu_seconds"] / run["wall_seconds"] for run in mine
        )
        medians[name]["server_cores"] = statistics.median(
            run.get("server_cpu_seconds", 0.0) / run["wall_seconds"] for run in mine
        )
    result["median"] = medians
    pairs = {
        "pages_per_second": "pages_per_second",
        "cpu_per_page": "cpu_per_page_ms",
        "peak_rss": "peak_rss_mb",
        "tree_peak_rss": "tree_peak_rss_mb",
    }

    def ratio(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float | None]:
        return {
            name: round(a[key] / b[key], 2) if a.get(key) and b.get(key) else None
            for name, key in pairs.items()
        }

    gossamers = [name for name in labels if name.startswith("gossamer")]
    if "scrapy" in medians:
        result["ratios_over_scrapy"] = {
            name: ratio(medians[name], medians["scrapy"]) for name in gossamers
        }
        if "gossamer" in medians:
            result["ratio_gossamer_over_scrapy"] = result["ratios_over_scrapy"]["gossamer"]
    if "gossamer" in medians:
        result["speedup_over_one_worker"] = {
            name: ratio(medians[name], medians["gossamer"])
            for name in gossamers
            if name != "gossamer"
        }
    return result


def merge(paths: Sequence[Path]) -> dict[str, Any]:
    """Pool the runs of several throughput results (same web and budget) into one."""
    results = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    first = results[0]
    for other in results[1:]:
        # Results written before host sizes were a knob were all of the even web.
        if (even(other["web"]), other["budget"]) != (even(first["web"]), first["budget"]):
            raise SystemExit(f"cannot merge: different web or budget in {paths}")
    pooled = {**first, "runs": [run for result in results for run in result["runs"]]}
    pooled["repetitions"] = sum(result["repetitions"] for result in results)
    return summarise(pooled)


def even(web: dict[str, Any]) -> dict[str, Any]:
    return {"host_sizes": "even", **web}


def variants(args: argparse.Namespace) -> list[tuple[str, int]]:
    """(crawler, workers) pairs to run, in the order of the first repetition."""
    first = CRAWLERS if args.start_with == CRAWLERS[0] else CRAWLERS[::-1]
    found: list[tuple[str, int]] = []
    for crawler in first:
        if crawler in args.crawlers:
            counts = args.gossamer_workers if crawler == "gossamer" else [1]
            found += [(crawler, count) for count in counts]
    return found


def compare(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    if "scrapy" in args.crawlers:
        ensure_scrapy_venv()
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        host_sizes=args.host_sizes,
        crawl_delay_hosts=False,
        special_hosts=False,
        # A host whose robots.txt answers 500 (issue 9): the crawl must not idle for it, and
        # pages/s are counted to process exit.
        robots_error_host=not args.no_robots_error_host,
    )
    web = build_web(spec)
    runs: list[CrawlRun] = []
    todo = variants(args)
    for repetition in range(args.repeat):
        # Rotate who goes first, so no variant always meets a warmer (or busier) machine.
        shift = repetition % len(todo)
        for crawler, workers in todo[shift:] + todo[:shift]:
            run = crawl_once(
                web=web,
                crawler=crawler,
                budget=args.budget,
                concurrency=args.concurrency,
                work=work,
                scrapy_settings=scrapy_settings(args),
                quiet_wait=args.quiet_wait,
                gossamer_src=args.gossamer_src,
                workers=workers,
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
        "concurrency_note": "per worker process for Gossamer with --workers",
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


def _num(value: Any, digits: int = 0) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    """The comparison as markdown tables: medians, ratios, then one line per run's audit."""
    medians = result["median"]
    rows = [
        "| crawler | workers | pages/s | CPU ms/page | crawler cores | test-web cores |"
        " RSS MB, largest process | RSS MB, sum | PSS MB, sum | wall s | pages |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for crawler, m in medians.items():
        rows.append(
            f"| {crawler} | {m.get('workers', 1)} | {_num(m['pages_per_second'])} |"
            f" {_num(m['cpu_per_page_ms'], 2)} | {_num(m.get('crawler_cores'), 2)} |"
            f" {_num(m.get('server_cores'), 2)} | {_num(m['peak_rss_mb'])} |"
            f" {_num(m.get('tree_peak_rss_mb'))} | {_num(m.get('tree_peak_pss_mb'))} |"
            f" {_num(m['wall_seconds'], 1)} | {_num(m['pages'])} |"
        )
    rows += [
        "",
        "| ratio | pages/s | CPU per page | RSS, largest process | RSS, sum |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    over_scrapy = result.get("ratios_over_scrapy", {})
    over_one = result.get("speedup_over_one_worker", {})
    ratios = {
        **{f"{name} / scrapy": r for name, r in over_scrapy.items()},
        **{f"{name} / gossamer": r for name, r in over_one.items()},
    }
    for name, r in ratios.items():
        rows.append(
            f"| {name} | {_num(r['pages_per_second'], 2)}x | {_num(r['cpu_per_page'], 2)}x |"
            f" {_num(r['peak_rss'], 2)}x | {_num(r.get('tree_peak_rss'), 2)}x |"
        )
    rows += [
        "",
        "| run | crawler | exit | pages/s | CPU ms/page | CPU s | of which coordinator |"
        " test-web CPU s | RSS MB (largest / sum) | pages (200) | robots.txt | overlaps |"
        " robots viol. | repeats | own count | stop | output MB | other CPU s |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        " ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    for index, run in enumerate(result["runs"], start=1):
        coordinator = run.get("cpu_by_role", {}).get("root") if run.get("workers", 1) > 1 else None
        rows.append(
            f"| {index} | {run['crawler']} | {run['exit_status']} |"
            f" {run['pages_per_second']:.0f} | {run['cpu_per_page_ms']:.2f} |"
            f" {run['cpu_seconds']:.1f} | {_num(coordinator, 1) if coordinator else '-'} |"
            f" {_num(run.get('server_cpu_seconds'), 1)} |"
            f" {run['peak_rss_mb']:.0f} / {_num(run.get('tree_peak_rss_mb'))} |"
            f" {run['pages']} ({run['pages_200']}) |"
            f" {run['robots_requests']} | {run['concurrent_violations']} |"
            f" {run['robots_violations']} | {run['repeated_fetches']} | {run['reported_pages']} |"
            f" {run['stop_reason']} | {run['output_bytes'] / 1e6:.1f} |"
            f" {run.get('other_cpu_seconds', '?')} |"
        )
    return "\n".join(rows)


def timeline(
    records: Sequence[RequestRecord], spawned: float, spec: WebSpec, delay: float
) -> dict[str, Any]:
    """When the requests happened, relative to the crawler's spawn, and the per-host floor."""
    starts = sorted(record.started - spawned for record in records)
    ends = sorted(record.ended - spawned for record in records)
    per_host = Counter(record.host for record in records)
    # A host with n requests needs n latencies and n - 1 delays at the very least.
    floor = max((n * spec.latency + (n - 1) * delay for n in per_host.values()), default=0.0)
    p95 = starts[max(0, int(0.95 * len(starts)) - 1)] if starts else 0.0
    per_second = Counter(int(t) for t in starts)
    return {
        "first_request": round(starts[0], 2) if starts else None,
        "p95_request": round(p95, 2),
        "last_request": round(starts[-1], 2) if starts else None,
        "last_response": round(ends[-1], 2) if ends else None,
        "tail_seconds": round(starts[-1] - p95, 2) if starts else None,
        "hosts_requested": len(per_host),
        "requests_per_host_max": max(per_host.values(), default=0),
        "requests_per_host_min": min(per_host.values(), default=0),
        "per_host_floor_seconds": round(floor, 2),
        "requests_per_second_series": [per_second[t] for t in range(int(starts[-1]) + 1)]
        if starts
        else [],
    }


def latency(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Gossamer alone on a slow web: how close does it come to the politeness bound?

    With delay D after each response (Gossamer counts it from the end of one request to the
    start of the next) and server latency L, one host takes at most one request per D + L
    seconds, so H hosts allow H / (D + L) requests per second. Every request also holds one of
    the concurrency slots for at least L, which caps the rate at slots / L. The bound is the
    smaller of the two; robots.txt requests count, since they hold their host like a page.
    """
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        host_sizes=args.host_sizes,
        seed_hosts=args.seed_hosts,
        crawl_delay_hosts=False,
        special_hosts=False,
        latency=args.latency,
    )
    web = build_web(spec)
    runs: list[dict[str, Any]] = []
    for repetition in range(args.repeat):
        counts = args.gossamer_workers
        shift = repetition % len(counts)
        for workers in counts[shift:] + counts[:shift]:
            run, records, spawned = crawl_timed(
                web=web,
                crawler="gossamer",
                budget=args.budget,
                concurrency=args.concurrency,
                work=work,
                quiet_wait=args.quiet_wait,
                gossamer_src=args.gossamer_src,
                workers=workers,
                delay=args.delay,
            )
            slots = args.concurrency * workers
            bound = min(args.hosts / (args.delay + args.latency), slots / args.latency)
            requests = run.pages + run.robots_requests
            times = timeline(records, spawned, spec, args.delay)
            active = (times["last_response"] or 0.0) - (times["first_request"] or 0.0)
            found = {
                **asdict(run),
                "requests": requests,
                "requests_per_second": round(requests / run.wall_seconds, 1),
                "bound_requests_per_second": round(bound, 1),
                "fraction_of_bound": round(requests / run.wall_seconds / bound, 3),
                # Between the first request and the last response: start-up and exit aside.
                "active_requests_per_second": round(requests / max(active, 1e-9), 1),
                "active_fraction_of_bound": round(requests / max(active, 1e-9) / bound, 3),
                **times,
            }
            print(json.dumps(found), file=sys.stderr, flush=True)
            runs.append(found)
    return {
        "scenario": "latency",
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "gossamer_source": args.gossamer_source,
        "web": asdict(spec),
        "web_urls_expected": len(web.expected(0)),
        "delay": args.delay,
        "concurrency_per_worker": args.concurrency,
        "budget": args.budget,
        "runs": runs,
    }


def latency_markdown(result: dict[str, Any]) -> str:
    rows = [
        "| workers | requests | wall s | requests/s | bound | fraction | active fraction |"
        " first request s | p95 -> last request s | last response -> exit s |"
        " per-host floor s | CPU ms/page | crawler cores | test-web cores | RSS MB, sum |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        " ---: | ---: | ---: |",
    ]
    for run in result["runs"]:
        rows.append(
            f"| {run['workers']} | {run['requests']:,} | {run['wall_seconds']:.1f} |"
            f" {run['requests_per_second']:.0f} | {run['bound_requests_per_second']:.0f} |"
            f" {run['fraction_of_bound']:.2f} | {run['active_fraction_of_bound']:.2f} |"
            f" {run['first_request']:.2f} | {run['tail_seconds']:.2f} |"
            f" {run['wall_seconds'] - run['last_response']:.2f} |"
            f" {run['per_host_floor_seconds']:.1f} | {run['cpu_per_page_ms']:.2f} |"
            f" {run['cpu_seconds'] / run['wall_seconds']:.2f} |"
            f" {run['server_cpu_seconds'] / run['wall_seconds']:.2f} |"
            f" {_num(run['tree_peak_rss_mb'])} |"
        )
    return "\n".join(rows)


def profile(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One crawl per crawler under py-spy (not timed); where its CPU goes, by function."""
    ensure_scrapy_venv()
    spec = WebSpec(
        seed=args.seed,
        hosts=args.hosts,
        pages_per_host=args.pages,
        host_sizes=args.host_sizes,
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
                crawl = gossamer_argv(
                    seeds, out, args.budget, args.concurrency, src=args.gossamer_src
                )
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


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", choices=("throughput", "latency"), default="throughput")
    parser.add_argument("--hosts", type=int)
    parser.add_argument("--pages", type=int, help="pages per host")
    parser.add_argument("--budget", type=int, help="page budget for each crawler")
    parser.add_argument(
        "--host-sizes",
        choices=HOST_SIZES,
        default="even",
        help="every host --pages pages, or sizes by a power law with the same total",
    )
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--no-robots-error-host",
        action="store_true",
        help="leave out the host whose robots.txt answers 500",
    )
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
    parser.add_argument(
        "--gossamer-workers",
        type=int,
        nargs="+",
        default=[1],
        metavar="N",
        help="gossamer crawl --workers N, one variant per value (1: the single process)",
    )
    parser.add_argument("--latency", type=float, default=0.1, help="seconds, latency scenario")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="Gossamer's per-host delay, latency scenario"
    )
    parser.add_argument("--seed-hosts", type=int, default=100, help="latency scenario")
    parser.add_argument("--profile", type=Path, help="profile Gossamer with py-spy into DIR")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-vs-scrapy"))
    parser.add_argument("--json", type=Path, help="also write the JSON result here")
    parser.add_argument("--merge", type=Path, nargs="+", help="pool earlier JSON results")
    return parser.parse_args()


def main() -> int:
    args = arguments()
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
    elif result["scenario"] == "latency":
        print()
        print(latency_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
