"""The hostile server's wire: requests read and responses written byte by byte, on purpose.

Role in the data flow: none in production. These are the raw-stream pieces the cases
(:mod:`gossamer.testweb.hostile.cases`) are built from: a well-formed response, a status line
with any headers, a body trickled a byte at a time or streamed without end, a connection held
open in silence. A framework server would not send half a header or a wrong Content-Length.
"""

from __future__ import annotations

import asyncio
import http
import itertools
from collections.abc import Iterable, Iterator

__all__ = [
    "CHUNK",
    "HTML",
    "TEXT",
    "TRICKLE_SECONDS",
    "Reader",
    "Writer",
    "chunks",
    "hang",
    "head",
    "page",
    "read_request",
    "redirect",
    "send",
    "stream",
    "trickle",
]

Reader = asyncio.StreamReader
Writer = asyncio.StreamWriter

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
CHUNK = 64 * 1024
TRICKLE_SECONDS = 0.05  # pause between the bytes of a slowloris answer
_ENDLESS = 100_000  # pieces an "endless" answer gives up after, if nobody hangs up first


def page(title: str, links: Iterable[str] = ()) -> bytes:
    items = "".join(f'<li><a href="{href}">link</a></li>' for href in links)
    return (
        f"<!DOCTYPE html><html><head><title>{title}</title></head>"
        f"<body><h1>{title}</h1><ul>{items}</ul></body></html>\n"
    ).encode()


def head(
    status: int, headers: Iterable[tuple[str, str | bytes]] = (), reason: bytes | None = None
) -> bytes:
    """A status line and header block. A ``str`` value goes out as Latin-1, a ``bytes`` one
    (raw UTF-8, say) as it is; ``reason`` replaces the standard phrase, bytes as they are."""
    if reason is None:
        try:
            reason = http.HTTPStatus(status).phrase.encode()
        except ValueError:
            reason = b"Whatever"
    lines = [b"HTTP/1.1 %d %s" % (status, reason)]
    for name, value in headers:
        raw = value if isinstance(value, bytes) else value.encode("latin-1")
        lines.append(name.encode("latin-1") + b": " + raw)
    return b"\r\n".join([*lines, b"", b""])


async def send(
    w: Writer,
    status: int,
    body: bytes = b"",
    content_type: str | None = HTML,
    headers: Iterable[tuple[str, str | bytes]] = (),
    *,
    reason: bytes | None = None,
) -> bool:
    """A well-formed response with a Content-Length; the connection stays open.

    ``content_type`` None sends no Content-Type at all."""
    typed = [] if content_type is None else [("Content-Type", content_type)]
    fields = [*typed, ("Content-Length", str(len(body))), *headers]
    w.write(head(status, fields, reason) + body)
    await w.drain()
    return True


async def trickle(w: Writer, data: Iterable[int]) -> bool:
    for byte in itertools.islice(data, _ENDLESS):
        w.write(bytes((byte,)))
        await w.drain()
        await asyncio.sleep(TRICKLE_SECONDS)  # the pause is the behaviour under test
    return False


async def stream(w: Writer, first: bytes, pieces: Iterable[bytes]) -> bool:
    w.write(first)
    for piece in itertools.islice(pieces, _ENDLESS):
        w.write(piece)
        await w.drain()  # raises once the client has hung up
        # drain() returns at once while the socket takes everything; yield anyway, or a fast
        # loopback client sharing this event loop would starve.
        await asyncio.sleep(0)
    return False


async def redirect(w: Writer, status: int, location: str | bytes) -> bool:
    return await send(w, status, page("moved"), headers=[("Location", location)])


async def hang(r: Reader) -> bool:
    """Say nothing until the client gives up and closes the connection."""
    while await r.read(CHUNK):
        pass
    return False


def chunks(size: int) -> Iterator[bytes]:
    piece = f"{size:x}\r\n".encode() + b"<p>" + b"x" * (size - 3) + b"\r\n"
    return itertools.repeat(piece)


async def read_request(r: Reader, prefix: bytes) -> tuple[str, str, str] | None:
    """(method, target, host) of the next request; None at EOF or on nonsense."""
    try:
        raw = prefix + await r.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    host = ""
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "host":
            host = value.strip().lower()
    if not host.endswith("]") and ":" in host:
        host = host.rsplit(":", 1)[0]
    return parts[0], parts[1], host
