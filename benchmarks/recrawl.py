"""A recrawl against a real server: what asking a whole crawl again costs (issue 31).

Role: measurement only. ``cpu_per_page``'s web of real-size pages (5-40 KB) is served by
nginx as static files, which answers ``If-None-Match`` and ``If-Modified-Since`` with 304 as
any static web server does. Each round crawls the whole web into a fresh folder (no page
target), changes a share of the files on disk (``--changed``: their text grows by a
paragraph, so nginx gives them a new ETag and Last-Modified), then runs ``gossamer crawl
--resume DIR --recrawl``; the files are put back afterwards. Both runs are timed spawn to
exit (the crawler's whole process tree: ``os.wait4``), with the body bytes each received
(``stats.json``: the first crawl's ``bytes``, the recrawl's own ``recrawl.bytes``) and the
recrawl's answers:

    apt-get install nginx-light      # once
    .venv/bin/python benchmarks/recrawl.py --workers 1 2 --repeat 2
    .venv/bin/python benchmarks/recrawl.py --hosts 50 --pages 100 --changed 0.1

Compare only the rows of one sitting (see ``cpu_per_page``'s notes on load).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from cpu_per_page import BIN, CACHE, exported
from workers_scaling import nginx_config, process_cpu

from gossamer.testweb import WebSpec

_ADDED = b"<p>revisedqx9 a paragraph added since the first crawl</p>\n"


def timed(argv: list[str], out: Path, server_pid: int) -> dict[str, Any]:
    """One run, spawn to exit: wall time, crawler CPU, nginx CPU, and what stats.json says."""
    server_before = process_cpu(server_pid)
    started = time.perf_counter()
    with (out.parent / "crawler.log").open("ab") as sink:
        child = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"crawl failed ({status}); see {out.parent / 'crawler.log'}")
    stats = json.loads((out / "reports" / "stats.json").read_text())
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "nginx_s": round(process_cpu(server_pid) - server_before, 2),
        "bytes": int(stats["bytes"]),
        "recrawl": stats.get("recrawl", {}),
    }


def change(www: Path, share: float, seed: int) -> list[tuple[Path, bytes]]:
    """Grow ``share`` of the HTML files by a paragraph; their old bytes, to put back."""
    pages = sorted(p for p in www.rglob("*.html") if p.stat().st_size > 0)
    chosen = random.Random(seed).sample(pages, round(share * len(pages)))
    kept = []
    for path in chosen:
        old = path.read_bytes()
        kept.append((path, old))
        path.write_bytes(old.replace(b"</body>", _ADDED + b"</body>", 1))
    return kept


def round_trip(
    args: argparse.Namespace, seeds: Path, www: Path, work: Path, *, mode: int, turn: int
) -> dict[str, Any]:
    out = work / f"w{mode}-{turn}" / "out"
    out.parent.mkdir(parents=True)
    base = [str(BIN / "gossamer"), "crawl"]
    flags = ["--no-progress", "--workers", str(mode)]
    first = timed(
        [*base, str(seeds), "--out", str(out), "--resolve", "*.web.test:127.0.0.1",
         "--delay", "0", *flags],
        out, args.server_pid,
    )  # fmt: skip
    kept = change(www, args.changed, turn)
    try:
        again = timed([*base, "--resume", str(out), "--recrawl", *flags], out, args.server_pid)
    finally:
        for path, old in kept:
            path.write_bytes(old)
    pages = json.loads((out / "reports" / "stats.json").read_text())["pages"]
    shutil.rmtree(out.parent)
    return {"pages": pages, "first": first, "recrawl": again}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--pages", type=int, default=100, help="pages per host")
    parser.add_argument("--changed", type=float, default=0.10, help="share of pages changed")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    if shutil.which("nginx") is None:
        raise SystemExit("nginx is not installed (apt-get install nginx-light)")
    spec = WebSpec(hosts=args.hosts, pages_per_host=args.pages, crawl_delay_hosts=False,
                   special_hosts=False, page_bytes=(5_000, 40_000))  # fmt: skip
    www, seeds, redirects = exported(spec, args.cache)
    work = Path(tempfile.mkdtemp(prefix="gossamer-recrawl-"))
    conf = nginx_config(www, work, redirects)
    subprocess.run(["nginx", "-c", str(conf)], check=True)
    results: dict[int, list[dict[str, Any]]] = {mode: [] for mode in args.workers}
    try:
        nginx_pid = int((work / "nginx.pid").read_text())
        children = Path(f"/proc/{nginx_pid}/task/{nginx_pid}/children").read_text().split()
        args.server_pid = int(children[0]) if children else nginx_pid
        for turn in range(args.repeat):
            for mode in args.workers if turn % 2 == 0 else args.workers[::-1]:
                found = round_trip(args, seeds, www, work / "runs", mode=mode, turn=turn)
                print(f"w{mode} #{turn}: {json.dumps(found)}", flush=True)
                results[mode].append(found)
    finally:
        subprocess.run(["nginx", "-c", str(conf), "-s", "stop"], check=False)
    print("\n| mode | pages | first: s | recrawl: s | speed-up | first: CPU s | recrawl: CPU s"
          " | first: MB | recrawl: MB | 304 | changed |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode, runs in results.items():

        def med(key: str, part: str, runs: list[dict[str, Any]] = runs) -> float:
            return statistics.median(float(r[part][key]) for r in runs)

        answers = runs[-1]["recrawl"]["recrawl"]
        fetched = statistics.median(float(r["recrawl"]["recrawl"]["bytes"]) for r in runs)
        print(
            f"| w{mode} | {runs[-1]['pages']} | {med('wall_s', 'first'):.2f}"
            f" | {med('wall_s', 'recrawl'):.2f}"
            f" | {med('wall_s', 'first') / med('wall_s', 'recrawl'):.1f}x"
            f" | {med('cpu_s', 'first'):.2f} | {med('cpu_s', 'recrawl'):.2f}"
            f" | {med('bytes', 'first') / 1e6:.1f} | {fetched / 1e6:.1f}"
            f" | {answers.get('not_modified', 0)} | {answers.get('changed', 0)} |"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
