"""Seed 000's sleep-based replay of the Indexed URL Tree's data race (a demonstration).

    python benchmarks/race_sleep_demo.py [--sleep 0.5] [--runs 3]

The seed's setup (its section 2.3): four crawler threads whose queues hold one and the same
URL, two buffers of size 1 (crawlers 0 and 1 share buffer 0, crawlers 2 and 3 buffer 1), so
two index builders file that URL at about the same time. As in the seed, each builder sleeps
right after its exists-check (the seed put ``Thread.sleep(5000)`` before writing the file):
both then find the file absent before either creates it. Without the per-path lock both
write, and the URL's file holds two data lines; with the lock the second builder's re-check
finds the file, and it holds one.

This depends on timing, which is why it is not a test: the suite replays the same race
deterministically (tests/unit/threads/test_race_replay.py). It prints one line per run and
variant, and exits with status 1 if the synchronised tree ever got a duplicate.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

from gossamer.threads.builders import BuilderPipeline, PipelineReport
from gossamer.threads.urltree import IndexedUrlTree

URL = "https://en.wikipedia.org/wiki/Concurrency_(computer_science)"


def one_run(folder: Path, *, synchronised: bool, sleep: float) -> PipelineReport:
    tree = IndexedUrlTree(
        folder / "tree",
        synchronised=synchronised,
        hooks={"checked": lambda _url: time.sleep(sleep)},
    )
    pipeline = BuilderPipeline(tree, buffers=2, size=1, stats_dir=folder)
    pipeline.start()
    crawlers = [
        threading.Thread(target=pipeline.buffer_for(n).put, args=((URL, "", f"crawler {n}"),))
        for n in range(4)
    ]
    for crawler in crawlers:
        crawler.start()
    for crawler in crawlers:
        crawler.join()
    return pipeline.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleep", type=float, default=0.5, help="seconds after the check")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    broken = False
    for run in range(1, args.runs + 1):
        for synchronised in (False, True):
            with tempfile.TemporaryDirectory(prefix="gossamer-race-") as folder:
                report = one_run(Path(folder), synchronised=synchronised, sleep=args.sleep)
            duplicate = report.duplicate_files > 0
            broken |= duplicate and synchronised
            print(
                f"run {run} {'with' if synchronised else 'without'} the lock:"
                f" {report.data_lines} data line(s) for 1 URL,"
                f" duplicate write: {'yes' if duplicate else 'no'}"
            )
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
