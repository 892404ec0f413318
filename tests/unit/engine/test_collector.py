"""The crawl's garbage-collection tuning holds within a crawl and is undone after it."""

from __future__ import annotations

import gc

from gossamer.engine.collector import YOUNG, crawl_collector


def test_tuned_within_and_restored_after() -> None:
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with crawl_collector():
        assert gc.get_threshold() == (YOUNG, before[1], before[2])
        assert gc.get_freeze_count() > frozen  # start-up's objects are out of every walk
        with crawl_collector():  # nested: the outer tuning stays
            assert gc.get_threshold()[0] == YOUNG
        assert gc.get_threshold()[0] == YOUNG
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_restored_when_the_crawl_raises() -> None:
    before = gc.get_threshold()
    try:
        with crawl_collector():
            raise RuntimeError("crawl failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_cyclic_garbage_is_still_collected_within() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    with crawl_collector():
        first, second = Node(), Node()
        first.other, second.other = second, first
        del first, second
        assert gc.collect() >= 2  # the pair, found by the cyclic collector as before
