"""Workers started ahead of their orders (issue 29): how many the command line starts, and
that one whose orders never come ends without crawling. (Ordered workers crawling, and dying
with a coordinator killed by ``kill -9``, are what ``tests/integration/test_workers.py``
shows.)"""

from __future__ import annotations

import os

import pytest

from gossamer.cli import _early_workers
from gossamer.spawning import start_workers

_CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["crawl", "seeds.txt", "--out", "d", "--workers", "3"], 3),
        (["-v", "crawl", "seeds.txt", "--out", "d", "--workers=4"], 4),
        (["crawl", "seeds.txt", "--out", "d"], _CORES),
        (["crawl", "--resume", "d"], _CORES),
        (["crawl", "seeds.txt", "--out", "d", "--engine", "threads"], 0),
        (["crawl", "seeds.txt", "--out", "d", "--frontier", "redis://h"], 0),
        (["crawl", "--help"], 0),
        (["crawl", "seeds.txt", "--out", "d", "--workers", "many"], 0),
        (["search", "d", "words", "--workers", "3"], 0),
        (["--version"], 0),
    ],
)
def test_the_workers_started_before_parsing(words: list[str], expected: int) -> None:
    assert _early_workers(words) == expected


def test_a_worker_whose_orders_never_come_ends_without_a_word() -> None:
    (worker,) = start_workers(range(1))
    assert worker.process.name == "gossamer-worker-0"
    worker.orders.close()  # as a coordinator that failed before ordering it
    worker.process.join()
    assert worker.process.exitcode == 0
    with pytest.raises(EOFError):  # it never said anything
        worker.up.recv()
    worker.cancel()


def test_a_worker_never_ordered_is_stopped_by_cancel() -> None:
    first, second = start_workers(range(2))
    assert second.process.name == "gossamer-worker-1"
    first.cancel()  # not needed: stopped at once, not left to finish its imports
    second.cancel()
    assert first.process.exitcode is not None
    assert second.process.exitcode is not None
