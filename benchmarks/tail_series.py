"""Requests per second of a whole crawl, and its tail, judged from nginx's log (issue 29).

The power-law web (200 hosts, 20,000 pages of 5-40 KB, the biggest host about a tenth) is
crawled to its end by ``gossamer crawl`` with its defaults and ``--delay 0``, once per source
tree per round, the trees alternating. For each run: wall time, the fetching window (first
request to last), the requests of each second, and how many of the last 2 s's requests went
to the biggest host (the one-at-a-time chain that makes the tail).

    .venv/bin/python benchmarks/tail_series.py --tree before=/tmp/old/src --tree after=src
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from cpu_per_page import BIN
from workers_scaling import export, nginx_config

from gossamer.testweb import WebSpec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC (PYTHONPATH)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--host-sizes", choices=("even", "power"), default="power")
    args = parser.parse_args()
    trees = [tuple(tree.split("=", 1)) for tree in args.tree]
    spec = WebSpec(
        hosts=200,
        pages_per_host=100,
        crawl_delay_hosts=False,
        special_hosts=False,
        page_bytes=(5000, 40000),
        robots_error_host=True,
        host_sizes=args.host_sizes,
    )
    work = Path(tempfile.mkdtemp(prefix="tail-"))
    try:
        www = work / "www"
        www.mkdir()
        seeds, redirects = export(spec, www)
        for folder in (work, www, *www.rglob("*")):
            if folder.is_dir():
                folder.chmod(0o755)  # nginx's worker reads them as nobody
        (work / "seeds.txt").write_text("".join(f"{url}\n" for url in seeds))
        for round_ in range(args.rounds):
            for name, src in trees if round_ % 2 == 0 else trees[::-1]:
                result = _run(work, www, redirects, name, src, round_)
                print(name, round_, json.dumps(result), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(  # noqa: PLR0917 - one run's web, tree and round, passed once
    work: Path, www: Path, redirects: object, name: str, src: str, round_: int
) -> dict[str, object]:
    log = work / f"access-{name}-{round_}.log"
    conf = nginx_config(www, work, redirects, log)  # type: ignore[arg-type]
    subprocess.run(["nginx", "-c", str(conf)], check=True)
    out = work / f"out-{name}-{round_}"
    started = time.time()
    try:
        subprocess.run(
            [
                str(BIN / "gossamer"),
                "crawl",
                str(work / "seeds.txt"),
                "--out",
                str(out),
                "--resolve",
                "*.web.test:127.0.0.1",
                "--delay",
                "0",
                "--no-progress",
            ],
            env=dict(os.environ, PYTHONPATH=src),
            check=True,
            capture_output=True,
        )
        wall = time.time() - started
    finally:
        subprocess.run(["nginx", "-c", str(conf), "-s", "quit"], check=False)
    while (work / "nginx.pid").exists():  # the log is complete once nginx has gone
        time.sleep(0.05)
    shutil.rmtree(out)
    fields = [line.split(" ", 5) for line in log.read_text().splitlines()]
    stamps = sorted(float(f[0]) for f in fields)
    first, last = stamps[0], stamps[-1]
    per_second = Counter(int(stamp - first) for stamp in stamps)
    big = Counter(f[2] for f in fields).most_common(1)[0][0]
    tail = [f for f in fields if float(f[0]) >= last - 2]
    return {
        "wall": round(wall, 2),
        "window": round(last - first, 2),
        "last_2s": len(tail),
        "biggest_host_in_last_2s": sum(1 for f in tail if f[2] == big),
        "series": [per_second[s] for s in range(int(last - first) + 1)],
    }


if __name__ == "__main__":
    main()
