"""Imported by the workers' forkserver alone (``spawning.py`` preloads it): the server dies
with the coordinator that started it, at once.

Data flow: ``gossamer crawl`` (the coordinator) -> the forkserver (imports **this** first) ->
the ``--workers`` processes it forks. Each worker asks Linux to kill it when its parent, the
forkserver, dies (``engine/worker.py``); this asks the same for the forkserver when its own
parent, the coordinator, dies. So a ``kill -9`` of the coordinator ends the workers within
the kernel's own signal delivery, as it did when the coordinator was their parent: a worker
never crawls on alone. (The server would end by itself too, once it saw its pipe to the
coordinator close, but only after its interpreter's shutdown, some hundred ms.)

Importing this module anywhere else would tie that process to its parent: nothing else does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _tie_to_parent() -> None:
    parent = os.getppid()
    name = ctypes.util.find_library("c")
    prctl = getattr(ctypes.CDLL(name), "prctl", None) if name else None
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the coordinator died before the request was made
        os.kill(os.getpid(), signal.SIGKILL)


_tie_to_parent()
