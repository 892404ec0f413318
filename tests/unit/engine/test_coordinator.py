"""The coordinator's end-of-crawl rule: every worker idle with every forwarded batch processed."""

from __future__ import annotations

import queue
from typing import Any

from gossamer.engine.workers import _Coordinator


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
    coordinator.handle(("idle", 0, 0))
    # Worker 1 reports idle before it has seen the batch: not the end yet.
    coordinator.handle(("idle", 1, 0))
    assert not coordinator.stopping
    coordinator.handle(("idle", 1, 1))
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
    coordinator.handle(("idle", 0, 0))
    assert coordinator.reason() == "target"
