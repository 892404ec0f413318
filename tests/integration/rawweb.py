"""A web that answers each URL with exact bytes chosen by the test: the far end of a fuzzed crawl.

Role in the data flow: none in production. A test gives :class:`RawWeb` a mapping from
``(host, path)`` to the bytes of a whole response (status line, headers, body, or anything
else); each request is answered with its bytes verbatim, then the connection is closed, so
no answer can leak into the next one and none can hold the crawl up. ``/robots.txt`` and
every path not in the mapping get a well-formed 404 (so robots.txt allows everything and the
sitemap guess finds nothing). Requests are read by the hostile server's own
:func:`~gossamer.testweb.hostile.wire.read_request`; the answers are never parsed here.

The server runs on an event loop of its own in a thread, so the crawl under test, which runs
in another process, meets it the way it would meet any server; :meth:`RawWeb.serve` swaps in
a new mapping between crawls.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from types import MappingProxyType

from gossamer.testweb.hostile.wire import Reader, Writer, read_request

from .loopthread import LoopThread

__all__ = ["NOT_FOUND", "RawWeb", "Request"]

NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
    b"Connection: close\r\n\r\nnot found\n"
)

Request = tuple[str, str]  # (host without port, target), as the server read them


class RawWeb:
    """Serves ``(host, path) -> bytes`` on one loopback port, from a thread of its own.

    ``with RawWeb() as web:`` starts it; ``web.serve(answers)`` replaces what it answers and
    forgets what it saw; ``web.seen()`` lists the requests since then, in arrival order.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.port = 0
        self._host = host
        self._answers: Mapping[Request, bytes] = MappingProxyType({})
        self._seen: list[Request] = []
        self._thread = LoopThread(self._listening)

    def serve(self, answers: Mapping[Request, bytes]) -> None:
        # One reference swapped whole: the server thread sees either mapping, never a mixture.
        self._answers = MappingProxyType(dict(answers))
        self._seen = []

    def seen(self) -> list[Request]:
        return list(self._seen)

    def __enter__(self) -> RawWeb:
        return self._thread.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._thread.__exit__(*exc)

    @contextlib.asynccontextmanager
    async def _listening(self) -> AsyncIterator[RawWeb]:
        server = await asyncio.start_server(self._connection, self._host, 0)
        self.port = int(server.sockets[0].getsockname()[1])
        async with server:
            yield self

    async def _connection(self, r: Reader, w: Writer) -> None:
        try:
            parsed = await read_request(r, b"")
            if parsed is None:
                return
            _, target, host = parsed
            self._seen.append((host, target))
            w.write(self._answers.get((host, target), NOT_FOUND))
            await w.drain()
        except (ConnectionError, TimeoutError):
            pass  # the crawler hung up first: it may, whatever it was sent
        finally:
            w.close()
            with contextlib.suppress(ConnectionError):
                await w.wait_closed()
