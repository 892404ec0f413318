"""Store stage, write-behind: a thread that commits ``crawl.db`` batches off the event loop.

Data flow: pipeline -> ``MetadataDB`` (buffers one batch) -> **BatchWriter** -> ``crawl.db``.
The thread has a connection of its own; SQLite releases the GIL while it works, so the crawl
loop goes on fetching and parsing while a batch commits. Batches are committed one at a time
in the order they were handed over, each in one transaction, so the durability contract holds
as before: the WARC files are written before a batch is even cut.

A reader that must see earlier writes waits for them: :meth:`BatchWriter.submit` returns a
ticket, and :meth:`BatchWriter.wait` returns once the batch with that ticket (and so every one
before it) is committed. The queue is short: when the writer falls behind, ``submit`` blocks,
which is the backpressure the inline writes used to give.

The first fault stops the writer. That batch and every later one stay queued and are handed
back by :meth:`BatchWriter.stop`, so a later inline flush can retry them (as rows kept after a
failed inline flush are); every later ``submit`` or ``wait`` raises the fault, and
``on_fault`` hears of it at once, from the writer thread.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.store.connect import faults
from gossamer.store.writes import Batch, UrlIds, commit

__all__ = ["QUEUE_DEPTH", "BatchWriter"]

log = logging.getLogger(__name__)

QUEUE_DEPTH = 3  # batches handed over and not yet committed, the one being committed included


class BatchWriter:
    """Commits batches on its own thread; owned by ``MetadataDB``, which starts and stops it."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        path: Path,
        *,
        on_fault: Callable[[StoreError], None] | None = None,
        depth: int = QUEUE_DEPTH,
        ids: UrlIds | None = None,
    ) -> None:
        self._conn = conn  # used by the writer thread only, from here on
        self._path = path
        self._on_fault = on_fault
        self._depth = max(1, depth)
        self._ids = UrlIds() if ids is None else ids  # the writer thread's alone while it runs
        self._queue: deque[Batch] = deque()  # a batch leaves it once committed
        self._changed = threading.Condition()
        self._submitted = 0  # tickets handed out; batch n has ticket n
        self._committed = 0
        self._fault: StoreError | None = None
        self._stopping = False
        # A daemon only so that a missed stop cannot hang the interpreter at exit; the owner
        # always stops and joins it.
        self._thread = threading.Thread(target=self._run, name="gossamer-db-writer", daemon=True)
        self._thread.start()

    @property
    def latest(self) -> int:
        """The ticket of the last batch handed over (0: none yet)."""
        return self._submitted

    def submit(self, batch: Batch) -> int:
        """Queue ``batch`` for commit; its ticket. Blocks while the queue is full."""
        with self._changed:
            while len(self._queue) >= self._depth and self._fault is None:
                self._changed.wait()
            if self._fault is not None:
                raise self._fault
            self._queue.append(batch)
            self._submitted += 1
            self._changed.notify_all()
            return self._submitted

    def wait(self, ticket: int) -> None:
        """Return once batch ``ticket`` is committed; raise the fault that stopped it. Any
        thread may wait."""
        with self._changed:
            while self._committed < ticket and self._fault is None:
                self._changed.wait()
            if self._committed < ticket:
                assert self._fault is not None
                raise self._fault

    def stop(self) -> list[Batch]:
        """Commit what is queued (unless a fault stopped the writer), end the thread and join
        it; the batches left unwritten, oldest first."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()
        self._thread.join()
        return list(self._queue)

    def _run(self) -> None:
        try:
            while (batch := self._next()) is not None:
                try:
                    with faults("write", self._path):
                        commit(self._conn, batch, self._ids)
                except Exception as exc:  # every fault, not only SQLite's, must reach the owner
                    self._failed(exc)
                    return
                with self._changed:
                    self._queue.popleft()
                    self._committed += 1
                    self._changed.notify_all()
        finally:
            self._conn.close()

    def _next(self) -> Batch | None:
        with self._changed:
            while not self._queue and not self._stopping:
                self._changed.wait()
            return self._queue[0] if self._queue else None

    def _failed(self, exc: Exception) -> None:
        fault = exc if isinstance(exc, StoreError) else StoreError(f"cannot write {self._path}")
        if fault is not exc:
            fault.__cause__ = exc
            log.error("crawl database writer failed", exc_info=exc)
        with self._changed:
            self._fault = fault
            self._changed.notify_all()
        if self._on_fault is not None:
            self._on_fault(fault)
