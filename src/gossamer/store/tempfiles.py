"""New files written whole and then renamed into place: created as an ordinary ``open``
creates a file (``0o666`` less the umask), so what replaces a report or an index is as
readable as what it replaces; ``tempfile.mkstemp`` would make it private to its owner."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["create_beside"]


def create_beside(path: Path, kind: str = "") -> tuple[int, Path]:
    """A new, empty file in ``path``'s folder, open for writing (its descriptor) and its
    path: named after ``path`` (and ``kind``), never a file that exists already."""
    while True:
        temp = path.with_name(f".{path.name}{kind}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temp
        except FileExistsError:
            continue
