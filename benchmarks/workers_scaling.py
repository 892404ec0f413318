"""Does the crawl scale from 1 to 2 worker processes? Measured against a cheap server.

The Scrapy comparison serves the test web from Python (aiohttp), which itself takes a quarter
of one of this machine's two cores. Here the same web is exported to static files and served
by nginx (one worker process, a buffered access log for the audit), so nearly both cores are
left to the crawler:

    apt-get install nginx-light      # once
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 15000
    # pages of real size (5-40 KB), a host whose robots.txt answers 500, to process exit:
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 0 \
        --page-bytes 5000 40000 --robots-error-host --workers 2 0
    # the same with Gossamer's defaults (one process per core), Scrapy keeping every body:
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 0 \
        --page-bytes 5000 40000 --robots-error-host --workers -1 0 --repeat 1
    # host sizes following a power law (the biggest host about a tenth of the pages):
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 0 \
        --page-bytes 5000 40000 --robots-error-host --host-sizes power --workers -1 0

Each crawler configuration runs ``--repeat`` times, alternating; wall time is spawn to exit,
CPU is the crawler's process tree (``os.wait4`` on the coordinator, which waits for its
workers), and nginx's CPU is read from ``/proc``. Politeness is the same as in the Scrapy
comparison: one request in flight per host, no delay, robots.txt obeyed; each run is judged
from nginx's access log by the test web's own audit rules (``nginx_audit.py``). Scrapy keeps
every body it fetches, as Gossamer's WARC files do.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compare_scrapy import HERE, REACTORS, crawler_report, ensure_scrapy_venv, scrapy_argv
from nginx_audit import LOG_FORMAT, audit_log

from gossamer.testweb import WebSpec, build_web
from gossamer.testweb.audit import AuditReport
from gossamer.testweb.model import HOST_SIZES, Kind
from gossamer.testweb.server import _Renderer

BIN = Path(sys.executable).parent
PORT = 18_080


def export(spec: WebSpec, root: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """Write every 200 answer as a file under root/HOST/; return seeds and robots redirects.

    A host whose robots.txt answers 5xx gets the status as its redirect "target" (``500``),
    which ``nginx_config`` turns into that answer."""
    web = build_web(spec)
    renderer = _Renderer(web, PORT)
    redirects: list[tuple[str, str]] = []
    for (host, target), resource in web.resources.items():
        if resource.kind is Kind.REDIRECT and resource.target is not None:
            redirects.append((host, resource.target.path))
            continue
        if target == "/robots.txt" and resource.kind is Kind.ERROR and resource.status >= 500:
            redirects.append((host, str(resource.status)))
            continue
        rendered = renderer.get(host, target, resource)
        if rendered.status != 200:
            continue
        path = target.split("?", 1)[0]
        file = root / host / (path.lstrip("/") or "index.html")
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(rendered.body)
    return web.seeds(PORT), redirects


def nginx_config(
    root: Path, work: Path, redirects: list[tuple[str, str]], log: Path | None = None
) -> Path:
    """nginx's configuration for the exported web; ``log``: where the access log goes, one
    line per request in ``nginx_audit.LOG_FORMAT`` (else none is written)."""
    moved = "\n".join(
        f"        {host} {target};" for host, target in redirects if target.startswith("/")
    )
    failing = "\n".join(
        f"        {host} 1;" for host, target in redirects if not target.startswith("/")
    )
    logging = "access_log off;"
    if log is not None:
        logging = f"log_format audit '{LOG_FORMAT}';\n    access_log {log} audit buffer=256k;"
    text = f"""
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    {logging}
    keepalive_requests 100000;
    client_body_temp_path {work}/tmp;
    proxy_temp_path {work}/tmp;
    fastcgi_temp_path {work}/tmp;
    uwsgi_temp_path {work}/tmp;
    scgi_temp_path {work}/tmp;
    map $host $robots_moved {{
        default "";
{moved}
    }}
    map $host $robots_failing {{
        default "";
{failing}
    }}
    server {{
        listen 127.0.0.1:{PORT};
        root {root}/$host;
        location = /robots.txt {{
            if ($robots_failing) {{ return 500; }}
            if ($robots_moved) {{ return 301 http://$host:{PORT}$robots_moved; }}
        }}
    }}
}}
"""
    (work / "tmp").mkdir(exist_ok=True)
    path = work / "nginx.conf"
    path.write_text(text)
    return path


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


SCRAPY = 0  # in the list of configurations, 0 stands for Scrapy (broad-crawl settings)
DEFAULTS = -1  # and -1 for Gossamer with its defaults (no --workers, no --concurrency)


def name_of(workers: int) -> str:
    if workers == SCRAPY:
        return "Scrapy"
    if workers == DEFAULTS:
        return "Gossamer, defaults"
    return f"Gossamer, {workers} worker(s)"


def crawl(seeds: Path, out: Path, workers: int, budget: int, nginx_pid: int) -> dict[str, float]:
    """One crawl: ``workers`` Gossamer processes, or Scrapy when it is ``SCRAPY``."""
    env = dict(os.environ)
    if workers == SCRAPY:
        reactor = [f"TWISTED_REACTOR={REACTORS['epoll']}"]
        argv = scrapy_argv(seeds, out, budget, 128, reactor, bodies=True)
        env["PYTHONPATH"] = str(HERE)  # Scrapy loads the test-web resolver by dotted name
    else:
        argv = [
            str(BIN / "gossamer"), "crawl", str(seeds), "--out", str(out),
            "--resolve", "*.web.test:127.0.0.1", "--delay", "0", "--no-progress",
        ]  # fmt: skip
        if workers != DEFAULTS:
            argv += ["--concurrency", "128", "--workers", str(workers)]
        if budget:
            argv += ["--max-pages", str(budget)]
    server_before = process_cpu(nginx_pid)
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=out.parent
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"crawl failed with status {status}: {argv}")
    if workers == SCRAPY:
        pages, _ = crawler_report("scrapy", out)
    else:
        pages = int(json.loads((out / "reports" / "stats.json").read_text())["pages"])
    if not pages:
        raise SystemExit(f"the crawl stored no pages; see {out}")
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "workers": workers,
        "pages": pages,
        "wall_s": round(wall, 2),
        "pages_per_s": round(pages / wall, 1),
        "crawler_cpu_ms_per_page": round(1000 * cpu / pages, 3),
        "crawler_cores": round(cpu / wall, 2),
        "nginx_cores": round((process_cpu(nginx_pid) - server_before) / wall, 2),
    }


def rotate_log(conf: Path, log: Path, dest: Path) -> None:
    """Move the access log of the run that just ended to ``dest``: nginx writes what it has
    buffered into it and opens a new log, which it has done once the new file exists."""
    log.rename(dest)
    subprocess.run(["nginx", "-c", str(conf), "-s", "reopen"], check=True)
    deadline = time.monotonic() + 10
    while not log.exists():
        if time.monotonic() > deadline:
            raise SystemExit("nginx did not reopen its access log")
        time.sleep(0.05)


def audited(report: AuditReport) -> dict[str, float]:
    return {
        "requests": report.requests,
        "overlaps": report.concurrent_violations,
        "robots_violations": report.robots_violations,
        "repeats": report.repeated_fetches,
        "missing": len(report.missing),
    }


def print_table(order: list[int], medians: dict[int, dict[str, float]]) -> None:
    """The medians as a Markdown table, each crawler against Scrapy (or the first)."""
    base = medians[SCRAPY if SCRAPY in medians else order[0]]
    against = name_of(SCRAPY) if SCRAPY in medians else name_of(order[0])
    print(
        f"| crawler | pages | pages/s | x {against} | CPU ms/page | CPU / {against} |"
        " crawler cores | nginx cores | overlaps | robots.txt violations | repeats | missing |"
    )
    print("| --- |" + " ---: |" * 11)
    for w in order:
        m = medians[w]
        print(
            f"| {name_of(w)} | {m['pages']:.0f} | {m['pages_per_s']:.0f} |"
            f" {m['pages_per_s'] / base['pages_per_s']:.2f} |"
            f" {m['crawler_cpu_ms_per_page']:.2f} |"
            f" {m['crawler_cpu_ms_per_page'] / base['crawler_cpu_ms_per_page']:.2f} |"
            f" {m['crawler_cores']:.2f} | {m['nginx_cores']:.2f} | {m['overlaps']:.0f} |"
            f" {m['robots_violations']:.0f} | {m['repeats']:.0f} | {m['missing']:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--budget", type=int, default=15_000, help="pages (0: to the end)")
    parser.add_argument(
        "--page-bytes", type=int, nargs=2, metavar=("LOW", "HIGH"), help="fill pages to this size"
    )
    parser.add_argument(
        "--robots-error-host", action="store_true", help="add a host whose robots.txt answers 500"
    )
    parser.add_argument(
        "--host-sizes",
        choices=HOST_SIZES,
        default="even",
        help="every host --pages pages, or sizes by a power law with the same total",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[1, 2, SCRAPY],
        help="0 means Scrapy, -1 Gossamer with its defaults (one process per core)",
    )
    args = parser.parse_args()
    if shutil.which("nginx") is None:
        raise SystemExit("nginx is not installed (apt-get install nginx-light)")
    if SCRAPY in args.workers:
        ensure_scrapy_venv()
    work = Path(tempfile.mkdtemp(prefix="gossamer-scaling-"))
    work.chmod(0o755)  # nginx's worker runs unprivileged and must read the exported files
    try:
        spec = WebSpec(
            hosts=args.hosts,
            pages_per_host=args.pages,
            crawl_delay_hosts=False,
            special_hosts=False,
            robots_error_host=args.robots_error_host,
            page_bytes=tuple(args.page_bytes) if args.page_bytes else None,
            host_sizes=args.host_sizes,
        )
        seeds_list, redirects = export(spec, work / "www")
        seeds = work / "seeds.txt"
        seeds.write_text("\n".join(seeds_list) + "\n")
        log = work / "access.log"
        conf = nginx_config(work / "www", work, redirects, log)
        web = build_web(spec)
        subprocess.run(["nginx", "-c", str(conf)], check=True)
        nginx_pid = int((work / "nginx.pid").read_text())
        # The single nginx worker is the child of the master; its CPU is what serving costs.
        children = Path(f"/proc/{nginx_pid}/task/{nginx_pid}/children").read_text().split()
        server_pid = int(children[0]) if children else nginx_pid
        runs: dict[int, list[dict[str, float]]] = {w: [] for w in args.workers}
        try:
            for round_ in range(args.repeat):
                order = args.workers if round_ % 2 == 0 else list(reversed(args.workers))
                for workers in order:
                    out = work / f"run-{workers}-{round_}" / "out"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    run = crawl(seeds, out, workers, args.budget, server_pid)
                    rotate_log(conf, log, out.parent / "access.log")
                    whole = args.budget == 0
                    report = audit_log(web, out.parent / "access.log", PORT, whole=whole)
                    runs[workers].append(run | audited(report))
                    print(f"{name_of(workers)}: {json.dumps(runs[workers][-1])}", flush=True)
                    shutil.rmtree(out.parent)
        finally:
            subprocess.run(["nginx", "-c", str(conf), "-s", "stop"], check=False)
        medians = {
            w: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for w, rs in runs.items()
        }
        print(json.dumps({"runs": runs, "medians": medians}, indent=2))
        print_table(args.workers, medians)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
