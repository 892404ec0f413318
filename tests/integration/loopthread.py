"""A test server on an event loop of its own thread, so a busy crawl cannot slow it.

``with LoopThread(serve) as value:`` runs the async context manager ``serve()`` on a fresh
loop in a thread, hands back what it yields once it is listening, and on the way out closes
it there and joins the thread. The hostile server, the deep-page hosts and the raw web of
the fuzzed crawls all run this way.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread(Generic[T]):
    def __init__(self, serve: Callable[[], AbstractAsyncContextManager[T]]) -> None:
        self._serve = serve
        self._value: T | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with self._serve() as value:
            self._value = value
            self._ready.set()
            await self._stop.wait()

    def __enter__(self) -> T:
        self._thread.start()
        self._ready.wait()
        assert self._value is not None
        return self._value

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
