"""Wall time of one ``gossamer search DIR "query"`` from the shell, on a 10k-page crawl.

A synthetic crawl folder (``search_speed.make_corpus``: WARC files and crawl.db written
with Gossamer's own store, text from a Zipf vocabulary, links between pages) is indexed
and ranked once; then the command is run ``--runs`` times as a user runs it, each a new
process, cycling through a few queries, and the median and spread of the wall time are
printed. For scale, the same for a bare ``python -c pass`` and for ``python -c "import
gossamer.cli"`` (what every subcommand pays before it starts), and the time the search
itself takes inside the process (the JSON output's ``seconds``).

    python benchmarks/search_cli_latency.py --out /tmp/cli-latency
    python benchmarks/search_cli_latency.py --out /tmp/cli-latency --reuse --runs 30
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from search_speed import make_corpus

from gossamer.index import build_index
from gossamer.rank import rank_crawl
from gossamer.search.docranks import save_doc_ranks

PYTHON = sys.executable
GOSSAMER = str(Path(sys.executable).parent / "gossamer")
QUERIES = ("w12", "w3 w40", '"w5 w9"', "w100 site:host7.bench.test", "w7 -w8")


def _wall(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started, done.stdout


def _report(name: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{name:34s} median {statistics.median(ms):6.0f} ms"
        f"  min {ms[0]:6.0f} ms  max {ms[-1]:6.0f} ms  ({len(ms)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-cli-latency"))
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--reuse", action="store_true", help="reuse a crawl an earlier run made")
    args = parser.parse_args()
    folder = args.out / "crawl"
    if not (args.reuse and (folder / "index").is_dir()):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        make_corpus(folder, args.pages, seed=1)
        report = build_index(folder, workers=2)
        rank_crawl(folder)
        save_doc_ranks(folder)  # as `gossamer rank` does
        print(f"{report.documents} documents indexed in {report.seconds:.1f} s")
    _wall([GOSSAMER, "search", str(folder), "w1"])  # warm the page cache once
    bare = [_wall([PYTHON, "-c", "pass"])[0] for _ in range(args.runs)]
    cli = [_wall([PYTHON, "-c", "import gossamer.cli"])[0] for _ in range(args.runs)]
    walls, inside = [], []
    for run in range(args.runs):
        query = QUERIES[run % len(QUERIES)]
        wall, out = _wall([GOSSAMER, "search", str(folder), query, "--json"])
        walls.append(wall)
        inside.append(float(json.loads(out)["seconds"]))
    _report("python -c pass", bare)
    _report("python -c 'import gossamer.cli'", cli)
    _report("gossamer search DIR QUERY --json", walls)
    _report("  of which the search itself", inside)


if __name__ == "__main__":
    main()
