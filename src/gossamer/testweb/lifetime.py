"""The lifetime the test servers share: ``start`` binds, ``stop`` closes, ``async with`` both;
and :class:`ThreadedServer`, one of them on an event loop of its own in a thread.

Role in the data flow: none in production. :class:`~gossamer.testweb.server.TestWebServer`
(the ordinary test web), :class:`~gossamer.testweb.appsite.AppSiteServer` and
:class:`~gossamer.testweb.hostile.HostileServer` run on the caller's event loop; a test
either calls ``start`` and ``stop`` or uses ``async with``, or, when its crawler owns the main
loop, runs one in a thread (``ThreadedTestWeb``, ``ThreadedAppSite``).
"""

from __future__ import annotations

import asyncio
import threading
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["SYNC_LIMIT", "LoopServer", "ThreadedServer"]

SYNC_LIMIT = 10.0  # seconds ``sync`` waits for the server's loop at most


class LoopServer(ABC):
    """A server on the running event loop, started and stopped by its owner."""

    @abstractmethod
    async def start(self) -> int:
        """Bind (an ``OSError`` if the port is taken) and return the bound port."""

    @abstractmethod
    async def stop(self) -> None:
        """Close every socket and wait for the connections to end; harmless when stopped."""

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


class ThreadedServer:
    """``server`` on its own event loop in a daemon thread: ``with`` returns once it is bound
    (a failure to bind is raised there) and stops it and joins the thread on exit."""

    def __init__(self, server: LoopServer, name: str) -> None:
        self.server = server
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: Exception | None = None

    def _synced(self) -> None:
        """Return once the loop has run what was queued on it when called (a no-op from the
        loop's own thread, and once the server has stopped)."""
        loop = self._loop
        if loop is None or not self._thread.is_alive():
            return
        if threading.current_thread() is self._thread:
            return
        done = threading.Event()
        try:
            loop.call_soon_threadsafe(done.set)
        except RuntimeError:  # the loop closed meanwhile: nothing is under way any more
            return
        done.wait(SYNC_LIMIT)

    def __enter__(self) -> Self:
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            self._thread.join()
            raise self._failure
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            await self.server.start()
        except Exception as exc:  # handed to the thread that called __enter__, which raises it
            self._failure = exc
            return
        finally:
            self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.server.stop()
