"""CPU per page on pages of real size: a crawl of an nginx-served web of 5-40 KB pages.

Role: measurement only (issue 17). The bundled test web's pages are a few hundred bytes, and
crawl CPU grows with page size (parsing, digests, compression), so this exports a web whose
pages are filled to a real page's size (``WebSpec(page_bytes=(5_000, 40_000))``: median about
30 KB) to static files, serves them with nginx (``workers_scaling``'s helpers: one worker
process, no access log) and crawls them with Gossamer in one process, ``--delay 0`` and its
defaults otherwise, to a page budget:

    apt-get install nginx-light      # once
    .venv/bin/python benchmarks/cpu_per_page.py --repeat 3               # 20,000 pages
    .venv/bin/python benchmarks/cpu_per_page.py --budget 10000 --profile  # py-spy as well
    .venv/bin/python benchmarks/cpu_per_page.py --src before=/tmp/snap/src --src after=src
    .venv/bin/python benchmarks/cpu_per_page.py --workers 1 2             # the 1 -> 2 speed-up
    .venv/bin/python benchmarks/cpu_per_page.py --host-sizes power        # the real web's shape
    .venv/bin/python benchmarks/cpu_per_page.py --workers 1 2 --shared    # and one Redis worker

``--shared`` adds a crawl shared in Redis (issue 27) beside the local modes: one
``redis-server`` (``shared_crawl``'s helper: its own port and folder, AOF with Redis's default
``everysec``) serves the whole sitting, and each such run is ``gossamer crawl SEEDS
--frontier redis://... --name NAME`` with a name of its own and the local crawl's other flags,
one worker process, measured the same way; Redis's own CPU (from ``/proc``) is shown beside
it, as it is part of what a shared page costs.

CPU is the crawler's whole process tree (``os.wait4`` on the crawler, which waits for its
workers), from spawn to exit, imports included; nginx's CPU comes from ``/proc``, and the rest
of the machine's (other work sharing it) from ``/proc/stat``. CPU per page suffers less from
such load than pages per second, but it does rise with it (by a fifth to a third on this
2-core machine with 1-1.4 cores busy elsewhere), so compare only runs of one sitting: variants
(``--src``: a ``src`` folder put first on PYTHONPATH, ``--commit``: one unpacked with
``git archive``) and worker counts alternate run by run.

``--profile`` adds one more crawl per variant under py-spy (``record --function --format raw
--subprocesses``; not timed, since the profiler slows it) and prints the top functions and
modules by own and by cumulative time, so each optimisation shows where its time went. The
exported web is kept in ``--cache`` (one folder per web), as exporting 20,000 pages of 30 KB
takes a while; a power-law web (``--host-sizes power``) is a web of its own there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from compare_scrapy import SCRAPY_BIN, gossamer_snapshot, machine_busy_seconds
from shared_crawl import Redis
from workers_scaling import export, nginx_config, process_cpu

from gossamer.testweb import WebSpec
from gossamer.testweb.model import HOST_SIZES

BIN = Path(sys.executable).parent
CACHE = Path(tempfile.gettempdir()) / "gossamer-cpu-per-page"


def exported(spec: WebSpec, cache: Path) -> tuple[Path, Path, list[tuple[str, str]]]:
    """The web's files (exported once per spec), its seeds file and its robots redirects."""
    fields = asdict(spec)
    if fields["host_sizes"] == "even":  # the key webs were cached under before the knob existed
        del fields["host_sizes"]
    key = hashlib.sha1(repr(fields).encode()).hexdigest()[:12]
    folder = cache / key
    done = folder / "export.json"
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        (folder / "www").mkdir(parents=True)
        seeds, redirects = export(spec, folder / "www")
        (folder / "seeds.txt").write_text("".join(f"{url}\n" for url in seeds))
        done.write_text(json.dumps({"spec": asdict(spec), "redirects": redirects}))
    for path in (cache, folder, *folder.rglob("*")):
        if path.is_dir():
            path.chmod(0o755)  # nginx's worker runs unprivileged and must read the files
    redirects = [tuple(pair) for pair in json.loads(done.read_text())["redirects"]]
    return folder / "www", folder / "seeds.txt", redirects


SHARED = "shared"  # the mode of a crawl shared in Redis, beside the local worker counts


def crawl_argv(
    seeds: Path, out: Path, budget: int, mode: int | str, frontier: tuple[str, str] = ("", "")
) -> list[str]:
    """``mode``: a local crawl's ``--workers``, or ``SHARED``: one worker of a crawl shared in
    Redis (``frontier``: Redis's URL and the crawl's name there), with the same other flags."""
    argv = [
        str(BIN / "gossamer"), "crawl", str(seeds), "--out", str(out),
        "--resolve", "*.web.test:127.0.0.1", "--delay", "0", "--no-progress",
    ]  # fmt: skip
    if mode == SHARED:
        argv += ["--frontier", frontier[0], "--name", frontier[1]]  # --frontier takes no --workers
    else:
        argv += ["--workers", str(mode)]
    return [*argv, "--max-pages", str(budget)] if budget else argv


def crawl(
    argv: list[str], out: Path, env: dict[str, str], server_pid: int, redis_pid: int | None
) -> dict[str, Any]:
    """One timed crawl, spawn to exit (``redis_pid``: a shared crawl's Redis, timed too)."""
    redis_before = process_cpu(redis_pid) if redis_pid else 0.0
    server_before, machine_before = process_cpu(server_pid), machine_busy_seconds()
    started = time.perf_counter()
    log = out.parent / "crawler.log"
    with log.open("wb") as sink:
        child = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"crawl failed ({status}); see {log}")
    stats = json.loads((out / "reports" / "stats.json").read_text())
    pages = int(stats["pages"])
    cpu = usage.ru_utime + usage.ru_stime
    server = process_cpu(server_pid) - server_before
    store = process_cpu(redis_pid) - redis_before if redis_pid else 0.0
    other = machine_busy_seconds() - machine_before - cpu - server - store
    shared = {"redis_ms_per_page": round(1000 * store / pages, 3)} if redis_pid else {}
    return {
        "pages": pages,
        "wall_s": round(wall, 2),
        "pages_per_s": round(pages / wall, 1),
        "cpu_ms_per_page": round(1000 * cpu / pages, 3),
        "crawler_cores": round(cpu / wall, 2),
        "nginx_cores": round(server / wall, 2),
        "other_cores": round(max(other, 0.0) / wall, 2),
        "mb_per_page": round(stats.get("bytes", 0) / pages / 1e6, 4),
        **shared,
    }


def module_of(frame: str) -> str:
    """The module a py-spy frame (``function (path)``) belongs to, as a dotted name."""
    path = frame.rpartition(" (")[2].rstrip(")").rsplit(":", 1)[0]  # no line number
    if path.startswith("<"):
        return path  # <frozen importlib._bootstrap> and the like
    for marker in ("/site-packages/", "/src/", "/lib/python3.11/"):
        if marker in path:
            path = path.rsplit(marker, 1)[1]
            break
    dotted = path.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def profile_tables(stacks: Path, top: int) -> dict[str, Any]:
    """Own and cumulative samples per function and per module, from py-spy's raw stacks."""
    own: dict[str, Counter[str]] = {"function": Counter(), "module": Counter()}
    total: dict[str, Counter[str]] = {"function": Counter(), "module": Counter()}
    samples = 0
    for line in stacks.read_text(encoding="utf-8").splitlines():
        path, _, count_text = line.rpartition(" ")
        frames = [
            f for f in path.split(";") if f and not f.startswith(("process ", "thread ", '"'))
        ]
        if not frames:
            continue
        count = int(count_text)
        samples += count
        modules = [module_of(frame) for frame in frames]
        own["function"][frames[-1]] += count
        own["module"][modules[-1]] += count
        for frame in set(frames):
            total["function"][frame] += count
        for module in set(modules):
            total["module"][module] += count

    def table(counter: Counter[str]) -> list[tuple[float, str]]:
        return [(round(100 * n / max(samples, 1), 1), name) for name, n in counter.most_common(top)]

    return {
        "samples": samples,
        **{f"own_by_{k}": table(c) for k, c in own.items()},
        **{f"total_by_{k}": table(c) for k, c in total.items()},
    }


def profiled(argv: list[str], out: Path, env: dict[str, str], rate: int, top: int) -> Any:
    stacks = out.parent / "profile.txt"
    spy = [str(SCRAPY_BIN / "py-spy"), "record", "--function", "--format", "raw"]
    spy += ["--subprocesses", "--rate", str(rate), "-o", str(stacks), "--", *argv]
    with (out.parent / "crawler.log").open("wb") as sink:
        subprocess.run(spy, check=True, env=env, stdout=sink, stderr=subprocess.STDOUT)
    return {"stacks": str(stacks), **profile_tables(stacks, top)}


def print_profile(name: str, found: dict[str, Any]) -> None:
    print(f"\n## profile: {name} ({found['samples']} samples, {found['stacks']})")
    for key in ("own_by_module", "total_by_module", "own_by_function", "total_by_function"):
        print(f"\n{key.replace('_', ' ')}:")
        for percent, what in found[key]:
            print(f"  {percent:5.1f}%  {what}")


def variants(args: argparse.Namespace, work: Path) -> dict[str, str | None]:
    """Variant name -> src folder to put first on PYTHONPATH (None: the installed tree)."""
    found: dict[str, str | None] = {}
    for item in args.src:
        name, _, folder = item.partition("=")
        found[name] = str(Path(folder).resolve())
    for commit in args.commit:
        found[commit] = str(gossamer_snapshot(commit, work))
    return found or {"tree": None}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=120, help="ordinary pages per host")
    parser.add_argument(
        "--host-sizes",
        choices=HOST_SIZES,
        default="even",
        help="every host --pages pages, or sizes by a power law with the same total",
    )
    parser.add_argument("--low", type=int, default=5_000, help="smallest page, bytes")
    parser.add_argument("--high", type=int, default=40_000, help="largest page, bytes")
    parser.add_argument("--budget", type=int, default=20_000, help="pages (0: the whole web)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    parser.add_argument("--shared", action="store_true", help="and one worker shared in Redis")
    parser.add_argument("--src", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--commit", action="append", default=[], metavar="COMMIT")
    parser.add_argument("--profile", action="store_true", help="one more crawl under py-spy")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--tables", type=Path, help="only print the tables of a profile.txt")
    return parser.parse_args()


def label(name: str, mode: int | str) -> str:
    return f"{name} {mode}" if mode == SHARED else f"{name} w{mode}"


def run(args: argparse.Namespace, work: Path, server_pid: int, redis: Redis | None) -> Any:
    seeds = args.seeds
    found: dict[str, Any] = {"runs": {}, "profiles": {}}
    modes: list[int | str] = [*args.workers, *([SHARED] if redis else [])]
    configs = [(n, s, m) for n, s in variants(args, work).items() for m in modes]
    redis_pid = redis.process.pid if redis and redis.process else None
    for round_ in range(args.repeat):
        for index, (name, src, mode) in enumerate(configs if round_ % 2 == 0 else configs[::-1]):
            env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
            out = work / f"{label(name, mode).replace(' ', '-')}-{round_}" / "out"
            out.parent.mkdir(parents=True)
            frontier = (redis.url if redis else "", f"cpu{round_}x{index}")
            argv = crawl_argv(seeds, out, args.budget, mode, frontier)
            shared = redis_pid if mode == SHARED else None
            result = crawl(argv, out, env, server_pid, shared)
            print(f"{label(name, mode)} #{round_}: {json.dumps(result)}", flush=True)
            found["runs"].setdefault(label(name, mode), []).append(result)
            shutil.rmtree(out.parent)
            if redis and mode == SHARED:
                redis.client().flushall()  # every shared run starts on an empty Redis
    if args.profile:
        for name, src, mode in configs:
            env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
            out = work / f"{label(name, mode).replace(' ', '-')}-profile" / "out"
            out.parent.mkdir(parents=True)
            frontier = (redis.url if redis else "", "profile")
            argv = crawl_argv(seeds, out, args.budget, mode, frontier)
            found["profiles"][label(name, mode)] = profiled(argv, out, env, args.rate, args.top)
            shutil.rmtree(out)  # keep the stacks beside it
            if redis and mode == SHARED:
                redis.client().flushall()
    return found


def main() -> None:
    args = arguments()
    if args.tables is not None:
        print_profile(
            args.tables.parent.name,
            {"stacks": args.tables, **profile_tables(args.tables, args.top)},
        )
        return
    if shutil.which("nginx") is None:
        raise SystemExit("nginx is not installed (apt-get install nginx-light)")
    spec = WebSpec(
        hosts=args.hosts,
        pages_per_host=args.pages,
        crawl_delay_hosts=False,
        special_hosts=False,
        page_bytes=(args.low, args.high),
        host_sizes=args.host_sizes,
    )
    www, args.seeds, redirects = exported(spec, args.cache)
    load = Path("/proc/loadavg").read_text().split()[:3]
    work = Path(tempfile.mkdtemp(prefix="gossamer-cpu-"))
    conf = nginx_config(www, work, redirects)
    subprocess.run(["nginx", "-c", str(conf)], check=True)
    redis = Redis(work / "redis") if args.shared else None
    try:
        if redis:
            redis.start()
        nginx_pid = int((work / "nginx.pid").read_text())
        children = Path(f"/proc/{nginx_pid}/task/{nginx_pid}/children").read_text().split()
        found = run(args, work / "runs", int(children[0]) if children else nginx_pid, redis)
    finally:
        subprocess.run(["nginx", "-c", str(conf), "-s", "stop"], check=False)
        if redis:
            redis.stop()
    found["web"] = asdict(spec)
    found["budget"] = args.budget
    found["load_before"] = load
    medians = {
        name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for name, runs in found["runs"].items()
    }
    found["medians"] = medians
    print("\n| variant | pages | pages/s | CPU ms/page | crawler cores | nginx | other", end="")
    print(" | Redis ms/page |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, m in medians.items():
        store = f"{m['redis_ms_per_page']:.2f}" if "redis_ms_per_page" in m else "-"
        print(
            f"| {name} | {m['pages']:.0f} | {m['pages_per_s']:.0f} | {m['cpu_ms_per_page']:.2f}"
            f" | {m['crawler_cores']:.2f} | {m['nginx_cores']:.2f} | {m['other_cores']:.2f}"
            f" | {store} |"
        )
    for name, tables in found["profiles"].items():
        print_profile(name, tables)
    if args.json:
        args.json.write_text(json.dumps(found, indent=2))
    if args.profile:
        print(f"\nprofiles kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)  # nginx may still be removing its pid file


if __name__ == "__main__":
    main()
