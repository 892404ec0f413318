"""Seed 000's data race (its section 2.3), replayed in the real pipeline, deterministically.

The seed's setup: four crawler threads whose queues hold the same URL, two buffers of size 1
(crawlers 0, 1 -> buffer 0; 2, 3 -> buffer 1), and so two index builders filing that URL at
once. The interleaving is the one Spin finds for the model without the per-path lock
(models/pipeline.pml with SHOW_DATARACE, trail models/trails/pipeline-datarace.pml.trail):
both builders pass the exists-check before either creates the file. ``Schedule`` imposes it
through the tree's hook points, one step at a time; no test here sleeps.
"""

from __future__ import annotations

import threading
from pathlib import Path

from gossamer.threads.builders import BuilderPipeline, PipelineReport
from gossamer.threads.urltree import IndexedUrlTree

from .schedule import Schedule, Step

URL = "https://en.wikipedia.org/wiki/Concurrency_(computer_science)"
ITEM = (URL, "", "200 text/html seed.warc.gz:0")
A, B = "gossamer-builder-0", "gossamer-builder-1"
LIMIT = 30.0  # seconds a crawler may take to hand its page over; only a failure waits this

# The race trail, as the model's steps: each builder takes the URL and checks the tree (the
# file is absent for both), then each creates the file, then each writes its data line.
RACE = [
    Step(A, "filing"),  # A: check -> absent
    Step(B, "filing"),  # B: check -> absent
    Step(A, "checked"),  # A: create
    Step(B, "checked"),  # B: create (the file is already there: a second creation)
    Step(A, "created"),  # A: write
    Step(B, "created"),  # B: write: a second data line
    Step(A, "written"),
    Step(B, "written"),
]

# The same trail with the lock on, as far as the lock lets it run: both builders still pass
# the first check before either creates; then A takes the lock and B, asking for it, must
# wait. A re-checks, creates, writes and unlocks; only then can B take the lock, and its
# re-check finds the file, so B leaves without creating or writing anything.
LOCKED = [
    Step(A, "filing"),  # A: check -> absent
    Step(B, "filing"),  # B: check -> absent
    Step(A, "checked"),  # A: asks for the path lock
    Step(B, "checked"),  # B: asks for the same lock (it now has two users)
    Step(A, "locking"),  # A: takes the lock
    Step(B, "locking", blocks=True),  # B: waits for the lock
    Step(A, "locked"),  # A: re-check -> absent
    Step(A, "rechecked"),  # A: create
    Step(A, "created"),  # A: write
    Step(A, "written"),  # A: unlock; now B takes the lock
    Step(A, "unlocked"),
    Step(B, "locked"),  # B: re-check -> the file is there: unlock without writing
    Step(B, "unlocked"),
]


def replay(tmp_path: Path, schedule: Schedule, *, synchronised: bool) -> PipelineReport:
    tree = IndexedUrlTree(tmp_path / "tree", synchronised=synchronised, hooks=schedule.hooks())
    pipeline = BuilderPipeline(tree, buffers=2, size=1, stats_dir=tmp_path / "stats")
    pipeline.start()
    crawlers = [
        threading.Thread(target=pipeline.buffer_for(number).put, args=(ITEM,))
        for number in range(4)
    ]
    for crawler in crawlers:
        crawler.start()
    for crawler in crawlers:
        crawler.join(LIMIT)
        assert not crawler.is_alive(), "a crawler never got its page into a buffer"
    return pipeline.close()


def lines_of(tree: Path) -> list[str]:
    (file,) = tree.rglob("url-*.txt")
    return file.read_text(encoding="utf-8").splitlines()


def test_without_the_lock_the_trail_writes_the_file_twice(tmp_path: Path) -> None:
    schedule = Schedule(RACE)
    report = replay(tmp_path, schedule, synchronised=False)
    assert schedule.failures == []
    assert schedule.passed == [step[:2] for step in RACE]
    # Both builders believed they filed the URL; the file holds two data lines.
    assert report.filed == 2
    assert (report.url_files, report.data_lines, report.duplicate_files) == (1, 2, 1)
    assert lines_of(tmp_path / "tree") == [f"{URL}\t\t{ITEM[2]}"] * 2
    # The seed's third way to see it: the URL twice in res.txt.
    result = (tmp_path / "stats" / "res.txt").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[0] for line in result] == [URL, URL]
    statistics = (tmp_path / "stats" / "statistics.txt").read_text(encoding="utf-8")
    assert "files written more than once: 1" in statistics


def test_with_the_lock_the_same_trail_writes_it_once(tmp_path: Path) -> None:
    schedule = Schedule(LOCKED)
    report = replay(tmp_path, schedule, synchronised=True)
    assert schedule.failures == []
    assert schedule.passed == [step[:2] for step in LOCKED]
    assert report.filed == 1
    assert (report.url_files, report.data_lines, report.duplicate_files) == (1, 1, 0)
    assert lines_of(tmp_path / "tree") == [f"{URL}\t\t{ITEM[2]}"]


def test_with_the_lock_the_race_trail_itself_cannot_be_followed(tmp_path: Path) -> None:
    # The race trail asks A to create the file while B has passed its check too; with the
    # lock, A stops at the lock first, so the trail breaks off there and the threads run on.
    schedule = Schedule(RACE)
    report = replay(tmp_path, schedule, synchronised=True)
    assert schedule.failures == [f"the schedule wants {A} at 'created'; it waits at 'locking'"]
    assert schedule.passed == [step[:2] for step in RACE[:4]]
    assert (report.url_files, report.data_lines, report.duplicate_files) == (1, 1, 0)
