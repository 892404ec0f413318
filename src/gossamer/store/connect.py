"""Store stage, SQLite access: how the crawl folder's databases are opened, and their faults.

Data flow: every module of ``store`` that touches ``crawl.db`` or ``index/docs.db`` opens it
here, so the settings (WAL, a long busy timeout for the workers of one crawl, the page cache)
and the wording of faults are the same everywhere. A fault becomes one :class:`StoreError`
line naming the file and the reason (full disk, corrupt file, ...); programming errors
(``ProgrammingError``, ``InterfaceError``) pass through unchanged.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gossamer.errors import StoreError

__all__ = [
    "BUSY_TIMEOUT",
    "connect_readonly",
    "connect_writer",
    "faults",
    "quick_check",
    "readonly_uri",
    "transaction",
    "writable",
]

# Worker processes of one crawl share crawl.db: a writer waits for the lock, it does not fail.
BUSY_TIMEOUT = 120.0


def readonly_uri(path: Path) -> str:
    """A SQLite URI that opens ``path`` for reading, even in a folder this process cannot
    write: there SQLite could not create the ``-shm`` file a WAL database needs, so the
    file is opened as immutable (nothing can change it while we read, as no one may write)."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    return uri if writable(path.parent) else f"{uri}&immutable=1"


def writable(folder: Path) -> bool:
    """Whether this process may create files in ``folder`` (false on a read-only mount)."""
    return os.access(folder, os.W_OK | os.X_OK)


def connect_writer(path: Path, *, cache_kib: int, threads: bool = False) -> sqlite3.Connection:
    """A connection that writes ``path`` (autocommit: transactions are explicit).

    ``threads`` lets a connection made here be used by the one thread it is handed to.
    """
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=not threads
    )
    try:
        # NORMAL: a commit in WAL mode needs no fsync; a crash loses at most the last ones.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA cache_size = -{cache_kib}")
    except BaseException:
        conn.close()
        raise
    return conn


def connect_readonly(path: Path, *, threads: bool = False) -> sqlite3.Connection:
    """A connection that reads ``path`` and never writes it (see :func:`readonly_uri`)."""
    return sqlite3.connect(readonly_uri(path), uri=True, check_same_thread=not threads)


def quick_check(path: Path) -> str:
    """What SQLite's ``quick_check`` finds wrong with the file, read-only ("" when nothing)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            (verdict,) = conn.execute("PRAGMA quick_check").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable: {exc}"
    return "" if verdict == "ok" else f"corrupt: {verdict}"


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception (a failed COMMIT too)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def faults(action: str, path: Path, what: str = "crawl database") -> Iterator[None]:
    """Turn SQLite faults into one clear StoreError line; let programming errors through."""
    try:
        yield
    except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
        raise
    except sqlite3.Error as exc:
        raise StoreError(f"cannot {action} {what} {path}: {_reason(exc)}") from exc


def _reason(exc: sqlite3.Error) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return "the disk is full"
    if name.startswith("SQLITE_IOERR") or "disk I/O error" in text:
        return "disk I/O error"
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "not a database" in text:
        return "the file is corrupt or is not a SQLite database"
    if name.startswith("SQLITE_CANTOPEN"):
        return "the file cannot be opened or created"
    if name.startswith("SQLITE_READONLY"):
        return "the file is read-only"
    return text
