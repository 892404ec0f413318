"""The crawl's control channel, served on its event loop: status, subscribe, pause, resume,
stop and add-seeds, as JSON lines on ``DIR/control.sock`` (the wire: ``monitor/channel.py``).

Data flow: ``gossamer serve`` -> control socket -> **ControlServer** -> a :class:`Steerable`
(the crawl's ``engine/steering.py``, or a ``--workers`` coordinator's ``engine/fleet.py``) ->
the dispatcher and admission; and back, the live status (``monitor/status.py``).

Commands are handled on the loop between two lines read, so they never race the crawl. A
subscriber gets a status at once and then whenever :meth:`ControlServer.publish` is called (the
crawl's one-second tick, and every change of state); a subscriber that stops reading is
dropped once its unsent lines pass ``BACKLOG`` bytes, so it never holds the crawl up. The
socket exists only while the crawl runs: closing sends a last status to every subscriber,
ends every connection and removes the socket file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from gossamer.monitor.channel import COMMANDS, MAX_LINE, decode, encode, listening_socket

__all__ = ["ControlServer", "Steerable"]

log = logging.getLogger(__name__)

BACKLOG = 4 * MAX_LINE  # unsent bytes a subscriber may have before it is dropped


class Steerable(Protocol):
    """What the control channel asks of a crawl."""

    def status(self) -> dict[str, Any]:
        """The live status (``monitor/status.py``)."""
        ...

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        """Carry out pause, resume, stop or add-seeds; the reply."""
        ...


class ControlServer:
    """Owns the control socket of one crawl loop; ``async with`` opens and closes it."""

    def __init__(self, path: Path, target: Steerable) -> None:
        self._path = path
        self._target = target
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[asyncio.StreamWriter] = set()
        self._subscribers: set[asyncio.StreamWriter] = set()

    @property
    def watched(self) -> bool:
        """Whether anyone subscribes (a status is built only then)."""
        return bool(self._subscribers)

    async def __aenter__(self) -> ControlServer:
        try:
            sock = listening_socket(self._path)
            self._server = await asyncio.start_unix_server(self._serve, sock=sock, limit=MAX_LINE)
        except OSError as exc:
            # The crawl does not need its dashboard: it goes on, unwatched.
            log.warning("no control channel, the crawl cannot be watched or steered: %s", exc)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def publish(self) -> None:
        """Send the current status to every subscriber."""
        if not self._subscribers:
            return
        line = encode({"status": self._target.status()})
        for writer in list(self._subscribers):
            self._send(writer, line)

    async def close(self) -> None:
        """The last status to each subscriber, then end every connection and the socket."""
        server, self._server = self._server, None
        if server is None:
            return
        self.publish()
        server.close()
        for writer in list(self._connections):
            writer.close()
        await server.wait_closed()
        for writer in list(self._connections):
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()

    def _send(self, writer: asyncio.StreamWriter, line: bytes) -> None:
        if writer.is_closing() or writer.transport.get_write_buffer_size() > BACKLOG:
            self._subscribers.discard(writer)  # gone, or not reading: dropped
            writer.close()
            return
        writer.write(line)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            while self._server is not None:
                line = await reader.readline()
                if not line:
                    break
                self._handle(line, writer)
        except (OSError, ValueError, asyncio.LimitOverrunError):
            pass  # a connection that broke or sent an overlong line: it ends here
        finally:
            self._subscribers.discard(writer)
            self._connections.discard(writer)
            writer.close()

    def _handle(self, line: bytes, writer: asyncio.StreamWriter) -> None:
        try:
            message = decode(line)
        except ValueError:
            self._send(writer, encode({"reply": {"ok": False, "error": "not a JSON object"}}))
            return
        cmd = message.get("cmd")
        if cmd not in COMMANDS:
            self._send(
                writer, encode({"reply": {"ok": False, "error": f"unknown command {cmd!r}"}})
            )
        elif cmd == "status":
            self._send(writer, encode({"reply": {"ok": True, "status": self._target.status()}}))
        elif cmd == "subscribe":
            self._subscribers.add(writer)
            self._send(writer, encode({"status": self._target.status()}))
        else:
            reply = self._target.command(str(cmd), message)
            self._send(writer, encode({"reply": reply}))
            if reply.get("ok"):
                self.publish()  # the change shows at once
