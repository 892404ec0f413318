"""How a distributed worker rides out a Redis it cannot reach: retry, then give up cleanly.

Data flow: every Redis call of a worker -> **Patience.call** -> Redis. A call that fails with
:class:`SharedFrontierError` or Redis's own error (connection refused or lost, a restart
under way) is retried with
backoff from 50 ms to 2 s. The first failure is said in one line; the call that gets through
again says so too. After ``limit`` seconds without one success the error goes up, the worker
stops, and its own folder (WARC, CDXJ, ``crawl.db``, reports) is closed whole.

A Lua step whose answer was lost with the connection may have run: the retry then finds its
lease gone (``Lost``, counted) or its URLs already seen, so nothing is queued twice.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from gossamer.distributed.errors import RACY_FAULTS, SharedFrontierError, client_race

__all__ = ["Patience"]

T = TypeVar("T")

FIRST_PAUSE, LAST_PAUSE = 0.05, 2.0
_RETRIED: tuple[type[Exception], ...] = (SharedFrontierError, *RACY_FAULTS)


class Patience:
    """Retries a Redis step for up to ``limit`` seconds of failures in a row."""

    def __init__(self, limit: float, where: str) -> None:
        self.limit = limit
        self.where = where
        self.outages = 0  # times Redis was lost and found again
        self._failing_since: float | None = None

    async def call(self, step: Callable[[], Awaitable[T]]) -> T:
        pause = FIRST_PAUSE
        while True:
            try:
                value = await step()
            except _RETRIED as exc:
                if isinstance(exc, AttributeError) and not client_race(exc):
                    raise
                now = time.monotonic()
                if self._failing_since is None:
                    self._failing_since = now
                    print(f"gossamer: Redis at {self.where} unreachable, retrying: {exc}",
                          file=sys.stderr)  # fmt: skip
                elif now - self._failing_since >= self.limit:
                    raise SharedFrontierError(
                        f"Redis at {self.where} unreachable for {self.limit:g} s: {exc}"
                    ) from exc
                await asyncio.sleep(pause)
                pause = min(pause * 2, LAST_PAUSE)
                continue
            if self._failing_since is not None:
                self._failing_since = None
                self.outages += 1
                print(f"gossamer: Redis at {self.where} reachable again", file=sys.stderr)
            return value
