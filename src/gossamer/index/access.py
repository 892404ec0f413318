"""Index stage, access: one writer at a time, and readers that need no write permission.

Data flow: ``indexer`` takes :class:`IndexLock` for a whole run, so a second
``gossamer index`` on the same folder is refused with one line instead of failing deep in
tantivy. The search side opens the index read-only: on a folder it may not write (a
read-only mount, another user's crawl) :func:`readonly_index_path` gives tantivy a scratch
folder of links to the index files, because tantivy creates lock files even to read (SQLite
files are opened read-only by ``gossamer.store.connect.readonly_uri``).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from gossamer.index.errors import IndexingError
from gossamer.lockfile import PidLock, is_held
from gossamer.store.connect import writable

__all__ = [
    "LOCK_NAME",
    "IndexLock",
    "is_writing",
    "readonly_index_path",
    "writable",
]

LOCK_NAME = ".gossamer-index.lock"  # in DIR/index, beside the document store


class IndexLock:
    """An exclusive lock on ``DIR/index``, released by the kernel even after ``kill -9``."""

    def __init__(self, crawl_dir: Path, index_dir: Path) -> None:
        self._crawl_dir = crawl_dir
        self._lock = PidLock(index_dir / LOCK_NAME)

    def __enter__(self) -> IndexLock:
        try:
            holder = self._lock.acquire()
        except OSError as exc:
            raise IndexingError(
                f"cannot write the index of {self._crawl_dir}: {exc.strerror or exc}"
            ) from exc
        if holder is not None:
            raise IndexingError(
                f"index of {self._crawl_dir} is being written by another process"
                " (another 'gossamer index' run); wait for it to finish"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def is_writing(index_dir: Path) -> bool:
    """Whether a ``gossamer index`` run holds the lock of ``index_dir`` right now."""
    return is_held(index_dir / LOCK_NAME)


@contextlib.contextmanager
def readonly_index_path(path: Path) -> Iterator[Path]:
    """The folder tantivy should open to read the index in ``path``.

    Tantivy takes a lock file even to read, so in a folder this process cannot write, the
    index is opened through a scratch folder of symbolic links to its files (removed on
    exit; tantivy has mapped the files by then). Elsewhere, ``path`` itself.
    """
    if writable(path):
        yield path
        return
    try:
        scratch = Path(tempfile.mkdtemp(prefix="gossamer-index-"))
    except OSError as exc:
        raise IndexingError(
            f"cannot read the search index in {path}: the folder is read-only and no scratch"
            f" folder could be made ({exc.strerror or exc})"
        ) from exc
    try:
        for entry in path.iterdir():
            if not entry.name.endswith(".lock"):
                (scratch / entry.name).symlink_to(entry.resolve())
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
