"""Web UI, the crawl feed: the live status of the crawl in the served folder, for every
browser on the Crawl page and every ``/metrics`` scrape.

Data flow: the crawl's control socket (``monitor/channel.py``; the crawl's
``engine/control.py``) -> **feed** -> the Crawl page's server-sent events, ``/metrics``, the
live chart; and control commands from the page -> **feed** -> the socket.

While a crawl runs, one connection subscribes to it and each status it pushes (every second
and on every change) wakes the waiting handlers: the server waits on pushes and never polls.
When no crawl answers, the status is the folder's last ``reports/stats.json``, or the crawl's
own last word ("ended", with the same totals) if this server saw it end. The feed looks for a
crawl again only when asked (:meth:`CrawlFeed.refresh`): a browser's event stream asks each
time it connects, and the stream of a folder with no crawl running ends with a ``retry``
delay, so an open page notices a crawl started later, the browser doing the waiting.

The channel is the only thing the web side knows of a local crawl. A crawl shared through
Redis has its own feed (``redisfeed.py``) with the same interface (:class:`Feed`), producing
the same status (``monitor/status.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any, Protocol

from gossamer.monitor.channel import ChannelError, ask, connect, decode, encode, socket_path
from gossamer.monitor.status import status_from_report
from gossamer.store.reports import REPORTS_FOLDER

__all__ = ["CrawlFeed", "Feed", "Versioned", "browser_view"]

log = logging.getLogger(__name__)

FIRST_STATUS_SECONDS = 5.0  # longest wait for a crawl's first status after connecting
NOTHING: dict[str, Any] = {"source": "none", "state": "not running", "totals": {}, "workers": []}


class Feed(Protocol):
    """What the Crawl page's routes need of a feed: a local crawl's (:class:`CrawlFeed`) or a
    crawl shared through Redis (``redisfeed.RedisFeed``)."""

    status: dict[str, Any]
    version: int
    closed: bool

    @property
    def live(self) -> bool: ...

    async def refresh(self) -> None: ...

    async def command(self, command: dict[str, Any]) -> dict[str, Any]: ...

    async def changed(self, version: int) -> None: ...

    async def close(self) -> None: ...


class Versioned:
    """What every feed shares: the latest status, a version that counts changes, the handlers
    waiting for the next one, and the task that follows the crawl."""

    def __init__(self) -> None:
        self.status: dict[str, Any] = dict(NOTHING)
        self.version = 0
        self.closed = False
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    @property
    def live(self) -> bool:
        """Whether a running crawl is being followed."""
        return self._task is not None and not self._task.done()

    async def changed(self, version: int) -> None:
        """Return once ``version`` is no longer the latest (or the feed closes)."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.version != version or self.closed)

    async def _set(self, status: dict[str, Any]) -> None:
        async with self._changed:
            self.status = status
            self.version += 1
            self._changed.notify_all()

    async def _stop_following(self) -> None:
        """Closed: the following task ends, and every waiting handler returns."""
        self.closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        async with self._changed:
            self._changed.notify_all()


class CrawlFeed(Versioned):
    """Follows the crawl of one folder; ``status`` is the latest, ``version`` counts changes."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self._socket = socket_path(folder)
        self._stats_file = folder / REPORTS_FOLDER / "stats.json"
        self._connecting = asyncio.Lock()
        self._writer: asyncio.StreamWriter | None = None
        self._ended: dict[str, Any] | None = None  # a crawl's last word, seen by this server

    async def refresh(self) -> None:
        """Follow the folder's crawl if one runs and is not followed yet; else settle on the
        folder's last figures."""
        async with self._connecting:
            if self.live or self.closed:
                return
            try:
                reader, writer = await connect(self._socket)
                writer.write(encode({"cmd": "subscribe"}))
                async with asyncio.timeout(FIRST_STATUS_SECONDS):
                    first = await self._next_status(reader)
            except (ChannelError, OSError, ValueError):
                await self._set(self._settled())
                return
            if first is None:
                writer.close()
                await self._set(self._settled())
                return
            self._writer = writer
            self._ended = None  # a new run: its own last word will count
            await self._set(first)
            self._task = asyncio.create_task(self._follow(reader, writer))

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Send one command to the crawl (``ChannelError`` if none runs)."""
        return await ask(self._socket, command)

    async def close(self) -> None:
        """Stop following; every waiting handler returns."""
        if self._writer is not None:
            self._writer.close()
        await self._stop_following()

    async def _follow(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while (status := await self._next_status(reader)) is not None:
                await self._set(status)
        except (OSError, ValueError):
            log.info("lost the crawl's control channel", exc_info=True)
        finally:
            writer.close()
            self._writer = None
        if not self.closed:
            await self._set(self._settled())

    @staticmethod
    async def _next_status(reader: asyncio.StreamReader) -> dict[str, Any] | None:
        """The next status the crawl pushes; None when it closes the channel."""
        while line := await reader.readline():
            message = decode(line)
            if isinstance(message.get("status"), dict):
                return dict(message["status"])
        return None

    async def _set(self, status: dict[str, Any]) -> None:
        if status.get("source") == "live" and status.get("state") == "ended":
            self._ended = status
        await super()._set(status)

    def _settled(self) -> dict[str, Any]:
        """The status of the folder with no crawl running."""
        if self._ended is not None:
            return self._ended
        try:
            totals = json.loads(self._stats_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return dict(NOTHING)
        return status_from_report(totals) if isinstance(totals, dict) else dict(NOTHING)


def browser_view(status: dict[str, Any], version: int) -> dict[str, Any]:
    """What the Crawl page is sent: the status without its bulky series."""
    totals = {
        key: value
        for key, value in status.get("totals", {}).items()
        if key not in ("fetch_seconds", "hourly", "deferred")
    }
    view = {key: value for key, value in status.items() if key != "timeline"}
    view["totals"] = totals
    view["seq"] = version
    view["samples"] = len(status.get("timeline", {}).get("t", []))
    return view
