"""How ``--workers`` processes are started, and how each one ends with its coordinator.

Data flow: the coordinator (``engine/workers.py``) -> **start_workers** -> each worker a new
interpreter (``spawn``: nothing of the coordinator's threads or state is inherited) that
first asks Linux to kill it the moment the coordinator dies, even by ``kill -9``
(**tie_to_coordinator**), then imports the crawler (``engine/worker.py``) and waits for its
orders: the crawl's settings, the seeds, its index and first grant. The coordinator starts
its workers before its own set-up (the resume's levelling, the store, the fleet), so that
their imports (0.6 s: aiohttp, the parser, the WARC writer) overlap it; a worker never
fetches before its orders, which come once the folder is level. A worker whose orders
never come (the crawl was complete, or the coordinator failed first) ends without a word.

A forkserver preloading the worker's modules would start the workers about 0.5 s sooner, but
its children are not the coordinator's: their CPU escapes the coordinator's process-tree
accounting (``wait4``, which the benchmarks read) and their death signal would follow the
server, not the coordinator. Spawn keeps both simple. This module imports nothing of the
crawler, so the coordinator can start its workers before it imports its own share.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext
from multiprocessing.process import BaseProcess
from typing import Any

__all__ = [
    "FAILED",
    "Orders",
    "StartedWorker",
    "context",
    "start_workers",
    "tie_to_coordinator",
    "tie_to_parent",
]

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

FAILED = "failed"  # the reason a worker gives when it dies of a fault that is not a store fault


@dataclass(frozen=True, slots=True)
class Orders:
    """What a started worker waits for: its part of the crawl (``engine/worker.worker_main``)."""

    config_data: dict[str, Any]
    out: str
    seeds: Any  # a SeedList; typed loosely so that this module imports nothing of the crawl
    index: int
    count: int
    allowance: int | None  # its first grant of the page target; None without one
    log_level: int


@dataclass(frozen=True, slots=True)
class StartedWorker:
    """A worker process started ahead of its orders, with the coordinator's ends of its
    channels: ``up`` what the worker says (a pipe of its own), ``inbox`` what the coordinator
    forwards to it, ``orders`` where its orders go, once."""

    process: BaseProcess
    up: Connection
    inbox: multiprocessing.Queue[Any]
    orders: Connection

    def order(self, orders: Orders) -> None:
        """Send the worker its orders: it starts crawling as soon as it has imported."""
        with contextlib.suppress(OSError):  # dead already: its sentinel tells the coordinator
            self.orders.send(orders)
        self.orders.close()

    def cancel(self) -> None:
        """Wait for the worker's end; one never ordered is not needed, and is stopped first
        (it holds nothing yet: no file, no lock)."""
        if not self.orders.closed:
            self.orders.close()
            self.process.terminate()
        self.process.join()
        self.up.close()
        self.inbox.close()


def context() -> SpawnContext:
    """The start method of the workers."""
    spawning: SpawnContext = multiprocessing.get_context("spawn")
    return spawning


def start_workers(indexes: range) -> list[StartedWorker]:
    """Start the worker processes ``indexes`` (``gossamer-worker-K``); each imports the
    crawler and waits for its orders."""
    spawn = context()
    started = []
    for k in indexes:
        reading, sending = spawn.Pipe(duplex=False)  # up: the coordinator's end, the worker's
        waiting, ordering = spawn.Pipe(duplex=False)  # orders: the worker's end, the coordinator's
        inbox: multiprocessing.Queue[Any] = spawn.Queue()
        process = spawn.Process(
            target=_standby, args=(sending, inbox, waiting), name=f"gossamer-worker-{k}"
        )
        process.start()
        sending.close()  # the worker holds its own: the pipe ends when the worker does
        waiting.close()
        started.append(StartedWorker(process, reading, inbox, ordering))
    return started


def _standby(link: Connection, inbox: multiprocessing.Queue[Any], orders: Connection) -> None:
    """A started worker: tied to the coordinator first, then the long import, then its orders."""
    # Ctrl-C reaches the whole process group; the coordinator decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    tie_to_coordinator()
    from gossamer.engine.worker import worker_main  # noqa: PLC0415 - the import overlaps

    try:
        given: Orders = orders.recv()
    except EOFError:  # not needed after all
        return
    finally:
        orders.close()
    worker_main(
        given.config_data,
        given.out,
        given.seeds,
        given.index,
        given.count,
        link,
        inbox,
        given.allowance,
        given.log_level,
    )


def tie_to_coordinator() -> None:
    """Ask Linux to SIGKILL this worker if the coordinator dies (even by ``kill -9``): an
    orphaned worker would wait forever for the coordinator's stop, and a resume must find the
    folder free (elsewhere a no-op, and the worker ends at its first message up that fails).
    A coordinator killed while this process was still starting is gone already: the worker
    ends at once."""
    tie_to_parent()
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # reparented: the parent has died
        os.kill(os.getpid(), signal.SIGKILL)


def tie_to_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``; elsewhere
    a no-op), and die now if the parent died before the request was made (reparented)."""
    import ctypes.util  # noqa: PLC0415 - in the worker only: the coordinator starts sooner

    parent = os.getppid()
    name = ctypes.util.find_library("c")
    prctl = getattr(ctypes.CDLL(name), "prctl", None) if name else None
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
