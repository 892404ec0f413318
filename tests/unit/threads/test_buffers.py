"""Seed 000's bounded buffer: crawlers wait on a full buffer, the builder waits for a full one,
``close`` releases every waiter, and no item is ever lost.

Threads are real; "blocked" is observed, never guessed: ``await_waiting`` returns once a
thread waits inside the semaphore, under the semaphore's own lock.
"""

from __future__ import annotations

import threading

import pytest

from gossamer.threads.buffers import BoundedBuffer, BufferCounts, CountingSemaphore

LIMIT = 30.0  # seconds any wait here may take; only a failing test waits this long


def started(target: object, *args: object) -> threading.Thread:
    thread = threading.Thread(target=target, args=args)  # type: ignore[arg-type]
    thread.start()
    return thread


def joined(thread: threading.Thread) -> None:
    thread.join(LIMIT)
    assert not thread.is_alive()


def test_acquire_n_takes_all_its_permits_at_once() -> None:
    semaphore = CountingSemaphore(1)
    got: list[bool] = []
    waiter = started(lambda: got.append(semaphore.acquire(3)))
    assert semaphore.await_waiting(1, LIMIT)
    semaphore.release()  # two permits now: still not enough, and none taken meanwhile
    assert semaphore.permits == 2
    assert semaphore.waiting == 1
    semaphore.release()
    joined(waiter)
    assert got == [True]
    assert semaphore.permits == 0


def test_a_closed_semaphore_lets_every_waiter_go_empty_handed() -> None:
    semaphore = CountingSemaphore(0)
    got: list[bool] = []
    waiters = [started(lambda: got.append(semaphore.acquire(2))) for _ in range(3)]
    assert semaphore.await_waiting(3, LIMIT)
    semaphore.close()
    for waiter in waiters:
        joined(waiter)
    assert got == [False, False, False]
    assert not semaphore.acquire()
    with pytest.raises(ValueError, match="fewer than 0"):
        CountingSemaphore(-1)


def test_a_crawler_waits_while_the_buffer_is_full() -> None:
    buffer: BoundedBuffer[int] = BoundedBuffer(2)
    buffer.put(1)
    buffer.put(2)
    third = started(buffer.put, 3)
    assert buffer.crawler_permits.await_waiting(1, LIMIT)  # blocked: no permit left
    assert buffer.counts() == BufferCounts(added=2, removed=0, overflow=0)
    drained: list[int] = []
    assert buffer.drain(drained.append)  # the builder empties the buffer ...
    joined(third)  # ... and gives the permits back: the third item goes in
    assert drained == [1, 2]
    assert buffer.counts() == BufferCounts(added=3, removed=2, overflow=0)


def test_the_builder_waits_until_the_buffer_is_full() -> None:
    buffer: BoundedBuffer[str] = BoundedBuffer(3)
    drained: list[str] = []
    results: list[bool] = []
    builder = started(lambda: results.append(buffer.drain(drained.append)))
    buffer.put("a")
    buffer.put("b")
    assert buffer.builder_permits.await_waiting(1, LIMIT)
    assert drained == []  # two of three: the builder still waits
    buffer.put("c")
    joined(builder)
    assert (results, drained) == ([True], ["a", "b", "c"])
    assert buffer.crawler_permits.permits == 3  # all N handed back


def test_two_crawlers_and_a_builder_pass_every_item_once() -> None:
    buffer: BoundedBuffer[tuple[int, int]] = BoundedBuffer(4)
    drained: list[tuple[int, int]] = []

    def builder() -> None:
        while buffer.drain(drained.append):
            pass

    consumer = started(builder)
    crawlers = [started(lambda c=c: [buffer.put((c, n)) for n in range(101)]) for c in range(2)]
    for crawler in crawlers:
        joined(crawler)
    buffer.close()
    joined(consumer)
    leftover: list[tuple[int, int]] = []
    buffer.flush(leftover.append)
    assert len(leftover) < 4  # fewer than a full buffer waits for the cleaner
    assert sorted(drained + leftover) == [(c, n) for c in range(2) for n in range(101)]
    for c in range(2):  # each crawler's items keep their order
        assert [n for cc, n in drained + leftover if cc == c] == list(range(101))
    assert buffer.counts() == BufferCounts(added=202, removed=202, overflow=0)


def test_close_releases_a_waiting_builder_without_taking_anything() -> None:
    buffer: BoundedBuffer[int] = BoundedBuffer(2)
    buffer.put(7)
    results: list[bool] = []
    builder = started(lambda: results.append(buffer.drain(lambda item: None)))
    assert buffer.builder_permits.await_waiting(1, LIMIT)
    buffer.close()
    joined(builder)
    assert results == [False]
    left: list[int] = []
    assert buffer.flush(left.append) == 1
    assert left == [7]


def test_close_releases_crawlers_on_a_full_buffer_and_keeps_their_items() -> None:
    buffer: BoundedBuffer[int] = BoundedBuffer(1)
    buffer.put(1)
    crawlers = [started(buffer.put, n) for n in (2, 3)]
    assert buffer.crawler_permits.await_waiting(2, LIMIT)
    buffer.close()
    for crawler in crawlers:
        joined(crawler)
    buffer.put(4)  # after closing a put never waits
    assert buffer.counts() == BufferCounts(added=4, removed=0, overflow=3)
    left: list[int] = []
    buffer.flush(left.append)
    assert sorted(left) == [1, 2, 3, 4]
    assert buffer.counts().held == 0


def test_an_item_the_builder_fails_to_file_stays_in_the_buffer() -> None:
    buffer: BoundedBuffer[int] = BoundedBuffer(2)
    buffer.put(1)
    buffer.put(2)

    def refuse_two(item: int) -> None:
        if item == 2:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        buffer.drain(refuse_two)
    assert buffer.crawler_permits.permits == 2  # the permits went back all the same
    assert buffer.counts() == BufferCounts(added=2, removed=1, overflow=0)
    left: list[int] = []
    buffer.flush(left.append)
    assert left == [2]


def test_a_buffer_holds_at_least_one_item() -> None:
    with pytest.raises(ValueError, match="at least one"):
        BoundedBuffer(0)
