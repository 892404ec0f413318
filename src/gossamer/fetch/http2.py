"""The fetch stage's HTTP/2 transport (``--http2``): https exchanges over httpcore and h2.

Data flow: ``Fetcher._get`` (guard, proxy route, per-address slot, total deadline) ->
**http2** (one GET on a pooled connection) -> the same body readers (``fetch/body.py``) and the
same ``FetchResult`` as the aiohttp path, so the caps, timeouts, cookies and archiving hold
alike. Imported only when ``fetch.http2`` is on: httpcore and h2 are the ``http2`` extra.

Each TLS connection offers ``h2`` and ``http/1.1`` by ALPN; the server picks, so a server
without HTTP/2 is spoken to in HTTP/1.1 on the same path. Every connection is opened by
:class:`PinnedBackend`, which asks the fetcher's guarded resolver for the address (so
``--resolve`` rules and the SSRF guard apply after DNS, as in the aiohttp connector) and
connects to it, while the TLS server name and the ``Host`` (``:authority``) stay the URL's.

Only https goes this way: HTTP/2 without TLS (h2c) is not offered by servers on the web, and a
request through a proxy stays on aiohttp (httpcore's proxies would bypass ``fetch/proxy.py``).
httpcore's errors are turned into :class:`~gossamer.errors.FetchError` kinds here, raised
from the original so ``faults.is_local_fault`` still sees an exhausted machine.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

import httpcore
from aiohttp.abc import AbstractResolver
from multidict import CIMultiDict
from yarl import URL

from gossamer.errors import FetchError
from gossamer.fetch.result import Headers

__all__ = ["H2Answer", "Http2Client", "PinnedBackend", "error_of"]

# The protocol an answer came in, as ALPN names it: what the WARC notes beside the record.
H2 = "h2"


def _cause_is(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            return None
        if isinstance(current, kind):
            return current
        current = current.__cause__ or current.__context__
    return None


def error_of(exc: Exception) -> FetchError:
    """The :class:`FetchError` kind of an httpcore failure (the aiohttp path's names)."""
    if isinstance(exc, httpcore.ConnectTimeout):
        kind = "connect_timeout"
    elif isinstance(exc, httpcore.TimeoutException):
        kind = "timeout"  # no byte for read_timeout seconds (or none could be written)
    elif isinstance(exc, httpcore.ConnectError):
        if _cause_is(exc, ssl.SSLError) is not None:
            kind = "tls"
        elif _cause_is(exc, ConnectionRefusedError) is not None:
            kind = "connection_refused"
        else:
            kind = "connect"
    elif isinstance(exc, httpcore.ReadError | httpcore.WriteError):
        kind = "connection_reset"
    elif isinstance(exc, httpcore.RemoteProtocolError):
        kind = "bad_response"
    elif isinstance(exc, httpcore.UnsupportedProtocol):
        kind = "bad_scheme"
    else:
        kind = "http_error"
    error = FetchError(kind, str(exc) or type(exc).__name__)
    error.__cause__ = exc
    return error


_HTTPCORE_ERRORS = (
    httpcore.ProtocolError,
    httpcore.NetworkError,
    httpcore.TimeoutException,
    httpcore.UnsupportedProtocol,
)


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except _HTTPCORE_ERRORS as exc:
        raise error_of(exc) from exc


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with every host name resolved by the fetcher's resolver.

    httpcore hands the URL's host to ``connect_tcp`` and, after it, the same host to TLS as
    the server name: resolving here changes the address connected to and nothing else.
    """

    def __init__(self, resolver: AbstractResolver, inner: httpcore.AsyncNetworkBackend) -> None:
        self._resolver = resolver
        self._inner = inner

    async def addresses(self, host: str, port: int) -> list[str]:
        """Where ``host`` may be reached: a literal itself (the fetcher's guard judged it
        before the request), a name what the guarded resolver allows."""
        bare = host.strip("[]")
        try:
            return [str(ipaddress.ip_address(bare))]
        except ValueError:
            pass
        results = await self._resolver.resolve(bare, port, family=socket.AF_UNSPEC)
        if not results:
            raise FetchError("dns", f"cannot resolve {host}: no addresses")
        return [str(result["host"]) for result in results]

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        failure: Exception | None = None
        for address in await self.addresses(host, port):
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # the next address, as the aiohttp connector tries them
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's interface
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise FetchError("bad_scheme", "no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _Chunks:
    """The body stream of an answer, read as ``fetch/body.py`` reads aiohttp's."""

    def __init__(self, response: httpcore.Response) -> None:
        self._response = response

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        # h2 hands over DATA frames as they come (16 KiB by default): the readers' cap is
        # checked after each, so at most one frame is read past it.
        with _translated():
            async for chunk in self._response.aiter_stream():
                yield chunk


@dataclass(frozen=True, slots=True)
class H2Answer:
    """An answer's head, its body stream, and how it came: what the fetcher needs of it."""

    status: int
    reason: str
    protocol: str  # "h2", or "http/1.1" when the server did not choose h2
    http_version: str  # "1.1" or "1.0": h2 answers are recorded in HTTP/1.1 form
    headers: CIMultiDict[str]
    raw_headers: Headers
    content: _Chunks
    remote_ip: str

    @property
    def content_length(self) -> int | None:
        text = self.headers.get("Content-Length")
        return int(text) if text is not None and text.strip().isdigit() else None


def _authority(target: URL) -> str:
    host = target.raw_host or ""
    if ":" in host:
        host = f"[{host}]"
    return host if target.is_default_port() else f"{host}:{target.port}"


class Http2Client:
    """A pool of connections that speak HTTP/2 where the server offers it."""

    def __init__(
        self,
        *,
        resolver: AbstractResolver,
        tls: ssl.SSLContext,
        connections: int,
        connect_timeout: float,
        read_timeout: float,
        backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        inner = backend if backend is not None else httpcore.AnyIOBackend()
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=tls,  # httpcore sets its ALPN list to h2 and http/1.1
            max_connections=connections,
            keepalive_expiry=15.0,  # aiohttp's keep-alive time
            http1=True,
            http2=True,
            network_backend=PinnedBackend(resolver, inner),
        )
        # The total deadline is the fetcher's; a wait for a pooled connection is bounded by it.
        self._timeouts = {
            "connect": connect_timeout,
            "read": read_timeout,
            "write": read_timeout,
            "pool": None,
        }

    @staticmethod
    def request_headers(target: URL, headers: Headers) -> Headers:
        """The headers sent, ``Host`` first (it becomes ``:authority`` in HTTP/2)."""
        return (("Host", _authority(target)), *headers)

    @asynccontextmanager
    async def get(self, target: URL, headers: Headers) -> AsyncIterator[H2Answer]:
        """One GET of an https ``target``; the answer's body is read inside the block."""
        sent = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        with _translated():
            async with self._pool.stream(
                b"GET",
                str(target),
                headers=sent,
                extensions={"timeout": self._timeouts},
            ) as response:
                raw = tuple(
                    (name.decode("latin-1"), value.decode("latin-1"))
                    for name, value in response.headers
                )
                version = bytes(response.extensions.get("http_version", b"HTTP/1.1"))
                reason = bytes(response.extensions.get("reason_phrase", b""))
                stream = response.extensions.get("network_stream")
                peer = stream.get_extra_info("server_addr") if stream is not None else None
                answer = H2Answer(
                    status=response.status,
                    # HTTP/2 has no reason phrase: the WARC writer puts the standard one.
                    reason=reason.decode("utf-8", "surrogateescape"),
                    protocol=H2 if version == b"HTTP/2" else version.decode("ascii").lower(),
                    http_version="1.0" if version == b"HTTP/1.0" else "1.1",
                    headers=CIMultiDict(raw),
                    raw_headers=raw,
                    content=_Chunks(response),
                    remote_ip=str(peer[0]) if peer else "",
                )
                yield answer

    async def aclose(self) -> None:
        await self._pool.aclose()
