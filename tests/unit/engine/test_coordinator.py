"""The coordinator's end-of-crawl rule: every worker idle with every forwarded batch processed."""

from __future__ import annotations

import multiprocessing
import multiprocessing.queues
import queue
import signal
from multiprocessing.connection import Connection
from typing import Any

import pytest

from gossamer.engine.budget import PageBudget
from gossamer.engine.coordinator import coordinate
from gossamer.engine.workers import FAILED, _Coordinator


def drain(inbox: queue.Queue[Any]) -> list[Any]:
    items = []
    while not inbox.empty():
        items.append(inbox.get_nowait())
    return items


def test_stops_only_when_forwarded_batches_are_processed() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue(), queue.Queue()]
    coordinator = _Coordinator(inboxes)  # type: ignore[arg-type]
    coordinator.handle(("urls", 1, [("http://b.test/", 1, "http://a.test/")]))
    assert drain(inboxes[1]) == [("urls", [("http://b.test/", 1, "http://a.test/")])]
    coordinator.handle(("idle", 0, 0, 0, 0))
    # Worker 1 reports idle before it has seen the batch: not the end yet.
    coordinator.handle(("idle", 1, 0, 0, 0))
    assert not coordinator.stopping
    coordinator.handle(("idle", 1, 1, 0, 0))
    assert coordinator.stopping == "exhausted"
    assert drain(inboxes[0]) == [("stop", "exhausted")]
    assert drain(inboxes[1]) == [("stop", "exhausted")]


def test_a_store_error_stops_everyone_and_is_reported() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue(), queue.Queue()]
    coordinator = _Coordinator(inboxes)  # type: ignore[arg-type]
    coordinator.handle(("done", 0, {}, "cannot write WARC file: No space left on device"))
    assert coordinator.stopping == "store error"
    assert drain(inboxes[1]) == [("stop", "store error")]
    assert drain(inboxes[0]) == []
    assert coordinator.errors == ["cannot write WARC file: No space left on device"]


def test_batches_for_a_finished_worker_are_dropped() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue(), queue.Queue()]
    coordinator = _Coordinator(inboxes)  # type: ignore[arg-type]
    coordinator.handle(("done", 1, {"reason": "target"}, ""))
    coordinator.handle(("urls", 1, [("http://b.test/x", 2, None)]))
    assert drain(inboxes[1]) == []
    coordinator.handle(("idle", 0, 0, 0, 0))
    assert coordinator.reason() == "target"


class Inbox(queue.Queue[Any]):
    """A worker's inbox; the real one is a multiprocessing queue with a feeder thread."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = False

    def cancel_join_thread(self) -> None:
        self.cancelled = True


def test_a_worker_that_dies_stops_everyone_with_one_error() -> None:
    inboxes = [Inbox(), Inbox(), Inbox()]
    coordinator = _Coordinator(inboxes)  # type: ignore[arg-type]
    coordinator.handle(("done", 2, {"reason": "target"}, ""))
    coordinator.lost(1, "was killed by SIGKILL")
    assert coordinator.failed and coordinator.errors == ["worker 1 was killed by SIGKILL"]
    assert coordinator.stopping == "worker failed"
    assert drain(inboxes[0]) == [("stop", "worker failed")]
    assert drain(inboxes[1]) == [] and inboxes[1].cancelled  # nobody will read it
    assert set(coordinator.done) == {1, 2}
    # Its exit, noticed again after a "done" it managed to send, changes nothing.
    coordinator.lost(2, "ended without finishing (exit status 0)")
    assert coordinator.errors == ["worker 1 was killed by SIGKILL"]


def test_a_worker_failing_of_a_bug_is_a_failure_not_a_store_error() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue(), queue.Queue()]
    coordinator = _Coordinator(inboxes)  # type: ignore[arg-type]
    coordinator.handle(("done", 0, {"reason": FAILED}, "worker 0 failed: ValueError: boom"))
    assert coordinator.failed and coordinator.stopping == "worker failed"
    assert drain(inboxes[1]) == [("stop", "worker failed")]


def test_the_page_target_is_granted_where_the_work_is_and_stops_the_crawl() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue(), queue.Queue()]
    budget = PageBudget(left=20, workers=2)
    assert budget.first_grants() == [2, 2]
    coordinator = _Coordinator(inboxes, budget)  # type: ignore[arg-type]
    # Worker 1 has nothing to crawl: it gives back both pages.
    coordinator.handle(("idle", 1, 0, 1, 2))
    while budget.left:
        coordinator.handle(("ask", 0, budget.sent[0], False))
    granted = sum(pages for _, pages in drain(inboxes[0]))
    assert granted + 2 == 20  # every page of the target went to worker 0
    assert not coordinator.stopping
    coordinator.handle(("ask", 0, budget.sent[0] - 1, True))  # a grant still on its way
    assert not coordinator.stopping
    coordinator.handle(("ask", 0, budget.sent[0], True))  # it has stored all it holds
    assert coordinator.stopping == "target"
    assert coordinator.reason() == "target"
    assert drain(inboxes[1]) == [("stop", "target")]


def test_an_idle_worker_that_had_not_seen_a_grant_is_not_idle() -> None:
    inboxes: list[queue.Queue[Any]] = [queue.Queue()]
    budget = PageBudget(left=10, workers=1)
    budget.first_grants()
    coordinator = _Coordinator(inboxes, budget)  # type: ignore[arg-type]
    coordinator.handle(("ask", 0, 1, False))
    assert [kind for kind, _ in drain(inboxes[0])] == ["grant"]
    coordinator.handle(("idle", 0, 0, 1, 0))  # sent before the grant reached it
    assert not coordinator.stopping
    coordinator.handle(("idle", 0, 0, 2, 3))  # the grant, given back
    assert coordinator.stopping == "exhausted"


# -- a signal while the loop forwards ------------------------------------------------------


class _SignalledInPut(multiprocessing.queues.Queue):  # type: ignore[type-arg]
    """A real worker inbox that receives SIGTERM while the coordinator's loop holds its lock,
    in the middle of forwarding a batch: the moment a crawl once hung on (the old handler
    put its stop to this same queue, and waited for the lock for ever)."""

    def __init__(self) -> None:
        super().__init__(ctx=multiprocessing.get_context("fork"))

    def put(self, obj: Any, block: bool = True, timeout: float | None = None) -> None:
        if obj[0] == "urls":
            with self._notempty:  # type: ignore[attr-defined]
                signal.raise_signal(signal.SIGTERM)  # its handler runs here, lock held
        super().put(obj, block, timeout)


def _worker(up: Connection, inbox: multiprocessing.Queue[Any]) -> None:
    """A worker that finds one URL for itself, then says "done" when told to stop."""
    up.send(("urls", 0, [("http://a.test/next", 1, "http://a.test/")]))
    while (message := inbox.get())[0] != "stop":
        pass
    up.send(("done", 0, {"reason": message[1]}, ""))


@pytest.mark.timeout(60)
def test_a_signal_while_a_batch_is_forwarded_stops_the_crawl() -> None:
    fork = multiprocessing.get_context("fork")
    inbox = _SignalledInPut()
    reading, sending = fork.Pipe(duplex=False)
    control, _control_end = fork.Pipe(duplex=False)
    process = fork.Process(target=_worker, args=(sending, inbox))
    process.start()
    sending.close()
    coordinator = _Coordinator([inbox])
    before = signal.getsignal(signal.SIGTERM)
    try:
        coordinate(coordinator, [reading], [process], (3600.0, lambda: None, None), control)
    finally:
        process.join()
    assert coordinator.stopping == "signal"
    assert coordinator.done == {0: {"reason": "signal"}}
    assert process.exitcode == 0
    assert signal.getsignal(signal.SIGTERM) is before  # the handler found, put back
