"""The lifetime both test servers share: ``start`` binds, ``stop`` closes, ``async with`` both.

Role in the data flow: none in production. :class:`~gossamer.testweb.server.TestWebServer`
(the ordinary test web) and :class:`~gossamer.testweb.hostile.HostileServer` run on the
caller's event loop; a test either calls ``start`` and ``stop`` or uses ``async with``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

__all__ = ["LoopServer"]


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
