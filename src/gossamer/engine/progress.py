"""A one-line live progress display for terminals; silent when stderr is not a TTY.

Data flow: ``CrawlStats`` and the frontier -> **progress** -> stderr, every ``REFRESH``
seconds. The rate is that of the last minute (the stats' timeline) once there is one, and the
ETA is the time to the page target at that rate or to the time limit, whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

from gossamer.frontier import Frontier
from gossamer.monitor.status import eta
from gossamer.stats import CrawlStats

REFRESH = 0.5  # seconds between repaints


def clock(seconds: float | None) -> str:
    """A duration as ``1h02m``, ``3m05s`` or ``42s``; ``--`` when unknown."""
    if seconds is None:
        return "--"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    def __init__(
        self,
        stats: CrawlStats,
        frontier: Frontier,
        *,
        enabled: bool,
        targets: tuple[int | None, float | None] = (None, None),
    ) -> None:
        self._stats = stats
        self._frontier = frontier
        self._enabled = enabled
        self._targets = targets  # the page target and the time limit (seconds), if any
        self._painted = False

    def line(self, now: float | None = None) -> str:
        stats = self._stats
        duration = max(stats.duration(now), 1e-9)
        recent = stats.timeline.rate("pages", duration, stats.pages)
        rate = stats.pages / duration if recent is None else recent
        max_pages, limit = self._targets
        left = eta(stats.pages, rate, max_pages, duration, limit)
        return (
            f"{stats.pages:>8} pages  {rate:7.1f} p/s  "
            f"queue {self._frontier.pending:>7}  hosts {self._frontier.active_hosts:>5}  "
            f"errors {sum(stats.errors.values()):>5}  {stats.bytes / 1e6:9.1f} MB"
            + (f"  ETA {clock(left):>6}" if max_pages is not None or limit is not None else "")
        )

    async def run(self, ending: asyncio.Event) -> None:
        """Repaint every ``REFRESH`` seconds until ``ending`` is set."""
        if not self._enabled:
            return
        while not ending.is_set():
            # The display refreshes at a fixed rate; the end of the crawl cuts the wait short.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(REFRESH):
                    await ending.wait()
                    return
            sys.stderr.write("\r" + self.line(time.time()))
            sys.stderr.flush()
            self._painted = True

    def close(self) -> None:
        if self._painted:
            sys.stderr.write("\r" + self.line(time.time()) + "\n")
            sys.stderr.flush()
