"""The page target and the time limit, as every engine reads them."""

from __future__ import annotations

from gossamer.crawling.limits import page_room, remaining


def test_page_room_says_go_wait_or_reached() -> None:
    assert page_room(0, 0, None) is True  # no target
    assert page_room(10**9, 10**9, None) is True
    assert page_room(3, 1, 5) is True  # room for one more beside the one in flight
    assert page_room(3, 2, 5) is False  # the fetches in flight may reach it: wait for them
    assert page_room(4, 7, 5) is False
    assert page_room(5, 0, 5) is None  # reached
    assert page_room(6, 3, 5) is None
    assert page_room(0, 0, 0) is None  # a target of nothing is reached at once


def test_remaining_counts_earlier_runs_and_never_goes_below_zero() -> None:
    assert remaining(None, 123.0) is None
    assert remaining(60.0, 0.0) == 60.0
    assert remaining(60.0, 45.5) == 14.5
    assert remaining(60.0, 90.0) == 0.0
