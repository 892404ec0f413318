"""New files written whole and then renamed into place, so that a reader (``search``,
``serve``) sees the old file or the new one, never part of one, even after ``kill -9`` or a
power cut.

Files are created as an ordinary ``open`` creates a file (``0o666`` less the umask), so what
replaces a report or an index is as readable as what it replaces; ``tempfile.mkstemp`` would
make it private to its owner. A writer killed before its rename leaves only its temporary
file (``.NAME.XXXXXXXXXXXX.tmp``), which :func:`remove_leftovers` deletes for a writer that
holds its folder's lock.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Replacement", "create_beside", "remove_leftovers", "replacing"]

_LEFTOVER = re.compile(r"^\..+\.[0-9a-f]{12}\.tmp$")


def create_beside(path: Path, kind: str = "") -> tuple[int, Path]:
    """A new, empty file in ``path``'s folder, open for writing (its descriptor) and its
    path: named after ``path`` (and ``kind``), never a file that exists already."""
    while True:
        temp = path.with_name(f".{path.name}{kind}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temp
        except FileExistsError:
            continue


class Replacement:
    """New versions of files written beside them, renamed into place together only once
    every one is written and synced (see :func:`replacing`)."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, Path]] = []  # (temporary, final), in rename order

    def beside(self, path: Path) -> Path:
        """The path of a new, empty file to write ``path``'s new content to."""
        handle, temp = create_beside(path)
        os.close(handle)
        self._pending.append((temp, path))
        return temp

    def commit(self) -> None:
        """Sync every new file, then rename each over its final name, in the order they
        were asked for: the one readers look for first is best asked for last."""
        for temp, _ in self._pending:
            _sync(temp)
        folders = set()
        for temp, path in self._pending:
            temp.replace(path)
            folders.add(path.parent)
        for folder in folders:
            # The renames themselves survive a power cut only once the folder is synced.
            with contextlib.suppress(OSError):
                _sync(folder)
        self._pending.clear()

    def discard(self) -> None:
        for temp, _ in self._pending:
            temp.unlink(missing_ok=True)
        self._pending.clear()


@contextlib.contextmanager
def replacing() -> Iterator[Replacement]:
    """Write new versions of some files whole or not at all: the block writes to the paths
    ``beside`` gives; when it ends normally they replace their files, when it raises they
    are deleted and every file is left as it was. ``OSError`` when a sync or rename fails."""
    replacement = Replacement()
    try:
        yield replacement
        replacement.commit()
    finally:
        replacement.discard()  # nothing left after a commit; the temporaries after a fault


def remove_leftovers(folder: Path) -> int:
    """Delete the temporary files writers killed before their rename left in ``folder``;
    how many. Only for a caller holding the folder's lock: it would delete the temporary
    file of a writer still at work."""
    removed = 0
    with contextlib.suppress(FileNotFoundError):
        for entry in folder.iterdir():
            if _LEFTOVER.match(entry.name) and entry.is_file():
                entry.unlink(missing_ok=True)
                removed += 1
    return removed


def _sync(path: Path) -> None:
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
