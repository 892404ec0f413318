"""Monitor, the control channel's wire: JSON lines over a Unix socket in the crawl folder.

Data flow: ``gossamer serve`` (``web/feed.py``) <-> **channel** <-> the running crawl
(``engine/control.py``; for ``--workers``, the coordinator's ``engine/fleet.py``, which talks
the same way to each worker's own socket).

The socket is ``DIR/control.sock`` (worker K: ``DIR/control-wK.sock``), mode 0600, so only
the crawl's own user can connect: it is bound and its mode set before it listens, so nobody
else can connect even for a moment. A socket left by a crawl that was killed is replaced at the
next start (the folder's lock says nobody else crawls it).

One request per line, a JSON object with ``cmd``:

    {"cmd": "status"}          one status, as the answer
    {"cmd": "subscribe"}       a status now, then one a second and on every change
    {"cmd": "pause"}           the dispatcher hands out no job; fetches under way finish
    {"cmd": "resume"}
    {"cmd": "stop"}            stop as on Ctrl-C: in-flight fetches finish, reports written
    {"cmd": "add-seeds", "text": "..."}   lines of a seeds file, admitted like seeds

An answer is ``{"reply": {"ok": true|false, ...}}``; a subscriber also gets
``{"status": {...}}`` lines (see ``monitor/status.py``). The crawl ends every connection when
it ends, after a last status whose ``state`` is "ended".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "COMMANDS",
    "MAX_LINE",
    "SOCKET_NAME",
    "ChannelError",
    "ask",
    "connect",
    "decode",
    "encode",
    "listening_socket",
    "socket_path",
]

SOCKET_NAME = "control.sock"
MAX_LINE = 1 << 20  # bytes in one line, either way (a status, a batch of seeds)
COMMANDS = frozenset({"status", "subscribe", "pause", "resume", "stop", "add-seeds"})
ASK_SECONDS = 10.0  # longest wait for a command's reply
_SUN_PATH = 107  # bytes of a Unix socket path Linux accepts (108 with the final NUL)


class ChannelError(OSError):
    """The control socket cannot be made or reached (no crawl running, or a path too long)."""


def socket_path(folder: Path, worker: int | None = None) -> Path:
    name = SOCKET_NAME if worker is None else f"control-w{worker}.sock"
    return folder / name


def encode(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line as a JSON object; ``ValueError`` if it is not one."""
    value = json.loads(line)
    if not isinstance(value, dict):
        raise ValueError("a control message is a JSON object")
    return value


def _check_length(path: Path) -> None:
    if len(os.fsencode(path)) > _SUN_PATH:
        raise ChannelError(
            f"the path {path} is longer than a Unix socket may have ({_SUN_PATH} bytes)"
        )


def listening_socket(path: Path) -> socket.socket:
    """A listening Unix socket at ``path``, readable and writable by this user only."""
    _check_length(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # left by a crawl that was killed; the folder's lock is ours
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(os.fspath(path))
        path.chmod(0o600)  # before listen(): nobody can connect while the mode is wider
        sock.listen(16)
        sock.setblocking(False)
    except OSError:
        sock.close()
        with contextlib.suppress(OSError):
            path.unlink()
        raise
    return sock


async def connect(path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the control socket at ``path``; ``ChannelError`` if none answers."""
    _check_length(path)
    try:
        return await asyncio.open_unix_connection(os.fspath(path), limit=MAX_LINE)
    except OSError as exc:  # no socket (no crawl), refused (a crawl that was killed)
        raise ChannelError(f"no crawl answers on {path}: {exc.strerror or exc}") from exc


async def ask(path: Path, command: Mapping[str, Any]) -> dict[str, Any]:
    """Send one command on a connection of its own and return its reply (within
    ``ASK_SECONDS``)."""
    reader, writer = await connect(path)
    try:
        async with asyncio.timeout(ASK_SECONDS):
            writer.write(encode(command))
            await writer.drain()
            while True:
                line = await reader.readline()
                if not line:
                    raise ChannelError(f"the crawl closed {path} without answering")
                message = decode(line)
                if "reply" in message:
                    reply = message["reply"]
                    return reply if isinstance(reply, dict) else {"ok": False}
    except (OSError, ValueError) as exc:
        raise ChannelError(f"the crawl on {path} did not answer: {exc}") from exc
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
