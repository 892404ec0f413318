"""Steering one crawl loop: pause and resume its fetches, stop it, add seeds, say how it is.

Data flow: control channel (``engine/control.py``) -> **steering** -> the seam's scheduler
(``engine/seam.py``) and the crawl loops (through the :class:`FetchGate`), admission (added
seeds) and ``stop``; and the crawl's counters and frontier -> **steering** -> the live status
(``monitor/status.py``).

A pause closes the gate: the scheduler hands out no ticket and a loop holding one waits before
fetching it, so once the fetches under way have finished ("pausing" becomes "paused") no request
leaves. A stop opens the gate again, so the jobs already handed out end as on Ctrl-C. Seeds
added live are parsed with the seeds file's rules and admitted as seeds are (depth 0, with the
http fallback of a bare domain), while the scheduler still runs.

The :meth:`Steering.tick` task samples the timeline every second and then publishes the status
to the control channel's subscribers; the status is built only when someone subscribes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from gossamer.engine.control import ControlServer
from gossamer.frontier import Frontier
from gossamer.monitor.status import HostView, LoopFigures, crawl_status
from gossamer.seeds import parse_seeds
from gossamer.stats import CrawlStats
from gossamer.urls import host_of

__all__ = ["TICK", "FetchGate", "Steering", "set_within"]

TICK = 1.0  # seconds between two samples of the timeline (and two pushed statuses)
MAX_SEEDS_TEXT = 100_000  # characters of seeds one add-seeds command may carry
STOP_REASON = "stopped"  # the reason of a stop asked through the control channel

Admit = Callable[..., bool]


class FetchGate:
    """Whether fetches may start, and how many are under way (with the most ever at once)."""

    def __init__(self, stats: CrawlStats) -> None:
        self._stats = stats
        self._open = asyncio.Event()
        self._open.set()
        self.in_flight = 0

    @property
    def paused(self) -> bool:
        return not self._open.is_set()

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    @contextlib.asynccontextmanager
    async def fetching(self) -> AsyncIterator[None]:
        """Wait while paused, then count the block as one fetch under way."""
        await self._open.wait()
        self.in_flight += 1
        self._stats.max_in_flight = max(self._stats.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1


class Steering:
    """The :class:`~gossamer.engine.control.Steerable` of one crawl loop."""

    def __init__(
        self,
        *,
        stats: CrawlStats,
        frontier: Frontier,
        gate: FetchGate,
        concurrency: int,
        targets: tuple[int | None, float | None],
        stop: Callable[[str], None],
        stopping: Callable[[], str],
        wake: Callable[[], None],
        admit: Admit | None,
        worker: str = "local",
    ) -> None:
        self._stats = stats
        self._frontier = frontier
        self._gate = gate
        self._concurrency = concurrency
        self._targets = targets
        self._stop = stop
        self._stopping = stopping  # the stop reason, "" while the scheduler runs
        self._wake = wake
        self._admit = admit  # None: seeds go through the coordinator (a --workers worker)
        self._worker = worker
        self.ended = False

    def state(self) -> str:
        if self.ended:
            return "ended"
        if self._stopping():
            return "stopping"
        if self._gate.paused:
            return "pausing" if self._gate.in_flight else "paused"
        return "running"

    def status(self) -> dict[str, Any]:
        frontier = self._frontier
        visiting = frontier.visiting()
        deferred = {host_of(origin) for origin in frontier.deferred_origins()}
        figures = LoopFigures(
            state=self.state(),
            reason=self._stopping(),
            in_flight=self._gate.in_flight,
            queue=frontier.pending,
            hosts_active=frontier.active_hosts,
            hosts_visiting=len(visiting),
            hosts_deferred=len(deferred),
            concurrency=self._concurrency,
            max_pages=self._targets[0],
            time_limit=self._targets[1],
        )
        status = crawl_status(self._stats, figures, self._host_view, worker=self._worker)
        # Which hosts: the --workers coordinator's reports mark them in visit (at most one
        # per fetch under way or handed out, so a short list).
        status["visiting_hosts"] = sorted(visiting)
        return status

    def _host_view(self, name: str) -> HostView | None:
        host = self._frontier.host(name)
        delays = [
            robots.rules.crawl_delay
            for robots in host.origins.values()
            if robots.rules is not None and robots.rules.crawl_delay is not None
        ]
        return HostView(
            delay=host.delay,
            crawl_delay=max(delays) if delays else None,
            backoff=max(0.0, host.next_time - time.monotonic()),
            errors_in_row=host.errors_in_row,
            in_flight=host.in_flight,
        )

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        if cmd == "pause":
            self._gate.pause()
        elif cmd == "resume":
            self._gate.resume()
            self._wake()
        elif cmd == "stop":
            if self._admit is None:
                return {"ok": False, "error": "a worker is stopped through its coordinator"}
            self._stop(STOP_REASON)
        elif cmd == "add-seeds":
            return self._add_seeds(message.get("text"))
        return {"ok": True, "state": self.state()}

    def _add_seeds(self, text: object) -> dict[str, Any]:
        if self._admit is None:
            return {"ok": False, "error": "a worker takes seeds through its coordinator"}
        if not isinstance(text, str) or len(text) > MAX_SEEDS_TEXT:
            return {"ok": False, "error": f"seeds must be text of at most {MAX_SEEDS_TEXT} chars"}
        if self._stopping() or self.ended:
            return {"ok": False, "error": "the crawl is ending: it takes no more seeds"}
        seeds = parse_seeds(text)
        queued = [
            seed.urls[0]
            for seed in seeds.seeds
            if self._admit(seed.urls[0], 0, None, fallbacks=seed.urls[1:])
        ]
        self._wake()
        return {
            "ok": True,
            "queued": queued,
            "known": len(seeds.seeds) - len(queued),
            "problems": [f"line {p.line}: {p.reason}: {p.text}" for p in seeds.problems],
        }

    async def tick(self, ending: asyncio.Event, control: ControlServer) -> None:
        """Every ``TICK`` seconds until ``ending``: sample the timeline, publish the status.
        The first sample is the crawl's start, the last its end."""
        self._stats.sample()
        while not ending.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TICK):
                    await ending.wait()
            self._stats.sample()
            control.publish()


async def set_within(event: asyncio.Event, seconds: float) -> bool:
    """Whether ``event`` is set within ``seconds``: the timer of every periodic task of a
    crawl (tick, reports, commits, the fleet's links), which a stop cuts short."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
