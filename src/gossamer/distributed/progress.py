"""The progress line of a shared crawl, on the terminal of each worker that has one.

Data flow: every worker's status in Redis (``livestatus``) -> **progress** ->
``monitor.status.merge_statuses`` (as the ``--workers`` fleet merges its processes) ->
``crawling.progress.status_line`` -> stderr, once a heartbeat. So each terminal shows the whole
crawl's figures: pages, rate over the last minute, URLs queued, hosts, errors, bytes, ETA.
"""

from __future__ import annotations

import time

from redis.asyncio import Redis

from gossamer.crawling.progress import Painter, status_line
from gossamer.distributed.control import queued_urls
from gossamer.distributed.keys import crawl_prefix
from gossamer.distributed.livestatus import read_statuses
from gossamer.monitor.series import Timeline
from gossamer.monitor.status import merge_statuses, merge_totals

__all__ = ["SharedProgress"]

QUEUE_EVERY = 10.0  # seconds between counts of the queued URLs (one LLEN per host)


class SharedProgress:
    """Paints the merged line; ``close`` ends it with a newline once, if it was painted."""

    def __init__(self, redis: Redis, name: str, targets: tuple[int | None, float | None]) -> None:
        self._redis = redis
        self._name = name
        self._prefix = crawl_prefix(name)
        self._targets = targets
        self._started = time.monotonic()
        self._timeline = Timeline()
        self._painter = Painter()
        self._queue = 0
        self._counted = -QUEUE_EVERY
        self._line = ""

    async def paint(self) -> None:
        parts = await read_statuses(self._redis, self._prefix)
        if not parts:
            return
        elapsed = time.monotonic() - self._started
        if elapsed - self._counted >= QUEUE_EVERY:
            self._queue = await queued_urls(self._redis, self._name)
            self._counted = elapsed
        totals = merge_totals([p["totals"] for p in parts.values()], elapsed)
        row = (totals["pages"], totals["error_total"], totals["requests"], totals["bytes"])
        self._timeline.sample(elapsed, row)
        merged = merge_statuses(
            dict(enumerate(parts.values())),
            state="running",
            reason="",
            elapsed=elapsed,
            timeline=self._timeline,
            targets=self._targets,
        )
        merged["queue"] = self._queue
        self._line = status_line(merged)
        self._painter.paint(self._line)

    def close(self) -> None:
        if self._line:
            self._painter.close(self._line)
