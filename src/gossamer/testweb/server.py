"""The test web's HTTP server: one loopback port that answers for every generated host.

Role in the data flow: the far end of the crawler's fetch stage in tests, ``make demo`` and the
benchmarks. Requests are routed on the Host header (its port ignored), answered from the
:class:`~gossamer.testweb.model.Web`, and logged in an :class:`~gossamer.testweb.audit.Audit`.

Bodies are rendered on first request and cached, and the handler does no routing beyond a dict
lookup, so the server stays far ahead of any crawler it serves. :class:`TestWebServer` runs on
the caller's event loop; :class:`ThreadedTestWeb` gives it a loop of its own in a thread, for
tests whose crawler owns the main loop; :func:`serve_forever` is the ``gossamer testweb``
command.
"""

from __future__ import annotations

import asyncio
import gzip
import random
import signal
import struct
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self

from aiohttp.web import BaseRequest, Response, Server, ServerRunner, StreamResponse, TCPSite

from gossamer.testweb.audit import Audit, AuditReport
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import (
    DOMAIN,
    VOCABULARY,
    Kind,
    Link,
    Resource,
    Role,
    Web,
    WebSpec,
)
from gossamer.testweb.pdf import make_pdf

SLOW_SECONDS = 0.3
RETRY_AFTER = 1  # seconds, as sent in Retry-After
LARGE_BYTES = 12 * 1024 * 1024  # above the crawler's 10 MB cap
_LATIN1_WORDS = ("café", "naïve", "façade", "crème", "déjà", "señor", "über", "smørrebrød")
_HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class _Rendered:
    """A response ready to be copied into a fresh ``Response`` for each request."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    gzipped: bytes | None = None  # the body gzip-encoded, for requests that accept it


_NOT_FOUND = _Rendered(404, {"Content-Type": _HTML}, b"<!DOCTYPE html><title>Not found</title>")


def _host_name(header: str) -> str:
    """The host from a Host header, without its port, lowercased."""
    return header.rsplit(":", 1)[0].lower() if not header.endswith("]") else header.lower()


def _accepts_gzip(header: str) -> bool:
    """Does an Accept-Encoding value allow gzip (named, or by '*'), with a weight above 0?"""
    weights: dict[str, float] = {}
    for item in header.split(","):
        coding, _, params = item.partition(";")
        weight = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
        try:
            weights[coding.strip().lower()] = float(weight)
        except ValueError:
            weights[coding.strip().lower()] = 0.0
    return weights.get("gzip", weights.get("*", 0.0)) > 0


def _png() -> bytes:
    """A valid 1x1 RGB PNG: signature, IHDR, IDAT and IEND, each chunk with its CRC."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x2a\x6f\x97")  # filter byte, then one RGB pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


class _Renderer:
    """Turns resources into bytes; text comes from the seed and the URL, never stored."""

    def __init__(self, web: Web, port: int) -> None:
        self._web = web
        self._port = port
        self._cache: dict[tuple[str, str], _Rendered] = {}

    def get(self, host: str, target: str, resource: Resource) -> _Rendered:
        key = (host, target)
        found = self._cache.get(key)
        if found is None:
            found = self._render(host, target, resource)
            info = self._web.info(host)
            if info is None or info.role is not Role.TRAP:  # trap pages are endless
                self._cache[key] = found
        return found

    def _href(self, link: Link) -> str:
        return link.path if link.relative else self._web.url(link.host, link.path, self._port)

    def _render(self, host: str, target: str, res: Resource) -> _Rendered:
        kind = res.kind
        if kind is Kind.REDIRECT and res.target is not None:
            location = self._href(res.target)
            note = f'<!DOCTYPE html><title>Moved</title><a href="{location}">moved</a>'
            headers = {"Location": location, "Content-Type": _HTML}
            return _Rendered(res.status, headers, note.encode())
        if kind is Kind.ERROR:
            note = f"<!DOCTYPE html><title>Error {res.status}</title><p>Status {res.status}.</p>"
            return _Rendered(res.status, {"Content-Type": _HTML}, note.encode())
        if kind is Kind.ROBOTS:
            return _Rendered(200, {"Content-Type": "text/plain; charset=utf-8"}, res.text.encode())
        rng = random.Random(f"{self._web.spec.seed}|{res.body_key or host + target}")
        title = " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(2, 5))).capitalize()
        if kind is Kind.PDF:
            lines = [_sentence(rng, rng.randint(8, 14)) for _ in range(rng.randint(4, 10))]
            return _Rendered(200, {"Content-Type": "application/pdf"}, make_pdf(title, lines))
        if kind is Kind.PNG:
            return _Rendered(200, {"Content-Type": "image/png"}, _png())
        if kind is Kind.LARGE:
            head = f"<!DOCTYPE html><html><head><title>{title}</title></head><body><p>".encode()
            tail = b"</p></body></html>\n"
            filler = (_sentence(rng, 12) + " ").encode()
            middle = filler * (LARGE_BYTES // len(filler) + 1)
            body = head + middle[: LARGE_BYTES - len(head) - len(tail)] + tail
            return _Rendered(200, {"Content-Type": _HTML}, body)
        return self._page(host, target, res, rng, title)

    def _page(
        self, host: str, target: str, res: Resource, rng: random.Random, title: str
    ) -> _Rendered:
        kind = res.kind
        paragraphs = [_sentence(rng, rng.randint(20, 50)) for _ in range(rng.randint(2, 4))]
        charset = "utf-8"
        if kind is Kind.LATIN1:
            paragraphs.append(" ".join(rng.choice(_LATIN1_WORDS) for _ in range(12)) + ".")
            charset = "latin-1"  # while the header below still claims utf-8
        elif kind is Kind.CP1252:
            quoted = " ".join(f"\u201c{rng.choice(VOCABULARY)}\u201d" for _ in range(6))
            paragraphs.append(f"{quoted} \u2013 only \u20ac{rng.randint(2, 99)}.")
            charset = "cp1252"
        meta = "windows-1252" if kind is Kind.CP1252 else "utf-8"
        items = [
            f'<li><a href="{self._href(link)}">{_sentence(rng, 2)[:-1]}</a></li>'
            for link in res.links
        ]
        if target == "/":  # links a crawler must not try to fetch
            items.append(f'<li><a href="mailto:webmaster@{host}">Mail</a> <a href="#top">Top</a>')
        text = "\n".join(
            [
                "<!DOCTYPE html>",
                f'<html lang="en"><head><meta charset="{meta}"><title>{title}</title></head>',
                f'<body><h1 id="top">{title}</h1>',
                *(f"<p>{p}</p>" for p in paragraphs),
                "<ul>",
                *items,
                "</ul>",
                "</body></html>",
                "",
            ]
        )
        body = text.encode(charset)
        if kind is Kind.CP1252:
            return _Rendered(200, {"Content-Type": "text/html"}, body)
        if kind is Kind.GZIP:
            headers = {"Content-Type": _HTML, "Vary": "Accept-Encoding"}
            return _Rendered(200, headers, body, gzip.compress(body, mtime=0))
        return _Rendered(200, {"Content-Type": _HTML}, body)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(words)).capitalize() + "."


class TestWebServer:
    """Serves a :class:`Web` on one port of the running event loop and audits every request."""

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        web: Web,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.web = web
        self.audit = Audit(web, clock)
        self._clock = clock
        self._host = host
        self._requested_port = port
        self._runner: ServerRunner | None = None
        self._renderer = _Renderer(web, port)
        self._busy_since: dict[tuple[str, str], float] = {}

    @property
    def port(self) -> int:
        """The bound port; 0 before :meth:`start`."""
        return self.audit.port

    async def start(self) -> int:
        server = Server(self._handle, access_log=None)
        runner = ServerRunner(server, shutdown_timeout=1.0)
        await runner.setup()
        site = TCPSite(runner, self._host, self._requested_port, backlog=1024)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.audit.port = int(runner.addresses[0][1])
        self._renderer = _Renderer(self.web, self.audit.port)
        return self.audit.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def _handle(self, request: BaseRequest) -> StreamResponse:
        host = _host_name(request.host)
        target = request.raw_path
        ticket = self.audit.begin(host)
        status = 499  # stays if the client goes away while the handler waits
        try:
            # Yield at least once, so requests that arrive together overlap here and the audit
            # sees them; a handler that never awaited would serialise any burst.
            await asyncio.sleep(self.web.spec.latency)
            response = await self._respond(host, target, request)
            status = response.status
            return response
        finally:
            self.audit.finish(
                ticket,
                target=target,
                method=request.method,
                user_agent=request.headers.get("User-Agent", ""),
                status=status,
            )

    async def _respond(self, host: str, target: str, request: BaseRequest) -> Response:
        resource = self.web.resource(host, target)
        if resource is None:
            return _response(_NOT_FOUND)
        if resource.kind is Kind.SLOW:
            await asyncio.sleep(SLOW_SECONDS)
        elif resource.kind is Kind.RETRY and self._still_busy(host, target):
            headers = {"Retry-After": str(RETRY_AFTER), "Content-Type": "text/plain"}
            return Response(status=429, headers=headers, body=b"Too many requests\n")
        rendered = self._renderer.get(host, target, resource)
        if rendered.gzipped is not None and _accepts_gzip(
            request.headers.get("Accept-Encoding", "")
        ):
            headers = {**rendered.headers, "Content-Encoding": "gzip"}
            return Response(status=rendered.status, headers=headers, body=rendered.gzipped)
        return _response(rendered)

    def _still_busy(self, host: str, target: str) -> bool:
        """429 until Retry-After has passed since the first refusal, by the server's clock."""
        now = self._clock()
        first = self._busy_since.setdefault((host, target), now)
        return now - first < RETRY_AFTER


def _response(rendered: _Rendered) -> Response:
    return Response(status=rendered.status, headers=rendered.headers, body=rendered.body)


class ThreadedTestWeb:
    """A :class:`TestWebServer` on its own event loop in a background thread.

    ``with ThreadedTestWeb(web) as site:`` returns once the port is bound (it waits on a
    ``threading.Event``) and stops the server and joins the thread on exit.
    """

    def __init__(
        self,
        web: Web,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.web = web
        self.server = TestWebServer(web, host=host, port=port, clock=clock)
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="testweb", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: Exception | None = None

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def audit(self) -> Audit:
        return self.server.audit

    def seeds(self) -> list[str]:
        return self.web.seeds(self.port)

    def expected(self) -> set[str]:
        return self.web.expected(self.port)

    def report(self) -> AuditReport:
        return self.audit.report(self.expected())

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


def serve_forever(spec: WebSpec, *, host: str, port: int, seeds_file: Path | None) -> int:
    """Run the test web until SIGINT or SIGTERM, then print the audit; the exit status is 0."""
    return asyncio.run(_serve(build_web(spec), host, port, seeds_file))


async def _serve(site: Web, host: str, port: int, seeds_file: Path | None) -> int:
    server = TestWebServer(site, host=host, port=port)
    bound = await server.start()
    try:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        where = ""
        if seeds_file is not None:
            _write_seeds(seeds_file, site.seeds(bound))
            where = f"; seeds in {seeds_file}"
        # A wildcard listening address is reached through loopback.
        address = "127.0.0.1" if host in ("", "0.0.0.0") else host
        print(
            f"testweb: {len(site.hosts)} hosts on port {bound};"
            f" crawl with --resolve '*.{DOMAIN}:{address}'{where}",
            flush=True,
        )
        await stop.wait()
    finally:
        await server.stop()
    print(server.audit.report(site.expected(bound)).summary(), flush=True)
    return 0


def _write_seeds(path: Path, seeds: list[str]) -> None:
    # A few hundred bytes once at startup: not worth a thread hop.
    path.write_text("".join(f"{url}\n" for url in seeds), encoding="utf-8")
