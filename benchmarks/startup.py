"""Start-up and end of a short crawl, judged by the server's own clock (issue 29).

    .venv/bin/python benchmarks/startup.py --modes 1 2 default --repeat 3
    .venv/bin/python benchmarks/startup.py --trees /tmp/before/src src  # before/after

A small test web (4 hosts x 5 pages, no delay) is crawled to its end by ``gossamer crawl`` in
each mode (``--workers N``, or ``default``: no flag, one worker per core). From the test web's
audit: spawn -> the first request, the fetching window (first request to last response), and
the last response -> the process's exit. Each figure is the median of ``--repeat`` runs.
With ``--trees``, each source tree (``PYTHONPATH``) runs every mode, the trees alternating run
by run, so that a busy moment of a shared machine hits them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web


def one_run(
    web_spec: WebSpec, mode: str, work: Path, tree: str | None = None
) -> tuple[float, float, float]:
    with ThreadedTestWeb(build_web(web_spec)) as site:
        seeds = work / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        out = work / f"out-{mode}-{time.monotonic_ns()}"
        flags = [] if mode == "default" else ["--workers", mode]
        command = [sys.executable, "-m", "gossamer", "crawl", str(seeds), "--out", str(out)]
        command += ["--resolve", "*.web.test:127.0.0.1", "--no-progress", "--delay", "0", *flags]
        env = None if tree is None else dict(os.environ, PYTHONPATH=tree)
        started = time.monotonic()
        subprocess.run(command, capture_output=True, check=True, env=env)
        ended = time.monotonic()
        records = site.audit.records()
    first = min(r.started for r in records)
    last = max(r.ended for r in records)
    return first - started, last - first, ended - last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["1", "2", "default"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trees", nargs="+", metavar="PYTHONPATH", help="source trees to compare")
    args = parser.parse_args()
    spec = WebSpec(seed=3, hosts=4, pages_per_host=5, special_hosts=False)
    trees = args.trees or [None]
    rows: dict[str, list[tuple[float, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="gossamer-startup-") as folder:
        for _ in range(args.repeat):  # modes alternate, so a slow moment hits them all
            for mode in args.modes:
                for tree in trees:
                    key = mode if tree is None else f"{tree} {mode}"
                    rows.setdefault(key, []).append(one_run(spec, mode, Path(folder), tree))
    result = {
        key: {
            name: round(statistics.median(run[k] for run in runs), 3)
            for k, name in enumerate(("start_s", "fetching_s", "end_s"))
        }
        for key, runs in rows.items()
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
