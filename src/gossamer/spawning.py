"""How ``--workers`` processes are started: forked from a server that imported them already.

A module of its own, outside ``engine/``: importing it must cost nothing (``engine/__init__``
imports the whole crawler).

Data flow: ``gossamer crawl`` (cli) -> **warm_up**, at once, before the CLI's own imports ->
a forkserver process importing the worker's modules (``engine/worker.py``) on another core
while the coordinator imports its own -> **context** in ``engine/workers.py`` -> each worker
forked from that server, its modules in place: no second interpreter start-up and import
(about 0.6 s) between the coordinator's start and a worker's first request.

The server's children are forked from a process with one thread, which is what makes forking
safe. A worker's parent is then the server, which Linux kills the moment the coordinator dies
(``forkserver_guard.py``), and the workers' own ``PR_SET_PDEATHSIG`` then ends them
(``engine/worker.py``): a ``kill -9`` of the coordinator still ends every worker at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import multiprocessing
import os
import signal
from collections.abc import Sequence
from multiprocessing.context import ForkServerContext

__all__ = ["context", "tie_to_parent", "warm_up"]

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>

# The guard first: from then on the server dies with the coordinator (forkserver_guard.py).
_PRELOAD = ["gossamer.forkserver_guard", "gossamer.engine.worker"]


def context() -> ForkServerContext:
    """The start method of the workers: a forkserver with their modules preloaded."""
    forking: ForkServerContext = multiprocessing.get_context("forkserver")
    forking.set_forkserver_preload(_PRELOAD)
    return forking


def warm_up(words: Sequence[str]) -> None:
    """Start the server now if the command line looks like a crawl of several processes
    (``crawl`` on more than one core, no ``--workers 1``, no shared or threaded engine): its
    imports then overlap the CLI's. A guess: a crawl that turns out to be one process leaves
    the server idle until it exits with the coordinator."""
    if not words or words[0] != "crawl" or (os.cpu_count() or 1) < 2:
        return
    single = ("--frontier", "--engine", "--workers=1", "--help", "-h")
    if any(word.startswith(single) for word in words):
        return
    if any(a == "--workers" and b == "1" for a, b in itertools.pairwise(words)):
        return
    from multiprocessing import forkserver  # noqa: PLC0415

    context()
    forkserver.ensure_running()


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
