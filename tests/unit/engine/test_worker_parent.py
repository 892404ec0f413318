"""A ``--workers`` worker never outlives its coordinator, even one killed while it started.

The kill -9 loop of ``test_crash_resume.py`` kills the coordinator after a few logged fetches,
which can be before the second worker process has finished starting: that worker then asked
Linux to kill it with its parent when the parent was already gone, and crawled on alone (no
lock, no coordinator) until its first message up failed. Here the worker's start-up runs in a
grandchild of the test whose parent has already exited, which is that moment made certain:
the process waits for its parent's end (the EOF of a pipe only the parent writes to), and no
sleep is involved. (A worker whose coordinator is alive going on is what every
``--workers`` test shows.)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from multiprocessing.connection import Connection

import pytest

from gossamer.engine.worker import _die_with_parent

_SPAWN = multiprocessing.get_context("spawn")  # as the coordinator starts its workers


def _late_worker(parent_gone: Connection, report: Connection) -> None:
    with contextlib.suppress(EOFError):
        parent_gone.recv()  # returns at EOF: the process that started this one has ended
    _die_with_parent()
    report.send("still running")


def _short_lived_coordinator(report: Connection) -> None:
    reading, _writing = _SPAWN.Pipe(duplex=False)  # held until this process ends
    _SPAWN.Process(target=_late_worker, args=(reading, report)).start()
    reading.close()
    # Ends without joining its child (as a kill -9 would); ending closes ``_writing``.
    os._exit(0)


def test_a_worker_whose_coordinator_died_during_its_start_ends_at_once() -> None:
    told, report = _SPAWN.Pipe(duplex=False)
    coordinator = _SPAWN.Process(target=_short_lived_coordinator, args=(report,))
    coordinator.start()
    report.close()  # the worker holds the only writing end left
    coordinator.join()
    with pytest.raises(EOFError):  # it died without a word
        told.recv()
    told.close()
