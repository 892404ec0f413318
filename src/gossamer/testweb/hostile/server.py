"""The hostile server: one loopback port, raw asyncio streams, every hostile case behind it.

Role in the data flow: none in production. It reads each request itself
(:func:`~gossamer.testweb.hostile.wire.read_request`), routes it on the Host header to its
case (:class:`~gossamer.testweb.hostile.cases.Cases`), and logs it as a :class:`Hit` the
moment it arrives, so a test sees a request that hangs while it hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gossamer.testweb.hostile.cases import HOSTILE_DOMAIN, Cases, Request
from gossamer.testweb.hostile.wire import Reader, Writer, head, read_request
from gossamer.testweb.lifetime import LoopServer

__all__ = ["Hit", "HostileServer"]


@dataclass(frozen=True, slots=True)
class Hit:
    """A request as the server saw it; ``ended`` is None while it is being answered."""

    host: str
    target: str
    started: float
    ended: float | None = None


class HostileServer(LoopServer):
    """Serves every hostile case on one loopback port of the running event loop.

    ``raw`` maps a case name to bytes sent verbatim (then the connection closes): the fuzz tests
    serve arbitrary bytes through it. ``samples`` is the folder of compression bombs and broken
    gzip streams; without it those cases answer 404.
    """

    def __init__(
        self,
        *,
        samples: Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.raw: dict[str, bytes] = {}
        self.port = 0
        self._cases = Cases(samples)
        self._bind = (host, port)
        self._clock = clock
        self._server: asyncio.Server | None = None
        self._open: dict[asyncio.Task[None], Writer] = {}
        self._hits: dict[int, Hit] = {}  # by arrival, so a hanging request is seen at once
        self._arrivals = itertools.count()

    # -- lifetime ---------------------------------------------------------------------------
    async def start(self) -> int:
        self._server = await asyncio.start_server(self._connection, *self._bind)
        self.port = self._cases.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        # Hang up rather than cancel: every handler then ends on its next read or write.
        for writer in self._open.values():
            writer.transport.abort()
        await asyncio.gather(*self._open, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    # -- for tests --------------------------------------------------------------------------
    @property
    def cases(self) -> tuple[str, ...]:
        return self._cases.names

    def url(self, case: str, target: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://{case}.{HOSTILE_DOMAIN}:{self.port}{target}"

    def hits(self, case: str | None = None) -> list[Hit]:
        """Requests in the order they started; only one case's (first label) if given."""
        hits = list(self._hits.values())
        found = [h for h in hits if case is None or h.host.split(".")[0] == case]
        return sorted(found, key=lambda hit: hit.started)

    # -- connections ------------------------------------------------------------------------
    async def _connection(self, r: Reader, w: Writer) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._open[task] = w
        try:
            first = await r.read(1)
            if first == b"\x16":  # a TLS handshake: answer in plain text, like a misconfigured port
                w.write(head(400) + b"plain HTTP here\n")
                return
            while first:
                parsed = await read_request(r, first)
                if parsed is None:
                    return
                keep = await self._logged(Request.of(*parsed), r, w)
                first = await r.read(1) if keep else b""
        except (ConnectionError, TimeoutError):
            pass  # the client hung up on us: for this server, business as usual
        finally:
            del self._open[task]
            w.close()
            with contextlib.suppress(ConnectionError):
                await w.wait_closed()

    async def _logged(self, req: Request, r: Reader, w: Writer) -> bool:
        """Answer ``req`` with a :class:`Hit` on record from its arrival to its end."""
        key = next(self._arrivals)
        self._hits[key] = hit = Hit(req.host, req.target, self._clock())
        try:
            if req.case in self.raw:
                w.write(self.raw[req.case])
                await w.drain()
                return False
            return await self._cases.answer(req, r, w)
        finally:
            self._hits[key] = dataclasses.replace(hit, ended=self._clock())
