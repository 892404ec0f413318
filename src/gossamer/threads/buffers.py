"""Seed 000's bounded buffer between crawler threads and one index-builder thread.

Data flow: crawler threads -> **buffers** -> ``builders.IndexBuilder`` -> ``urltree``.

The synchronisation is the seed's, piece by piece. A buffer of size N has a *crawler*
semaphore with N permits, a *builder* semaphore with none, and a mutex over the list:

=================================  =========================================
crawler (``put``)                  builder (``drain``)
=================================  =========================================
crawler semaphore: acquire 1       builder semaphore: acquire N
mutex: append the item             take the items out one by one (each under
builder semaphore: release 1       the mutex) and hand each to the tree
                                   crawler semaphore: release N
=================================  =========================================

So the two crawlers sharing a buffer pass it N items, one permit each, and then wait while
the builder files all N; the builder gives the N permits back once the buffer is empty.
Python's ``threading.Semaphore`` has ``release(n)`` but no ``acquire(n)``, and taking N
permits one at a time would let a builder hold some permits while it waits for the rest.
:class:`CountingSemaphore` is therefore written on a ``Condition``: ``acquire(n)`` waits until
n permits are there and takes them at once, as Java's ``Semaphore.acquire(n)`` does.

Shutdown: ``close()`` closes both semaphores, which wakes every thread waiting on them. A
builder waiting for its N permits returns from ``drain`` with False and takes nothing, and a
builder in the middle of a batch finishes it first: the seed's "interrupted after their
current iteration". A crawler waiting on a full buffer appends its item anyway, past the
bound, instead of waiting for a builder that will not come; the cleaner files what remains
(``flush``). No item is ever dropped, and no thread can hang on a closed buffer.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["BoundedBuffer", "BufferCounts", "CountingSemaphore"]

T = TypeVar("T")


class CountingSemaphore:
    """A semaphore whose ``acquire(n)`` takes n permits at once, and which can be closed.

    Once closed, every ``acquire`` (waiting or new) returns False without taking anything.
    The number of threads waiting is observable, so a test can tell that a thread is really
    blocked here rather than guess it with a sleep.
    """

    def __init__(self, permits: int) -> None:
        if permits < 0:
            raise ValueError("a semaphore cannot start with fewer than 0 permits")
        self._cond = threading.Condition(threading.Lock())
        self._permits = permits
        self._waiting = 0
        self._closed = False

    @property
    def permits(self) -> int:
        with self._cond:
            return self._permits

    @property
    def waiting(self) -> int:
        with self._cond:
            return self._waiting

    def acquire(self, n: int = 1) -> bool:
        """Wait until ``n`` permits are free and take them; False if closed meanwhile."""
        with self._cond:
            if not self._closed and self._permits < n:
                self._waiting += 1
                self._cond.notify_all()  # for await_waiting: one more thread waits
                try:
                    self._cond.wait_for(lambda: self._closed or self._permits >= n)
                finally:
                    self._waiting -= 1
            if self._closed:
                return False
            self._permits -= n
            return True

    def release(self, n: int = 1) -> None:
        with self._cond:
            self._permits += n
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def await_waiting(self, count: int, timeout: float | None = None) -> bool:
        """Wait until at least ``count`` threads wait in ``acquire``; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._waiting >= count, timeout)


@dataclass(frozen=True, slots=True)
class BufferCounts:
    """Items put into a buffer, taken out of it, and put past the bound after closing."""

    added: int
    removed: int
    overflow: int

    @property
    def held(self) -> int:
        return self.added - self.removed


class BoundedBuffer(Generic[T]):
    """Seed 000's buffer of ``size`` items: crawlers ``put``, one builder ``drain``s."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a buffer holds at least one item")
        self.size = size
        self.crawler_permits = CountingSemaphore(size)
        self.builder_permits = CountingSemaphore(0)
        self._mutex = threading.Lock()  # over _items and the counts
        self._items: deque[T] = deque()
        self._added = 0
        self._removed = 0
        self._overflow = 0

    def counts(self) -> BufferCounts:
        with self._mutex:
            return BufferCounts(self._added, self._removed, self._overflow)

    def put(self, item: T) -> None:
        """Crawler side: wait for room, then add ``item``. After ``close`` it never waits."""
        permitted = self.crawler_permits.acquire()
        with self._mutex:
            self._items.append(item)
            self._added += 1
            if not permitted:
                self._overflow += 1
        if permitted:
            self.builder_permits.release()

    def drain(self, consume: Callable[[T], None]) -> bool:
        """Builder side, one iteration: wait until the buffer is full, hand every item to
        ``consume``, then give the crawlers their N permits back.

        False once the buffer is closed (nothing is taken then). If ``consume`` raises, the
        item goes back to the front of the buffer before the exception goes on.
        """
        if not self.builder_permits.acquire(self.size):
            return False
        try:
            self._hand_over(consume)
        finally:
            self.crawler_permits.release(self.size)
        return True

    def flush(self, consume: Callable[[T], None]) -> int:
        """Hand every item left to ``consume``, whatever the permits: the cleaner's job, once
        the crawlers and the builder have stopped. How many items it handed over."""
        return self._hand_over(consume)

    def close(self) -> None:
        """Release every thread waiting on this buffer, now and later (see the module doc)."""
        self.crawler_permits.close()
        self.builder_permits.close()

    def _hand_over(self, consume: Callable[[T], None]) -> int:
        handed = 0
        while True:
            with self._mutex:
                if not self._items:
                    return handed
                item = self._items.popleft()
                self._removed += 1
            try:
                consume(item)
            except BaseException:
                with self._mutex:
                    self._items.appendleft(item)
                    self._removed -= 1
                raise
            handed += 1
