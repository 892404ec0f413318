"""A scheduler that drives threads through the URL tree's hook points in a fixed order.

Each hook call parks its thread until the schedule names that thread at that point; the
thread granted a step then runs alone until its next hook point, where it parks again, so
the steps of different threads never overlap. A step marked ``blocks`` is one the thread
cannot finish on its own (it waits for a lock another thread holds): the turn is handed back
at once, and the thread parks at its next point when the lock lets it get there. A thread
granted its last step runs on freely, and once every step has been granted all of them do.

A schedule the code cannot follow is reported in ``failures``, not left to hang: as soon as
the thread of the next step waits at another point (it can then never get there), or after
``timeout`` seconds as a last resort. The threads are then let go, so the test ends.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import NamedTuple

from gossamer.threads.urltree import HOOK_POINTS, Hook


class Step(NamedTuple):
    thread: str
    point: str
    blocks: bool = False


class Schedule:
    def __init__(self, steps: Sequence[Step], *, timeout: float = 10.0) -> None:
        self._steps = list(steps)
        self._timeout = timeout
        self._next = 0
        self._running: str | None = None
        self._parked: dict[str, str] = {}  # thread -> the point it waits at
        self._cond = threading.Condition()
        self.passed: list[tuple[str, str]] = []  # (thread, point) in the order granted
        self.failures: list[str] = []

    def hooks(self) -> dict[str, Hook]:
        def hook_at(point: str) -> Hook:
            return lambda _url: self._arrive(point)

        return {point: hook_at(point) for point in HOOK_POINTS}

    @property
    def finished(self) -> bool:
        with self._cond:
            return self._next >= len(self._steps)

    def _turn(self, me: str, point: str) -> bool:
        if self._next >= len(self._steps):
            return True
        return self._running is None and self._steps[self._next][:2] == (me, point)

    def _impossible(self) -> str | None:
        """Why the next step can never be granted, if it cannot: its thread waits elsewhere."""
        if self._next >= len(self._steps):
            return None
        step = self._steps[self._next]
        at = self._parked.get(step.thread)
        if at is None or at == step.point:
            return None
        return f"the schedule wants {step.thread} at {step.point!r}; it waits at {at!r}"

    def _arrive(self, point: str) -> None:
        me = threading.current_thread().name
        with self._cond:
            if self._running == me:
                self._running = None  # parked again: the turn is free
            self._parked[me] = point
            self._cond.notify_all()
            self._cond.wait_for(
                lambda: self._turn(me, point) or self._impossible() is not None, self._timeout
            )
            del self._parked[me]
            if not self._turn(me, point):
                self.failures.append(self._impossible() or f"{me} timed out at {point!r}")
                self._next = len(self._steps)  # let every thread go: the test fails cleanly
            elif self._next < len(self._steps):
                step = self._steps[self._next]
                self._next += 1
                more = any(later.thread == me for later in self._steps[self._next :])
                # A thread past its last step runs on freely, holding no turn.
                self._running = me if more and not step.blocks else None
                self.passed.append((me, point))
            self._cond.notify_all()
