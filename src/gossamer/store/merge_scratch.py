"""Store stage, a merge's scratch folder: where ``gossamer merge`` builds OUT before it is
published, and the removal of the ones that merges stopped on the way left behind.

Data flow: merge -> **scratch** (``OUT.partial-PID``, locked while its merge runs) -> rename
to OUT once whole. A failure removes the folder; ``kill -9`` cannot, so each merge first
removes the scratch folders of merges into the same OUT that are no longer running: no
process holds the lock inside, and the PID in the name is not a running process (or is this
one's, left by an earlier holder of the number). The lock speaks for a merge whose PID this
process cannot see (another PID namespace); the PID covers the moments before a merge takes
its lock and after it lets go, just before the rename.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.lockfile import PidLock, is_held

__all__ = ["remove_stale_scratch", "scratch_folder"]

log = logging.getLogger(__name__)

_LOCK = ".gossamer-merge.lock"  # inside OUT.partial-PID while its merge runs


@contextmanager
def scratch_folder(out: Path) -> Iterator[Path]:
    """A new, locked ``OUT.partial-PID`` for the block to build OUT in; renamed to ``out``
    when the block ends normally, removed when it raises."""
    for stale in remove_stale_scratch(out):
        log.warning("removed %s, left by a merge that was stopped before it ended", stale)
    partial = out.parent / f"{out.name}.partial-{os.getpid()}"
    lock = PidLock(partial / _LOCK)
    try:
        partial.mkdir(parents=True)
        lock.acquire()  # a new folder: no one else can hold it
    except OSError as exc:
        raise StoreError(f"cannot create {partial}: {exc.strerror}") from exc
    try:
        yield partial
        lock.release()
        (partial / _LOCK).unlink(missing_ok=True)  # OUT is a crawl folder, not a merge's
        _publish(partial, out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    finally:
        lock.release()


def _publish(partial: Path, out: Path) -> None:
    try:
        # rename(2) replaces an empty folder, and fails on one that is not empty.
        partial.replace(out)
    except OSError as exc:
        raise StoreError(f"cannot rename {partial} to {out}: {exc.strerror}") from exc


def remove_stale_scratch(out: Path) -> list[Path]:
    """Delete the ``OUT.partial-PID`` folders of merges into ``out`` that are no longer
    running (see the module docstring); the folders deleted."""
    name = re.compile(re.escape(out.name) + r"\.partial-([0-9]{1,10})")
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return []  # no parent yet: no scratch folder either
    removed = []
    for entry in entries:
        found = name.fullmatch(entry.name)
        if found is None or entry.is_symlink() or not entry.is_dir():
            continue
        pid = int(found.group(1))
        if is_held(entry / _LOCK) or (pid != os.getpid() and _running(pid)):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _running(pid: int) -> bool:
    """Whether a process of this number may exist (another user's included)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return True  # a number no process of ours had: not a folder of ours to delete
    return True
