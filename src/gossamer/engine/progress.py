"""A one-line live progress display for terminals; silent when stderr is not a TTY."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

from gossamer.frontier import Frontier
from gossamer.stats import CrawlStats

REFRESH = 0.5  # seconds between repaints


class Progress:
    def __init__(self, stats: CrawlStats, frontier: Frontier, *, enabled: bool) -> None:
        self._stats = stats
        self._frontier = frontier
        self._enabled = enabled
        self._painted = False

    def line(self, now: float | None = None) -> str:
        stats = self._stats
        duration = max(stats.duration(now), 1e-9)
        return (
            f"{stats.pages:>8} pages  {stats.pages / duration:7.1f} p/s  "
            f"queue {self._frontier.pending:>7}  hosts {self._frontier.active_hosts:>5}  "
            f"errors {sum(stats.errors.values()):>5}  {stats.bytes / 1e6:9.1f} MB"
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
