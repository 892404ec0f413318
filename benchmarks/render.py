"""What rendering costs: pages/s and CPU per page of a crawl of the script-built app site
(``gossamer.testweb.appsite``) with ``--render``, ``--render-auto`` and without, and with
browser pools of several sizes; every run judged by the site's request log.

The site: ``--apps`` app hosts of ``--pages`` script-built pages each (app2 with a robots.txt
Crawl-delay of ``--crawl-delay`` s), beside the server-built and thin hosts. Every crawl is
the real command line (``--workers 2``), ``--delay 0.05``; CPU is the crawl's and its
children's (the browsers and Playwright's driver included), from ``RUSAGE_CHILDREN``.

    .venv/bin/python benchmarks/render.py [--apps 4] [--pages 25] [--pools 1 2 4]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gossamer.testweb.appsite import AppSite, ThreadedAppSite

ROOT = Path(__file__).resolve().parents[1]


def _crawl(site: ThreadedAppSite, work: Path, name: str, flags: list[str]) -> dict[str, object]:
    seeds = work / "seeds.txt"
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
    out = work / name
    command = [sys.executable, "-m", "gossamer", "crawl", str(seeds), "--out", str(out),
               "--resolve", site.resolve(), "--delay", "0.05", "--no-progress",
               "--workers", "2", *flags]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    pages = int(next(line for line in done.stdout.splitlines() if line.startswith("pages:"))[7:])
    rendered = next(
        (line for line in done.stdout.splitlines() if line.startswith("rendered in")), "-"
    )
    site.sync()
    report = site.report(rendered="--render" in flags or "--render-auto" in flags)
    return {
        "run": name,
        "pages": pages,
        "rendered": rendered.removeprefix("rendered in a browser: "),
        "seconds": round(wall, 2),
        "pages_per_s": round(pages / wall, 2),
        "cpu_ms_per_page": round(1000 * cpu / max(pages, 1), 1),
        "audit": "clean" if report.ok() else report.summary().replace("\n", "; "),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=4)
    parser.add_argument("--pages", type=int, default=25)
    parser.add_argument("--crawl-delay", type=float, default=0.3)
    parser.add_argument("--pools", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    spec = AppSite(apps=args.apps, pages=args.pages, plain_pages=args.pages,
                   crawl_delay=args.crawl_delay)  # fmt: skip
    runs = [("plain", [])] + [
        (f"render pool={pool}", ["--render", "app*.web.test", "--config", f"pool{pool}"])
        for pool in args.pools
    ]
    runs.append(("render-auto pool=2", ["--render-auto", "*"]))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for pool in args.pools:
            (work / f"pool{pool}").write_text(f"[render]\npool = {pool}\n", encoding="utf-8")
        for name, given in runs:
            flags = [str(work / f) if f.startswith("pool") else f for f in given]
            with ThreadedAppSite(spec) as site:  # a fresh log for each run
                rows.append(_crawl(site, work, name.replace(" ", "_").replace("=", ""), flags))
            print(rows[-1], flush=True)
    print("| run | pages | rendered | s | pages/s | CPU ms/page | audit |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(value) for value in row.values()) + " |")


if __name__ == "__main__":
    main()
