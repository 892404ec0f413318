"""The crawl's two limits, each written once for every way of running a crawl.

Data flow: the statistics (pages stored, fetches that may still store one) and the clock ->
**limits** -> the engine that asks: the local crawler's dispatcher and each ``--workers``
process's share (``engine/partition.Part.want``), the study's threads
(``crawling/recording.Recording.reserve_page``), and a shared crawl's LEASE script, whose page
reservations are the Lua mirror of :func:`page_room` (``distributed/lua.py``; a property test
holds the two equal). The time limit's :func:`remaining` times a lone crawl, the
``--workers`` coordinator's deadline (``engine/timelimit.py``), a shared worker's run and the
study's threads.
"""

from __future__ import annotations

__all__ = ["page_room", "remaining", "runs_to_end"]


def page_room(stored: int, pending: int, target: int | None) -> bool | None:
    """Whether one more page may be fetched under the page ``target``: True; None once the
    target is reached (``stored``); False while the ``pending`` fetches, each of which may
    store a page (or end in a 404 and give its place back), could still reach it."""
    if target is None:
        return True
    if stored >= target:
        return None
    return stored + pending < target


def remaining(limit: float | None, earlier: float) -> float | None:
    """Seconds left of the time ``limit`` after ``earlier`` seconds already spent (0 when
    spent); None without a limit."""
    return None if limit is None else max(0.0, limit - earlier)


def runs_to_end(target: int | None, limit: float | None) -> bool:
    """Whether a crawl runs until its work is done: no page ``target``, no time ``limit``.
    Then the order of its fetches cannot change what it fetches, only when it ends (the
    frontier orders for the makespan, ``frontier/frontier.py``)."""
    return target is None and limit is None
