"""One writer per folder: an exclusive ``flock`` on a file that names the process holding it.

Used by the crawl (``DIR/.gossamer.lock``, see ``gossamer.engine.resume``) and the index
(``DIR/index/.gossamer-index.lock``, see ``gossamer.index.access``). The kernel releases the
lock when its process ends, even by ``kill -9``, so a stale lock never needs cleaning up;
each user turns a lock held elsewhere into an error of its own layer.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

__all__ = ["PidLock", "is_held"]


class PidLock:
    """An exclusive, non-blocking lock on ``path``, which holds the owner's pid."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def acquire(self) -> str | None:
        """Take the lock: None if taken, else the pid that holds it ("unknown" if unsaid).

        ``OSError`` when the lock file cannot be created.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            return holder
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return None

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def is_held(path: Path) -> bool:
    """Whether some process holds the lock on ``path`` right now (False if there is no file)."""
    try:
        handle = path.open("rb")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False
