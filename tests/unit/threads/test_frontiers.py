"""The six shared frontiers of the threaded engine: what each promises, and how the
unsynchronised one breaks those promises under an interleaving that a barrier imposes."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from gossamer.frontier import Job
from gossamer.threads.frontiers import BLOCKING, STRATEGIES, Unsynchronised, make_frontier
from gossamer.threads.shared import Ledger, Ticket

SYNCHRONISED = sorted(set(STRATEGIES) - {"unsynchronised"})
JOIN = 10.0  # seconds a test waits for a thread it expects to end at once


def job(n: int) -> Job:
    return Job(url=f"http://h{n % 7}.test/p{n}", host=f"h{n % 7}.test")


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_first_in_first_out_up_to_the_capacity(name: str) -> None:
    frontier = make_frontier(name, capacity=3)
    assert frontier.name == name
    assert [frontier.put(job(n)) for n in range(4)] == [True, True, True, False]
    assert len(frontier) == 3
    assert [frontier.take(0.0) for _ in range(3)] == [job(0), job(1), job(2)]
    assert frontier.take(0.0) is None
    assert len(frontier) == 0
    assert frontier.put(job(9))  # room again once taken
    assert frontier.take(0.0) == job(9)


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_closed_frontier_hands_out_nothing(name: str) -> None:
    frontier = make_frontier(name, capacity=4)
    frontier.put(job(1))
    frontier.close()
    assert frontier.take(0.0) is None


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_close_releases_every_blocked_taker(name: str) -> None:
    frontier = make_frontier(name, capacity=4)
    waiting = threading.Barrier(4)
    got: list[Job | None] = []

    def taker() -> None:
        waiting.wait(JOIN)
        got.append(frontier.take(3600.0))  # only close() can end this wait

    threads = [threading.Thread(target=taker) for _ in range(3)]
    for thread in threads:
        thread.start()
    waiting.wait(JOIN)
    frontier.close()
    for thread in threads:
        thread.join(JOIN)
        assert not thread.is_alive()
    assert got == [None, None, None]


@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_a_blocked_taker_wakes_for_a_put(name: str) -> None:
    frontier = make_frontier(name, capacity=4)
    got: list[Job | None] = []
    taker = threading.Thread(target=lambda: got.append(frontier.take(3600.0)))
    taker.start()
    frontier.put(job(5))
    taker.join(JOIN)
    assert got == [job(5)]


@pytest.mark.parametrize("name", SYNCHRONISED)
def test_many_threads_put_and_take_each_job_exactly_once(name: str) -> None:
    frontier = make_frontier(name, capacity=64)  # small: puts are refused and retried
    per_thread, producers, consumers = 600, 4, 4
    taken: Counter[Job] = Counter()
    taken_lock = threading.Lock()
    produced = threading.Event()

    def produce(first: int) -> None:
        for n in range(first, first + per_thread):
            while not frontier.put(job(n)):
                pass  # full: the engine keeps the job in its own list and offers it again

    def consume() -> None:
        mine: list[Job] = []
        while True:
            got = frontier.take(0.001)
            if got is not None:
                mine.append(got)
            elif produced.is_set() and len(frontier) == 0:
                break
        with taken_lock:
            taken.update(mine)

    makers = [threading.Thread(target=produce, args=(i * per_thread,)) for i in range(producers)]
    takers = [threading.Thread(target=consume) for _ in range(consumers)]
    for thread in makers + takers:
        thread.start()
    for thread in makers:
        thread.join()
    produced.set()
    for thread in takers:
        thread.join()
    assert len(taken) == producers * per_thread
    assert set(taken.values()) == {1}


class _Interleaved(Unsynchronised):
    """The unsynchronised ring, with both takers (or both putters) held between reading an
    index and writing it back: the interleaving a thread switch there produces."""

    def __init__(self, capacity: int, parties: int) -> None:
        super().__init__(capacity)
        self.between = threading.Barrier(parties)
        self.racing = False  # the barrier applies only while the two threads run

    def _load(self, index: int) -> Job | None:
        if self.racing:
            self.between.wait(JOIN)
        return super()._load(index)

    def _store(self, index: int, job: Job) -> None:
        if self.racing:
            self.between.wait(JOIN)
        super()._store(index, job)


def _run_both(target: object, args: list[tuple[object, ...]]) -> None:
    threads = [threading.Thread(target=target, args=a) for a in args]  # type: ignore[arg-type]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN)


def test_two_takers_take_the_same_job_and_the_ledger_counts_it() -> None:
    frontier = _Interleaved(8, parties=2)
    frontier.put(job(1))
    frontier.put(job(2))
    got: list[Job | None] = []
    frontier.racing = True
    _run_both(lambda: got.append(frontier.take(0.0)), [(), ()])
    frontier.racing = False
    assert got == [job(1), job(1)]  # both read head 0 before either moved it
    tickets = [Ticket(job(1))]
    ledger = Ledger()
    assert [ledger.claim(tickets[0]) for j in got] == [True, False]  # one put, taken twice
    assert ledger.taken_twice == 1
    assert len(frontier) == 1  # the head moved once: job 2 is still there


def test_two_putters_write_one_slot_and_a_link_is_lost() -> None:
    frontier = _Interleaved(8, parties=2)
    frontier.racing = True
    _run_both(frontier.put, [(job(1),), (job(2),)])
    frontier.racing = False
    assert len(frontier) == 1  # two puts, one tail step: one job overwritten by the other
    assert frontier.take(0.0) in (job(1), job(2))
    assert frontier.take(0.0) is None


@pytest.mark.parametrize("name", SYNCHRONISED)
def test_the_same_interleaving_cannot_lose_a_link_when_synchronised(name: str) -> None:
    frontier = make_frontier(name, capacity=8)
    start = threading.Barrier(2)

    def put(j: Job) -> None:
        start.wait(JOIN)
        frontier.put(j)

    _run_both(put, [(job(1),), (job(2),)])
    assert len(frontier) == 2
    assert {frontier.take(0.0), frontier.take(0.0)} == {job(1), job(2)}
