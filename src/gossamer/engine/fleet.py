"""The control channel of a ``--workers`` crawl: one socket for the whole crawl, served by the
coordinator, in front of every worker's own.

Data flow: ``gossamer serve`` -> ``DIR/control.sock`` -> **fleet** (a thread of the
coordinator) -> each worker's ``DIR/control-wK.sock`` (its ``engine/control.py``); and back,
each worker's status, merged (``monitor/status.merge_statuses``). Stops and added seeds go to
the coordinator's own loop instead, through a pipe it waits on with the workers' pipes: a stop
is the coordinator's ``stop_all``, and a seed is forwarded to the worker that owns its host
like any other URL, so the coordinator's count of forwarded batches (its end-of-crawl rule)
stays exact.

The coordinator's loop is synchronous (it waits on pipes and process sentinels), so the fleet
runs an event loop on a thread it owns, started before the workers and joined at the end. On
that loop: the control server, one link per worker (connect, subscribe, keep its latest status;
a worker not listening yet is tried again on the next tick) and the tick, which samples the
crawl's timeline from the merged totals every second and publishes the status. Pause and
resume are sent to every worker, and again to a worker that connects later. When the crawl
ends, :meth:`Fleet.finish` publishes the status of the final statistics (those of stats.json)
and closes everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import threading
import time
from collections.abc import Mapping
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from gossamer.crawling.progress import Painter, status_line
from gossamer.engine.control import ControlServer
from gossamer.engine.steering import MAX_SEEDS_TEXT, STOP_REASON, TICK, set_within
from gossamer.monitor.channel import ChannelError, connect, decode, encode, socket_path
from gossamer.monitor.series import Timeline
from gossamer.monitor.status import (
    LoopFigures,
    crawl_status,
    merge_statuses,
    merge_totals,
)
from gossamer.seeds import parse_seeds
from gossamer.stats import CrawlStats

__all__ = ["Fleet"]


class Fleet:
    """The ``Steerable`` of a ``--workers`` crawl; ``with Fleet(...)`` runs its thread."""

    def __init__(
        self,
        out: Path,
        count: int,
        *,
        targets: tuple[int | None, float | None],
        elapsed_before: float = 0.0,
        progress: bool = False,
    ) -> None:
        self._out = out
        # The progress line of the whole crawl, from the merged status (stderr a TTY only).
        self._painter = Painter() if progress else None
        self._count = count
        self._targets = targets
        self._started = time.time() - elapsed_before
        # Stops and seeds, fleet -> coordinator, which waits on ``inbound`` with its pipes.
        self.inbound: Connection
        self.inbound, self._outbound = multiprocessing.Pipe(duplex=False)
        self.timeline = Timeline()
        self._statuses: dict[int, dict[str, Any]] = {}
        self._writers: dict[int, asyncio.StreamWriter] = {}
        self._paused = False
        self._stopping = ""
        self._final: dict[str, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="gossamer-control")

    def __enter__(self) -> Fleet:
        self._thread.start()
        self._ready.wait()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._close()
        self._thread.join()
        self.inbound.close()
        self._outbound.close()

    # -- the coordinator's side -------------------------------------------------------------
    def finish(self, stats: CrawlStats) -> None:
        """The crawl has ended with ``stats`` (those of stats.json): they make the last
        status; then the channel closes."""
        loop = self._loop
        if loop is not None and self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._finish(stats), loop).result()

    def visiting(self) -> set[str]:
        """Hosts in visit in any worker, as their last statuses say (for the interim reports;
        read from the coordinator's thread: a copy of the statuses, taken at once)."""
        statuses = list(self._statuses.values())
        return {str(host) for status in statuses for host in status.get("visiting_hosts", [])}

    def timeline_now(self) -> Timeline:
        """The crawl's timeline, with a last sample now (for the report)."""
        loop = self._loop
        if loop is None or not self._thread.is_alive():
            return self.timeline.copy()
        return asyncio.run_coroutine_threadsafe(self._timeline_now(), loop).result()

    async def _timeline_now(self) -> Timeline:
        self._sample()
        return self.timeline.copy()

    async def _finish(self, stats: CrawlStats) -> None:
        figures = LoopFigures(
            state="ended",
            reason=self._stopping,
            in_flight=0,
            queue=0,
            hosts_active=0,
            hosts_visiting=0,
            hosts_deferred=0,
            concurrency=stats.concurrency,
            max_pages=self._targets[0],
            time_limit=self._targets[1],
        )
        final = crawl_status(stats, figures, lambda _: None, worker="coordinator")
        final["workers"] = [row | {"state": "ended"} for row in self._rows()]
        self._final = final
        if self._painter is not None:
            self._painter.close(status_line(final))
        assert self._closing is not None
        self._closing.set()

    def _close(self) -> None:
        loop, closing = self._loop, self._closing
        if loop is not None and closing is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                loop.call_soon_threadsafe(closing.set)

    # -- the Steerable, on the fleet's loop ---------------------------------------------------
    def status(self) -> dict[str, Any]:
        if self._final is not None:
            return self._final
        return merge_statuses(
            self._statuses,
            state=self._state(),
            reason=self._stopping,
            elapsed=time.time() - self._started,
            timeline=self.timeline,
            targets=self._targets,
        ) | {"workers": self._rows()}

    def _rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        for k in range(self._count):
            rows.extend(
                row | {"name": f"worker {k}"}
                for row in self._statuses.get(k, {}).get("workers", [])
            )
        return rows

    def _state(self) -> str:
        states = {status.get("state") for status in self._statuses.values()}
        if self._stopping or "stopping" in states:
            return "stopping"
        if states == {"ended"} and len(self._statuses) == self._count:
            return "stopping"  # every worker has ended; the coordinator winds up
        if self._paused:
            return "paused" if states <= {"paused", "ended"} else "pausing"
        return "running"

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        if cmd in ("pause", "resume"):
            self._paused = cmd == "pause"
            for writer in self._writers.values():
                writer.write(encode({"cmd": cmd}))
        elif cmd == "stop":
            self._stopping = STOP_REASON
            self._outbound.send(("stop-request", STOP_REASON))
        elif cmd == "add-seeds":
            text = message.get("text")
            if not isinstance(text, str) or len(text) > MAX_SEEDS_TEXT:
                return {"ok": False, "error": f"seeds must be text of at most {MAX_SEEDS_TEXT}"}
            if self._stopping:
                return {"ok": False, "error": "the crawl is ending: it takes no more seeds"}
            seeds = parse_seeds(text)
            urls = [seed.urls[0] for seed in seeds.seeds]
            # Every form of each seed (a bare domain's https, then http) goes to its owner.
            self._outbound.send(("added", [seed.urls for seed in seeds.seeds]))
            problems = [f"line {p.line}: {p.reason}: {p.text}" for p in seeds.problems]
            return {"ok": True, "queued": urls, "known": 0, "problems": problems}
        return {"ok": True, "state": self._state()}

    # -- the fleet's thread -----------------------------------------------------------------
    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = closing = asyncio.Event()
        self._ready.set()
        control = ControlServer(socket_path(self._out), self)
        async with control, asyncio.TaskGroup() as group:
            for k in range(self._count):
                group.create_task(self._link(k, closing))
            group.create_task(self._tick(closing, control))

    async def _tick(self, closing: asyncio.Event, control: ControlServer) -> None:
        """Sample and publish every second; at the end, close the links to the workers."""
        while not await set_within(closing, TICK):
            self._sample()
            control.publish()
            if self._painter is not None and self._statuses:
                self._painter.paint(status_line(self.status()))
        for writer in list(self._writers.values()):
            writer.close()

    def _sample(self) -> None:
        if not self._statuses:
            return
        elapsed = time.time() - self._started
        totals = merge_totals([s["totals"] for s in self._statuses.values()], elapsed)
        row = (totals["pages"], totals["error_total"], totals["requests"], totals["bytes"])
        self.timeline.sample(elapsed, row)

    async def _link(self, k: int, closing: asyncio.Event) -> None:
        """Follow worker ``k``'s status until it ends (or the crawl does)."""
        path = socket_path(self._out, k)
        while not closing.is_set():
            try:
                reader, writer = await connect(path)
            except ChannelError:
                await set_within(closing, TICK)  # not listening yet: try again next tick
                continue
            if await self._follow(k, reader, writer, closing):
                return

    async def _follow(
        self,
        k: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        closing: asyncio.Event,
    ) -> bool:
        """Read worker ``k``'s statuses until its connection ends; whether it has ended."""
        self._writers[k] = writer
        writer.write(encode({"cmd": "subscribe"}))
        if self._paused:
            writer.write(encode({"cmd": "pause"}))
        ended = False
        try:
            while not closing.is_set():
                line = await reader.readline()  # b"" once the tick closes it at the end
                if not line:
                    break
                message = decode(line)
                if isinstance(message.get("status"), dict):
                    self._statuses[k] = message["status"]
                    ended = message["status"].get("state") == "ended"
        except (OSError, ValueError):
            pass  # a worker that died: its sentinel tells the coordinator
        finally:
            self._writers.pop(k, None)
            writer.close()
        return ended
