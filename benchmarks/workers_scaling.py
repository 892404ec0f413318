"""Does the crawl scale from 1 to 2 worker processes? Measured against a cheap server.

The Scrapy comparison serves the test web from Python (aiohttp), which itself takes a quarter
of one of this machine's two cores. Here the same web is exported to static files and served
by nginx (one worker process, access log off), so nearly both cores are left to the crawler:

    apt-get install nginx-light      # once
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 15000
    # pages of real size (5-40 KB), a host whose robots.txt answers 500, to process exit:
    .venv/bin/python benchmarks/workers_scaling.py --hosts 200 --pages 100 --budget 0 \
        --page-bytes 5000 40000 --robots-error-host --workers 2 0

Each crawler configuration runs ``--repeat`` times, alternating; wall time is spawn to exit,
CPU is the crawler's process tree (``os.wait4`` on the coordinator, which waits for its
workers), and nginx's CPU is read from ``/proc``. Politeness is the same as in the Scrapy
comparison: one request in flight per host, no delay, robots.txt obeyed.
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

from gossamer.testweb import WebSpec, build_web
from gossamer.testweb.model import Kind
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


def nginx_config(root: Path, work: Path, redirects: list[tuple[str, str]]) -> Path:
    moved = "\n".join(
        f"        {host} {target};" for host, target in redirects if target.startswith("/")
    )
    failing = "\n".join(
        f"        {host} 1;" for host, target in redirects if not target.startswith("/")
    )
    text = f"""
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 4096; }}
http {{
    include /etc/nginx/mime.types;
    access_log off;
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


def crawl(seeds: Path, out: Path, workers: int, budget: int, nginx_pid: int) -> dict[str, float]:
    """One crawl: ``workers`` Gossamer processes, or Scrapy when it is ``SCRAPY``."""
    env = dict(os.environ)
    if workers == SCRAPY:
        argv = scrapy_argv(seeds, out, budget, 128, [f"TWISTED_REACTOR={REACTORS['epoll']}"])
        env["PYTHONPATH"] = str(HERE)  # Scrapy loads the test-web resolver by dotted name
    else:
        config = out.parent / "c.toml"
        config.write_text("[politeness]\ndelay = 0.0\n")
        argv = [
            str(BIN / "gossamer"), "crawl", str(seeds), "--out", str(out),
            "--resolve", "*.web.test:127.0.0.1", "--config", str(config),
            "--concurrency", "128", "--no-progress", "--workers", str(workers),
        ]  # fmt: skip
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--workers", type=int, nargs="*", default=[1, 2, SCRAPY], help="0 means Scrapy"
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
        )
        seeds_list, redirects = export(spec, work / "www")
        seeds = work / "seeds.txt"
        seeds.write_text("\n".join(seeds_list) + "\n")
        conf = nginx_config(work / "www", work, redirects)
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
                    runs[workers].append(crawl(seeds, out, workers, args.budget, server_pid))
                    shutil.rmtree(out)
        finally:
            subprocess.run(["nginx", "-c", str(conf), "-s", "stop"], check=False)
        medians = {
            w: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for w, rs in runs.items()
        }
        print(json.dumps({"runs": runs, "medians": medians}, indent=2))
        base = medians[args.workers[0]]["pages_per_s"]
        for w in args.workers:
            m = medians[w]
            name = "Scrapy" if w == SCRAPY else f"Gossamer, {w} worker(s)"
            print(
                f"| {name} | {m['pages_per_s']:.0f} | {m['pages_per_s'] / base:.2f}x |"
                f" {m['crawler_cpu_ms_per_page']:.2f} | {m['crawler_cores']:.2f} |"
                f" {m['nginx_cores']:.2f} |"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
