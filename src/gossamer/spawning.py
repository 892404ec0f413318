"""How ``--workers`` processes are started, and how each one ends with its coordinator.

Data flow: the coordinator (``engine/workers.py``) -> **context** -> each worker a new
interpreter (``spawn``: nothing of the coordinator's threads or state is inherited) ->
``engine/worker.py``, which first calls **tie_to_parent**: Linux kills the worker the moment
the coordinator dies, even by ``kill -9``, so a worker never crawls on alone.

A forkserver preloading the worker's modules would start the workers about 0.5 s sooner, but
its children are not the coordinator's: their CPU escapes the coordinator's process-tree
accounting (``wait4``, which the benchmarks read) and their death signal would follow the
server, not the coordinator. Spawn keeps both simple.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from multiprocessing.context import SpawnContext

__all__ = ["context", "tie_to_parent"]

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def context() -> SpawnContext:
    """The start method of the workers."""
    spawning: SpawnContext = multiprocessing.get_context("spawn")
    return spawning


def tie_to_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``; elsewhere
    a no-op), and die now if the parent died before the request was made (reparented)."""
    parent = os.getppid()
    name = ctypes.util.find_library("c")
    prctl = getattr(ctypes.CDLL(name), "prctl", None) if name else None
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
