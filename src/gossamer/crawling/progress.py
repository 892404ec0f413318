"""A one-line live progress display for terminals; silent when stderr is not a TTY.

Data flow: ``CrawlStats`` and the frontier -> **progress** -> stderr, every ``REFRESH``
seconds; in a ``--workers`` crawl, the fleet's merged status (``status_line``) once a second
(``engine/fleet.py``). The rate is that of the last minute (the stats' timeline) once there is
one, and the ETA is the time to the page target at that rate or to the time limit, whichever
comes first. One ``_line`` spells both.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Mapping
from typing import Any

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


def _line(  # noqa: PLR0917 - the figures of the line, in its order
    pages: int,
    rate: float,
    queue: int,
    hosts: int,
    errors: int,
    size: int,
    left: float | None,
    timed: bool,
) -> str:
    return (
        f"{pages:>8} pages  {rate:7.1f} p/s  queue {queue:>7}  hosts {hosts:>5}  "
        f"errors {errors:>5}  {size / 1e6:9.1f} MB" + (f"  ETA {clock(left):>6}" if timed else "")
    )


def status_line(status: Mapping[str, Any]) -> str:
    """The progress line of a crawl status (``monitor/status.py``: a lone crawl's or merged)."""
    totals, rates, targets = status["totals"], status["rates"], status["targets"]
    rate = rates["minute"] if rates["minute"] is not None else rates["overall"]
    return _line(
        int(totals["pages"]),
        float(rate),
        int(status.get("queue") or 0),
        int(status.get("hosts", {}).get("active", 0)),
        int(totals["error_total"]),
        int(totals["bytes"]),
        status.get("eta"),
        targets["pages"] is not None or targets["seconds"] is not None,
    )


class Painter:
    """The line on stderr, painted over itself; ended with a newline once, if ever painted."""

    def __init__(self) -> None:
        self._painted = False

    def paint(self, line: str) -> None:
        sys.stderr.write("\r" + line)
        sys.stderr.flush()
        self._painted = True

    def close(self, line: str) -> None:
        if self._painted:
            self.paint(line + "\n")
            self._painted = False


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
        self._painter = Painter()

    def line(self, now: float | None = None) -> str:
        stats = self._stats
        duration = max(stats.duration(now), 1e-9)
        recent = stats.timeline.rate("pages", duration, stats.pages)
        rate = stats.pages / duration if recent is None else recent
        max_pages, limit = self._targets
        return _line(
            stats.pages,
            rate,
            self._frontier.pending,
            self._frontier.active_hosts,
            sum(stats.errors.values()),
            stats.bytes,
            eta(stats.pages, rate, max_pages, duration, limit),
            max_pages is not None or limit is not None,
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
            self._painter.paint(self.line(time.time()))

    def close(self) -> None:
        self._painter.close(self.line(time.time()))
