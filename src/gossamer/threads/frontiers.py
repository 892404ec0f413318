"""The shared to-visit list of the threaded engine, under six kinds of synchronisation.

Data flow: admission (seeds, links) -> **a shared frontier** -> crawler threads, which take a
job, fetch it and put the jobs its links lead to back. This is seed 004's object of study:
only how the threads share this list differs between strategies; politeness, robots.txt,
deduplication and recording are done the same way for all (``threads/politeness.py`` and
``threads/engine.py``).

Every strategy has the same face: ``put`` never blocks (a full list answers False and the
caller keeps the job in a list of its own, so threads that both produce and consume can never
all wait on each other), ``take(timeout)`` returns a job or None, ``close`` releases every
waiting taker, and ``len`` is the number of jobs held (exact for the synchronised kinds).

- ``unsynchronised``: seed 004's optimistic "lock-free" frontier, a ring of slots with a
  head and a tail index read and written without any lock. Two takers reading the same head
  take the same job (a collision the engine counts when it claims the URL); two putters
  reading the same tail write the same slot and one link is lost (counted at the end, puts
  minus takes minus what is left).
- ``lockfree``: ``collections.deque``, whose ``append`` and ``popleft`` are single C calls.
  Under the GIL (CPython 3.11) a thread switch cannot happen inside them, and in the
  free-threaded build each deque method holds the deque's own per-object lock, so neither can
  lose or duplicate a job; no thread ever waits on a lock another thread holds across Python
  code. What is not atomic is a sequence of calls, so the length check against the capacity
  may let a few jobs past it: a soft bound.
- ``semaphore``: seed 004's three semaphores over a ring: ``empty`` slots, ``full`` slots and
  a binary ``mutex``.
- ``monitor``: one lock with a ``not_empty`` condition (``put`` never waits, so no
  ``not_full`` waiters can exist).
- ``coarse``: a singly linked list with one lock for every operation.
- ``fine``: the same linked list with a lock per end and a dummy node (the two-lock queue),
  so a put at the tail and a take at the head proceed at once; only a take of the last node
  and a put touch the same node, and the dummy keeps them on different ones.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["STRATEGIES", "SharedFrontier", "make_frontier"]

T = TypeVar("T")

DEFAULT_CAPACITY = 100_000


class SharedFrontier(Protocol[T]):
    """What the crawler threads see of the shared list, whatever its synchronisation."""

    name: str
    capacity: int

    def put(self, job: T) -> bool: ...

    def take(self, timeout: float) -> T | None: ...

    def close(self) -> None: ...

    def __len__(self) -> int: ...


class Unsynchronised(Generic[T]):
    """A ring of slots with unguarded indices: fast, and wrong under contention."""

    name = "unsynchronised"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._slots: list[T | None] = [None] * capacity
        self._head = 0
        self._tail = 0
        self._closed = False

    def put(self, job: T) -> bool:
        tail = self._tail
        if tail - self._head >= self.capacity:
            return False
        self._store(tail, job)
        self._tail = tail + 1
        return True

    def take(self, timeout: float) -> T | None:
        head = self._head
        if head >= self._tail or self._closed:
            return None
        job = self._load(head)
        self._head = head + 1
        return job

    # The index arithmetic sits in methods of its own, and under CPython 3.11 a thread can
    # only be switched out at a call or a backward jump: these calls are where another thread
    # can come in between reading an index and writing it back.
    def _store(self, index: int, job: T) -> None:
        self._slots[index % self.capacity] = job

    def _load(self, index: int) -> T | None:
        return self._slots[index % self.capacity]

    def close(self) -> None:
        self._closed = True

    def __len__(self) -> int:
        return max(0, self._tail - self._head)


class LockFree(Generic[T]):
    """A deque: each operation is atomic, and no thread holds a lock another waits for."""

    name = "lockfree"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._jobs: deque[T] = deque()
        self._closed = False

    def put(self, job: T) -> bool:
        if len(self._jobs) >= self.capacity:
            return False
        self._jobs.append(job)
        return True

    def take(self, timeout: float) -> T | None:
        if self._closed:
            return None
        try:
            return self._jobs.popleft()
        except IndexError:
            return None

    def close(self) -> None:
        self._closed = True

    def __len__(self) -> int:
        return len(self._jobs)


class SemaphoreRing(Generic[T]):
    """Seed 004's semaphore frontier: counting ``empty`` and ``full``, binary ``mutex``."""

    name = "semaphore"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._slots: list[T | None] = [None] * capacity
        self._head = 0
        self._tail = 0
        self._empty = threading.Semaphore(capacity)
        self._full = threading.Semaphore(0)
        self._mutex = threading.Semaphore(1)
        self._closed = False

    def put(self, job: T) -> bool:
        if not self._empty.acquire(blocking=False):
            return False  # full: the caller keeps the job rather than wait for a taker
        with self._mutex:
            self._slots[self._tail % self.capacity] = job
            self._tail += 1
        self._full.release()
        return True

    def take(self, timeout: float) -> T | None:
        if not self._full.acquire(timeout=timeout):
            return None
        with self._mutex:
            if self._closed:
                self._full.release()  # pass the wake-up on to the next waiter
                return None
            index = self._head % self.capacity
            job, self._slots[index] = self._slots[index], None
            self._head += 1
        self._empty.release()
        return job

    def close(self) -> None:
        with self._mutex:
            self._closed = True
        self._full.release()  # one waiter wakes, sees the flag and wakes the next

    def __len__(self) -> int:
        with self._mutex:
            return self._tail - self._head


class Monitor(Generic[T]):
    """A monitor: the list is private, every operation holds its lock."""

    name = "monitor"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._jobs: deque[T] = deque()
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._closed = False

    def put(self, job: T) -> bool:
        with self._lock:
            if len(self._jobs) >= self.capacity:
                return False
            self._jobs.append(job)
            self._not_empty.notify()
            return True

    def take(self, timeout: float) -> T | None:
        with self._lock:
            if not self._not_empty.wait_for(lambda: self._jobs or self._closed, timeout):
                return None
            if self._closed:
                return None
            return self._jobs.popleft()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._not_empty.notify_all()

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)


class _Node(Generic[T]):
    __slots__ = ("job", "next")

    def __init__(self, job: T | None) -> None:
        self.job = job
        self.next: _Node[T] | None = None


class CoarseList(Generic[T]):
    """A linked list (first in, first out) with one lock over the whole of it."""

    name = "coarse"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._head: _Node[T] | None = None
        self._tail: _Node[T] | None = None
        self._size = 0
        self._lock = threading.Lock()
        self._closed = False

    def put(self, job: T) -> bool:
        node: _Node[T] = _Node(job)
        with self._lock:
            if self._size >= self.capacity:
                return False
            if self._tail is None:
                self._head = node
            else:
                self._tail.next = node
            self._tail = node
            self._size += 1
            return True

    def take(self, timeout: float) -> T | None:
        with self._lock:
            node = self._head
            if node is None or self._closed:
                return None
            self._head = node.next
            if self._head is None:
                self._tail = None
            self._size -= 1
            return node.job

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def __len__(self) -> int:
        with self._lock:
            return self._size


class FineList(Generic[T]):
    """The linked list with a head lock and a tail lock around a dummy node."""

    name = "fine"

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        dummy: _Node[T] = _Node(None)
        self._head = dummy  # always the dummy: the first job is head.next
        self._tail = dummy
        self._head_lock = threading.Lock()
        self._tail_lock = threading.Lock()
        # Puts and takes counted apart, each under its own end's lock: the size is their
        # difference, and neither end needs the other's lock to keep its count.
        self._puts = 0
        self._takes = 0
        self._closed = False

    def put(self, job: T) -> bool:
        node: _Node[T] = _Node(job)
        with self._tail_lock:
            if self._puts - self._takes >= self.capacity:  # a stale _takes only errs low
                return False
            self._tail.next = node
            self._tail = node
            self._puts += 1
            return True

    def take(self, timeout: float) -> T | None:
        with self._head_lock:
            first = self._head.next
            if first is None or self._closed:
                return None
            job = first.job
            first.job = None  # ``first`` becomes the new dummy
            self._head = first
            self._takes += 1
            return job

    def close(self) -> None:
        with self._head_lock:
            self._closed = True

    def __len__(self) -> int:
        with self._head_lock, self._tail_lock:  # always head before tail: no lock cycle
            return self._puts - self._takes


STRATEGIES: dict[str, Callable[[int], SharedFrontier[Any]]] = {
    "unsynchronised": Unsynchronised,
    "lockfree": LockFree,
    "semaphore": SemaphoreRing,
    "monitor": Monitor,
    "coarse": CoarseList,
    "fine": FineList,
}

# The kinds whose take waits on a semaphore or a condition; the others return at once and
# their caller backs off.
BLOCKING = frozenset({"semaphore", "monitor"})


def make_frontier(name: str, capacity: int = DEFAULT_CAPACITY) -> SharedFrontier[Any]:
    return STRATEGIES[name](capacity)
