"""The test web's HTTP server: loopback sockets that answer for every generated host.

Role in the data flow: the far end of the crawler's fetch stage in tests, ``make demo`` and the
benchmarks. Requests are routed on the Host header (its port ignored), answered from the
:class:`~gossamer.testweb.model.Web`, and logged in an :class:`~gossamer.testweb.audit.Audit`
with the origin (scheme and listening port) they came in on.

By default the server listens on one http port. It may also listen on extra http ports and on
one https port with an ``ssl.SSLContext`` the caller supplies; every host answers on every
socket, which is how one host is reached over several origins (:mod:`gossamer.testweb.origins`).

The handler writes each response itself: it raises the transport's write-buffer high-water mark
above any response this web serves, prepares the response, hands the whole body to the
transport with EOF, then finishes the request in the audit, with no await in between that can
suspend: aiohttp waits only while writing is paused, which the raised mark rules out. A client
therefore cannot receive the last byte and start its next request before the audit has
recorded the end (the in-flight rule is in the audit's docstring). The price is that a body a
client reads slowly sits in the transport's buffer, and counts as ended once handed over.

Bodies are rendered on first request and cached (:mod:`gossamer.testweb.render`), and the
handler does no routing beyond a dict lookup, so the server stays far ahead of any crawler it
serves.

A server answers one generation of the web at a time (:mod:`gossamer.testweb.changes`), 0
unless told otherwise; :meth:`TestWebServer.set_generation` switches it between requests (on
its own loop), :meth:`ThreadedTestWeb.set_generation` from any thread. With
``WebSpec(validators=True)`` a request whose If-None-Match or If-Modified-Since matches the
page's current validators gets ``304 Not Modified`` (:mod:`gossamer.testweb.validators`).

:class:`TestWebServer` runs on the caller's event loop; :class:`ThreadedTestWeb` gives
it a loop of its own in a thread, for tests whose crawler owns the main loop; the
``gossamer testweb`` command is :func:`gossamer.testweb.command.serve_forever`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TypedDict, Unpack

from aiohttp.web import BaseRequest, Response, Server, ServerRunner, StreamResponse, TCPSite

from gossamer.testweb.audit import Audit, AuditReport
from gossamer.testweb.changes import Generation
from gossamer.testweb.lifetime import SYNC_LIMIT, LoopServer, ThreadedServer
from gossamer.testweb.model import Kind, Web
from gossamer.testweb.origins import Origins, Via
from gossamer.testweb.render import LARGE_BYTES, NOT_FOUND, Rendered, Renderer, accepts_gzip
from gossamer.testweb.validators import not_modified

__all__ = [
    "LARGE_BYTES",  # re-exported: where the size cap's test has always found it
    "RETRY_AFTER",
    "SLOW_SECONDS",
    "WRITE_BUFFER_HIGH",
    "ServerOptions",
    "TestWebServer",
    "ThreadedTestWeb",
]

SLOW_SECONDS = 0.3
RETRY_AFTER = 1  # seconds, as sent in Retry-After
# Above every response the web serves (headers, TLS framing and LARGE_BYTES of body included),
# so handing a response to the transport never pauses writing and never waits.
WRITE_BUFFER_HIGH = 4 * LARGE_BYTES
_Renderer = Renderer  # the old name, still imported by benchmarks/workers_scaling.py
HOLD_LIMIT = 30.0  # seconds ThreadedTestWeb.hold keeps the loop frozen at most


def _host_name(header: str) -> str:
    """The host from a Host header, without its port, lowercased."""
    return header.rsplit(":", 1)[0].lower() if not header.endswith("]") else header.lower()


class ServerOptions(TypedDict, total=False):
    """The keyword arguments of :class:`TestWebServer`, passed on by :class:`ThreadedTestWeb`."""

    host: str
    port: int
    extra_ports: Sequence[int]
    https_port: int
    ssl_context: ssl.SSLContext | None
    clock: Callable[[], float]
    generation: int


class TestWebServer(LoopServer):
    """Serves a :class:`Web` on the running event loop and audits every request.

    ``port`` is the main http port (0 picks a free one); ``extra_ports`` adds plain http
    sockets; ``ssl_context`` adds an https socket on ``https_port``. After :meth:`start`,
    :attr:`origins` holds the bound ports. ``generation`` is the generation of the web served
    first.
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        web: Web,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        extra_ports: Sequence[int] = (),
        https_port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.monotonic,
        generation: int = 0,
    ) -> None:
        self.web = web
        self.audit = Audit(web, clock)
        self.origins = Origins(0)  # the bound ports, once started
        self._clock = clock
        self._host = host
        self._requested = (port, tuple(extra_ports), https_port)
        self._ssl_context = ssl_context
        self._runner: ServerRunner | None = None
        self._renderer = Renderer(web, self.origins)
        self._busy_since: dict[tuple[str, str], float] = {}
        # None at generation 0, so the generated web is served with no lookup added.
        self._generation: Generation | None = None
        self.set_generation(generation)

    @property
    def port(self) -> int:
        """The bound main http port; 0 before :meth:`start`."""
        return self.audit.port

    @property
    def generation(self) -> int:
        """The generation of the web being served."""
        return 0 if self._generation is None else self._generation.number

    def set_generation(self, generation: int) -> None:
        """Serve ``generation`` to every request answered from now on. Call it on the server's
        event loop (or before :meth:`start`); a request already being answered keeps the
        generation it began answering with."""
        self._generation = self.web.at(generation) if generation else None

    def expected(self) -> set[str]:
        """What a complete crawl of the generation being served fetches, on the bound ports."""
        if self._generation is None:
            return self.web.expected(self.origins)
        return self._generation.expected(self.origins)

    async def start(self) -> int:
        """Bind every socket (an ``OSError`` if one is taken) and return the main port."""
        server = Server(self._handle, access_log=None)
        runner = ServerRunner(server, shutdown_timeout=1.0)
        await runner.setup()
        main, extra, https = self._requested
        try:
            bound = await self._listen(runner, main)
            extra_bound = tuple([await self._listen(runner, number) for number in extra])
            tls = self._ssl_context
            https_bound = None if tls is None else await self._listen(runner, https, tls)
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.origins = Origins(bound, extra_bound, https_bound)
        self.audit.port = bound
        self._renderer = Renderer(self.web, self.origins)
        return bound

    async def _listen(
        self, runner: ServerRunner, port: int, ssl_context: ssl.SSLContext | None = None
    ) -> int:
        known = len(runner.addresses)
        site = TCPSite(runner, self._host, port, backlog=1024, ssl_context=ssl_context)
        await site.start()
        return int(runner.addresses[known][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _handle(self, request: BaseRequest) -> StreamResponse:
        host = _host_name(request.host)
        target = request.raw_path
        ticket = self.audit.begin(host, scheme=request.scheme, port=self._local_port(request))
        status = 499  # stays if the client goes away before the whole response is written
        sent = 0
        generation = self._generation  # replaced by the one that answers, after the latency
        try:
            # Yield at least once, so requests that arrive together overlap here and the audit
            # sees them; a handler that never awaited would serialise any burst.
            await asyncio.sleep(self.web.spec.latency)
            generation = self._generation
            response = await self._respond(host, target, request, generation)
            try:
                await _send_whole(request, response)
            except ConnectionError:
                return response  # aiohttp's own attempt to finish it meets the reset too
            status = response.status
            sent = len(response.body) if isinstance(response.body, bytes) else 0
            return response
        finally:
            # No await since the last byte was handed over: see the module docstring.
            headers = request.headers
            self.audit.finish(
                ticket,
                target=target,
                method=request.method,
                user_agent=headers.get("User-Agent", ""),
                status=status,
                if_none_match=headers.get("If-None-Match"),
                if_modified_since=headers.get("If-Modified-Since"),
                body_bytes=sent,
                generation=0 if generation is None else generation.number,
            )

    def _local_port(self, request: BaseRequest) -> int:
        """The listening port the request came in on (TLS transports pass the query down)."""
        transport = request.transport
        sockname = transport.get_extra_info("sockname") if transport is not None else None
        return int(sockname[1]) if sockname else self.port

    async def _respond(
        self, host: str, target: str, request: BaseRequest, generation: Generation | None
    ) -> Response:
        if generation is None:
            resource, version = self.web.resource(host, target), 0
        else:
            resource, version = generation.lookup(host, target)
        if resource is None:
            return _response(NOT_FOUND)
        if resource.kind is Kind.SLOW:
            await asyncio.sleep(SLOW_SECONDS)
        elif resource.kind is Kind.RETRY and self._still_busy(host, target):
            headers = {"Retry-After": str(RETRY_AFTER), "Content-Type": "text/plain"}
            return Response(status=429, headers=headers, body=b"Too many requests\n")
        rendered = self._renderer.get(host, target, resource, version)
        zipped = rendered.gzipped is not None and accepts_gzip(
            request.headers.get("Accept-Encoding", "")
        )
        if rendered.etag is not None and request.method in ("GET", "HEAD"):
            asked = request.headers
            if not_modified(
                rendered.etags(),
                rendered.modified,
                rendered.headers["Last-Modified"],
                asked.get("If-None-Match"),
                asked.get("If-Modified-Since"),
            ):
                return _not_modified(rendered, zipped=zipped)
        if zipped and rendered.gzipped is not None:
            headers = {**rendered.headers, "Content-Encoding": "gzip"}
            if rendered.gzipped_etag is not None:
                headers["ETag"] = rendered.gzipped_etag
            return Response(status=rendered.status, headers=headers, body=rendered.gzipped)
        return _response(rendered)

    def _still_busy(self, host: str, target: str) -> bool:
        """429 until Retry-After has passed since the first refusal, by the server's clock."""
        now = self._clock()
        first = self._busy_since.setdefault((host, target), now)
        return now - first < RETRY_AFTER


async def _send_whole(request: BaseRequest, response: Response) -> None:
    """Headers, body and EOF handed to the transport. With the high-water mark raised, neither
    call suspends: aiohttp only waits in ``drain`` while the protocol is paused for writing."""
    transport = request.transport
    if transport is not None:
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
    await response.prepare(request)
    await response.write_eof()


def _response(rendered: Rendered) -> Response:
    return Response(status=rendered.status, headers=rendered.headers, body=rendered.body)


def _not_modified(rendered: Rendered, *, zipped: bool) -> Response:
    """A 304: the validators of the representation the request would have got, no body."""
    etag = rendered.gzipped_etag if zipped and rendered.gzipped_etag else rendered.etag
    headers = {"ETag": etag or "", "Last-Modified": rendered.headers["Last-Modified"]}
    if "Vary" in rendered.headers:
        headers["Vary"] = rendered.headers["Vary"]
    return Response(status=304, headers=headers)


class ThreadedTestWeb(ThreadedServer):
    """A :class:`TestWebServer` on its own event loop in a background thread.

    ``with ThreadedTestWeb(web) as site:`` returns once every socket is bound (it waits on a
    ``threading.Event``) and stops the server and joins the thread on exit. The keyword
    arguments are those of :class:`TestWebServer`.

    The server finishes a request in the audit on its own thread just after handing the last
    byte over, so a client on another thread can hold a whole response a moment before its
    record exists; :attr:`audit` (and so :meth:`report`) therefore calls :meth:`sync` first.
    """

    server: TestWebServer

    def __init__(self, web: Web, **options: Unpack[ServerOptions]) -> None:
        super().__init__(TestWebServer(web, **options), "testweb")
        self.web = web
        self._held = False

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def origins(self) -> Origins:
        return self.server.origins

    @property
    def audit(self) -> Audit:
        """The server's audit, once every response already handed over is recorded."""
        self.sync()
        return self.server.audit

    def sync(self) -> None:
        """Return once the server's loop has finished what it was doing when called: every
        response a client has received in full is then in the audit. A no-op while the loop
        is held, from the loop's own thread, and once the server has stopped."""
        if not self._held:
            self._synced()

    def url(self, host: str, target: str = "/", via: Via = Via.MAIN) -> str:
        """``host``'s ``target`` on one of the server's origins."""
        scheme, port = self.origins.resolve(via)
        return self.web.url(host, target, port, scheme)

    def seeds(self) -> list[str]:
        return self.web.seeds(self.origins)

    def expected(self) -> set[str]:
        """What a complete crawl of the generation being served fetches."""
        return self.server.expected()

    @property
    def generation(self) -> int:
        """The generation of the web being served (see :mod:`gossamer.testweb.changes`)."""
        return self.server.generation

    def set_generation(self, generation: int) -> None:
        """Serve ``generation`` from now on: every request that reaches the handler after
        this returns is answered from it (one already being answered may finish with the one
        before). The generation is built here, on the caller's thread, and switched on the
        server's loop, between two requests."""
        self.web.at(generation)
        loop = self._loop
        if loop is None or not self._thread.is_alive():
            self.server.set_generation(generation)
            return
        if self._held:
            raise RuntimeError("set_generation() inside hold(): the loop cannot switch")
        done = threading.Event()

        def switch() -> None:
            self.server.set_generation(generation)
            done.set()

        loop.call_soon_threadsafe(switch)
        if not done.wait(SYNC_LIMIT):
            raise RuntimeError("the test web's event loop did not switch generation")

    def changed(self, since: int | None = None) -> set[str]:
        """URLs whose page changed since generation ``since`` (default: the one before the
        generation being served) and still answers."""
        return self.web.at(self.generation).changed(self.origins, since)

    def vanished(self, since: int | None = None) -> set[str]:
        """URLs answered at generation ``since`` (default: the one before) that now answer
        404 or 410."""
        return self.web.at(self.generation).vanished(self.origins, since)

    def appeared(self, since: int | None = None) -> set[str]:
        """URLs of the pages new since generation ``since`` (default: the one before)."""
        return self.web.at(self.generation).appeared(self.origins, since)

    def orphans(self) -> set[str]:
        """Expected URLs only a sitemap reaches (see ``WebSpec.sitemap_hosts``)."""
        return self.web.orphans(self.origins)

    def report(self, generation: int | None = None) -> AuditReport:
        """The audit of every request against what a complete crawl of the generation being
        served fetches; with ``generation``, of the requests answered from that generation
        against its own expected set (a recrawl judged alone: a 304 counts as answered)."""
        if generation is None:
            return self.audit.report(self.expected())
        expected = self.web.at(generation).expected(self.origins)
        return self.audit.report(expected, generation=generation)

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Freeze the server's event loop for the duration of the block.

        Requests sent meanwhile wait in the kernel and are taken up together when the block
        ends, in the same pass of the loop: a deterministic way to make requests arrive at once.
        """
        loop = self._loop
        if loop is None:
            raise RuntimeError("the test web is not running")
        frozen, release = threading.Event(), threading.Event()

        def freeze() -> None:
            frozen.set()
            release.wait(HOLD_LIMIT)

        loop.call_soon_threadsafe(freeze)
        if not frozen.wait(HOLD_LIMIT):
            raise RuntimeError("the test web's event loop did not stop for hold()")
        self._held = True
        try:
            yield
        finally:
            self._held = False
            release.set()
