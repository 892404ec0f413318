"""The fetch stage: one HTTP GET per call, with every limit a hostile server needs.

Redirects are not followed here (the engine puts the target back into the frontier, so robots.txt,
politeness and dedup apply to it); robots.txt fetches follow up to five hops themselves, as RFC
9309 asks. Outcomes, good or bad, come back as a :class:`FetchResult`; nothing is raised.

Every request is checked before it leaves: only http and https, and an IP literal must pass the
SSRF guard (host names pass it inside the resolver, after DNS). Every request is bounded: a
connect and a read timeout, a total time for the whole exchange (so a server trickling a byte at
a time cannot hold a worker), a cap on the bytes read and another on the bytes decoded.

A request may go through a proxy (``proxy_for(url)``, ``fetch/proxy.py``): the target's name
is then put through the guard before the proxy is asked (the proxy resolves it itself), https
targets go through CONNECT, and a proxy that fails is a ``proxy_error``, the route's fault.
Cookies live in a jar per host (``fetch/cookies.py``); the ``Cookie`` header is left out of
the recorded request headers (so of the WARC request records) unless ``record_cookies``, and
``Proxy-Authorization`` always is.

With ``http2`` (``--http2``), https requests sent direct go through ``fetch/http2.py``
instead: HTTP/2 where the server offers it by ALPN, HTTP/1.1 where not, with the same guard,
slots, deadline, readers and result; its answers are recorded in HTTP/1.1 form, the protocol
in the result's ``extra["protocol"]``. Plain http and proxied requests stay on aiohttp.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aiohttp
from aiohttp.abc import AbstractResolver
from yarl import URL

from gossamer.errors import ConfigError, FetchError
from gossamer.fetch.body import Answer, Payload, read_page, read_robots
from gossamer.fetch.cookies import CookieJars
from gossamer.fetch.decode import ACCEPT_ENCODING
from gossamer.fetch.faults import PROXY_ERROR, error_kind
from gossamer.fetch.gate import AddressGate, ResolvedNames
from gossamer.fetch.proxy import ProxyRoute
from gossamer.fetch.resolver import GuardedResolver, ResolveRule, check_literal
from gossamer.fetch.result import FetchResult, Headers
from gossamer.fetch.sniff import media_type
from gossamer.robots.parser import MAX_ROBOTS_BYTES
from gossamer.urls import canonical_link

if TYPE_CHECKING:
    from gossamer.fetch.http2 import Http2Client
    from gossamer.sites import SiteRule

__all__ = [
    "ROBOTS_MAX_BYTES",
    "ROBOTS_MAX_HOPS",
    "SCHEMES",
    "FetchLimits",
    "Fetcher",
    "media_type",  # lives in fetch/sniff.py; named here for the callers that import it here
    "tls_context",
]

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = MAX_ROBOTS_BYTES
ROBOTS_MAX_HOPS = 5
SCHEMES = ("http", "https")
MIN_STATUS = 100  # status codes are three digits from 1xx up (RFC 9110 15)
PROXY_AUTH_REQUIRED = 407
# Through a proxy the only connection opened is to the proxy: these kinds are its faults.
_PROXY_CONNECT_KINDS = frozenset({"connect_timeout", "connect", "connection_refused"})
_UNRECORDED = frozenset({"proxy-authorization"})  # never in a result (nor a WARC record)
_ACCEPT = "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.5"


@dataclass(frozen=True, slots=True)
class FetchLimits:
    connect_timeout: float
    read_timeout: float
    total_timeout: float
    max_body: int
    max_decoded: int
    keep_types: tuple[str, ...]


def tls_context(ca_file: str | None) -> ssl.SSLContext | bool:
    """The connector's ``ssl``: the system's authorities, plus those in ``ca_file`` if given."""
    if ca_file is None:
        return True  # aiohttp's default verifying context
    context = ssl.create_default_context()
    try:
        context.load_verify_locations(cafile=ca_file)
    except ssl.SSLError as exc:
        raise ConfigError(
            f"CA file {ca_file}: no usable PEM certificate ({exc.reason or exc})"
        ) from exc
    except OSError as exc:
        raise ConfigError(f"CA file {ca_file}: {exc.strerror or exc}") from exc
    context.set_alpn_protocols(("http/1.1",))  # as aiohttp's own context
    return context


def _raw_headers(raw: tuple[tuple[bytes, bytes], ...]) -> Headers:
    return tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in raw)


def _direct(url: str) -> str | None:
    return None


class Fetcher:
    """Owns the HTTP client session; ``fetch`` is safe to call from many tasks at once."""

    def __init__(
        self,
        *,
        user_agent: str,
        limits: FetchLimits,
        resolve: tuple[ResolveRule, ...],
        allow_private: bool,
        connections: int,
        clock: Callable[[], float] = time.time,
        system_resolver: AbstractResolver | None = None,
        max_per_ip: int | None = None,
        ca_file: str | None = None,
        site_for: Callable[[str], SiteRule] | None = None,
        proxy_for: Callable[[str], str | None] = _direct,
        cookies: CookieJars | None = None,
        record_cookies: bool = False,
        http2: bool | Callable[[str], bool] | None = None,
    ) -> None:
        """``max_per_ip``: exchanges in flight per server address (None: no cap).

        ``ca_file``: a PEM file of certificate authorities trusted besides the system's; a file
        that cannot be used raises :class:`ConfigError` when the fetcher starts.

        ``site_for``: the ``[[site]]`` rule of a URL (``SiteRules.for_url``): its
        ``user_agent`` and ``headers`` go with each request to the site, robots.txt included.

        ``proxy_for``: the proxy URL of a request (credentials allowed: they stay in memory),
        None to go direct. ``cookies``: the crawl's jars (None: no cookie sent or kept);
        ``record_cookies``: keep the ``Cookie`` header in the recorded request headers.

        ``http2``: send https requests that go direct over the HTTP/2 transport
        (``fetch/http2.py``, the ``http2`` extra), which speaks HTTP/1.1 where a server
        offers no h2: every one (True), or those whose URL it says yes to (a site's rule).
        """
        self._user_agent = user_agent
        self._limits = limits
        self._rules = resolve
        self._allow_private = allow_private
        self._connections = connections
        self._clock = clock
        self._system_resolver = system_resolver  # None: the operating system's
        self._max_per_ip = max_per_ip
        self._ca_file = ca_file
        self._site_for = site_for
        self._proxy_for = proxy_for
        self._proxies: dict[str, ProxyRoute] = {}  # parsed, by the text proxy_for gave
        self._cookies = cookies
        self._unrecorded = _UNRECORDED if record_cookies else _UNRECORDED | {"cookie"}
        self._resolver: GuardedResolver | None = None
        self._names: ResolvedNames | None = None
        self._gate: AddressGate | None = None
        self._session: aiohttp.ClientSession | None = None
        self._http2 = http2 is not None and http2 is not False
        self._h2_for: Callable[[str], bool] | None = http2 if callable(http2) else None
        self._h2: Http2Client | None = None

    async def __aenter__(self) -> Fetcher:
        # Reading the CA file (and the system's store) blocks: keep it off the event loop.
        # Without one, aiohttp's own context is used and there is nothing to read here.
        tls = True if self._ca_file is None else await asyncio.to_thread(tls_context, self._ca_file)
        resolver = GuardedResolver(
            self._rules, allow_private=self._allow_private, system=self._system_resolver
        )
        self._resolver = resolver
        self._names = ResolvedNames(resolver)
        if self._max_per_ip is not None:
            self._gate = AddressGate(resolver, self._max_per_ip, names=self._names)
        connector = aiohttp.TCPConnector(
            limit=self._connections,
            limit_per_host=0,
            resolver=resolver,
            ttl_dns_cache=300,
            ssl=tls,
        )
        timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=self._limits.connect_timeout,
            sock_read=self._limits.read_timeout,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            headers={
                "User-Agent": self._user_agent,
                "Accept": _ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
            max_line_size=16_384,
            max_field_size=16_384,
        )
        if self._http2:
            self._h2 = await self._http2_client(resolver)
        return self

    async def _http2_client(self, resolver: GuardedResolver) -> Http2Client:
        from gossamer.fetch.http2 import Http2Client  # noqa: PLC0415 - the http2 extra, lazily

        def context() -> ssl.SSLContext:
            if self._ca_file is not None:
                made = tls_context(self._ca_file)
                assert isinstance(made, ssl.SSLContext)
                return made
            return ssl.create_default_context()

        return Http2Client(
            resolver=resolver,
            tls=await asyncio.to_thread(context),  # reading the store blocks
            connections=self._connections,
            connect_timeout=self._limits.connect_timeout,
            read_timeout=self._limits.read_timeout,
        )

    async def __aexit__(self, *exc: object) -> None:
        if self._h2 is not None:
            await self._h2.aclose()
            self._h2 = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        self._gate = None
        self._names = None
        self._resolver = None

    def in_flight_per_address(self) -> dict[str, int]:
        """Exchanges holding or awaiting a slot, per server address (empty: no cap, or idle)."""
        return {} if self._gate is None else self._gate.in_flight()

    async def fetch(
        self, url: str, *, any_type: bool = False, conditions: tuple[tuple[str, str], ...] = ()
    ) -> FetchResult:
        """GET one canonical URL; the body is read only if its type is kept (or ``any_type``:
        a sitemap may be XML, text or a gzip file) and its size allowed. ``conditions``: a
        recrawl's conditional headers (If-None-Match, If-Modified-Since)."""
        return await self._get(
            url, self._limits.max_body, robots=False, any_type=any_type, conditions=conditions
        )

    async def fetch_robots(
        self, url: str, known: Callable[[str], bool] = lambda target: False
    ) -> list[FetchResult]:
        """GET a robots.txt, following up to five redirects; returns every hop.

        A redirect to a URL for which ``known`` is true is not followed: the caller already
        has that answer, and the last hop returned is the redirect pointing at it.
        """
        hops: list[FetchResult] = []
        current = url
        for _ in range(ROBOTS_MAX_HOPS + 1):
            result = await self._get(current, ROBOTS_MAX_BYTES, robots=True)
            hops.append(result)
            location = result.header("Location") if result.is_redirect else None
            if not location:
                break
            target = canonical_link(location, current)
            if target is None or known(target):
                break
            current = target
        return hops

    async def _get(
        self,
        url: str,
        max_body: int,
        *,
        robots: bool,
        any_type: bool = False,
        conditions: tuple[tuple[str, str], ...] = (),
    ) -> FetchResult:
        assert self._session is not None, "Fetcher used outside its context"
        started = self._clock()
        t0 = time.monotonic()
        deadline = asyncio.timeout(self._limits.total_timeout)
        proxy: ProxyRoute | None = None
        try:
            async with deadline:
                target = self._target(url)
                proxy = await self._route(url, target)
                gate = self._gate
                if gate is None:
                    return await self._exchange(
                        target,
                        url,
                        max_body,
                        robots,
                        proxy,
                        started=started,
                        t0=t0,
                        any_type=any_type,
                        conditions=conditions,
                    )
                assert target.raw_host is not None
                address = await gate.address(target.raw_host, target.port or 0)
                await self._wait_for_slot(gate, address, deadline)
                try:
                    # The exchange starts, and is timed, once its slot is free.
                    started, t0 = self._clock(), time.monotonic()
                    return await self._exchange(
                        target,
                        url,
                        max_body,
                        robots,
                        proxy,
                        started=started,
                        t0=t0,
                        any_type=any_type,
                        conditions=conditions,
                    )
                finally:
                    gate.release(address)
        except (
            TimeoutError,
            aiohttp.ClientError,
            FetchError,
            OSError,
            ValueError,
            MemoryError,
        ) as exc:
            # Slowloris shows up here: bytes kept coming, so no read timed out, but the whole
            # exchange overran its budget.
            kind = "total_timeout" if deadline.expired() else error_kind(exc)
            detail = str(exc) or type(exc).__name__
            if proxy is not None and kind in _PROXY_CONNECT_KINDS:
                kind = PROXY_ERROR  # the proxy is the only host this machine connects to
            if proxy is not None and kind == PROXY_ERROR:
                detail = f"proxy {proxy.shown}: {detail}"
            log.debug("fetch failed url=%s kind=%s detail=%s", url, kind, detail)
            return FetchResult(
                url=url,
                status=0,
                started_at=started,
                elapsed=time.monotonic() - t0,
                error=kind,
                error_detail=detail[:300],
            )

    def _target(self, url: str) -> URL:
        """The URL to request, refused before any connection if its scheme or address is."""
        try:
            # encoded=True: the request carries the canonical URL exactly as recorded and as
            # robots.txt was matched against; yarl would otherwise re-quote '[' and ']' in a path.
            target = URL(url, encoded=True)
        except (ValueError, TypeError) as exc:
            raise FetchError("bad_url", f"unparsable URL: {exc}") from exc
        if target.scheme not in SCHEMES or not target.raw_host:
            raise FetchError("bad_scheme", f"refusing to fetch {target.scheme or 'relative'} URL")
        check_literal(target.raw_host, self._rules, self._allow_private)
        return target

    async def _route(self, url: str, target: URL) -> ProxyRoute | None:
        """The proxy of this request (None: direct), its target judged by the guard first.

        The proxy resolves the target's name itself; resolving it here too, through the
        guarded resolver and its ``--resolve`` rules, refuses a name the crawl may not reach
        before the proxy is asked for it.
        """
        text = self._proxy_for(url)
        if text is None:
            return None
        assert self._resolver is not None and self._names is not None
        proxy = self._proxies.get(text)
        if proxy is None:
            proxy = self._proxies[text] = ProxyRoute.of(text)
            self._resolver.trust_proxy(proxy.url.raw_host or "", proxy.url.port or 0)
        assert target.raw_host is not None
        await self._names.address(target.raw_host, target.port or 0)
        return proxy

    def _site_headers(self, url: str, extra: dict[str, str] | None = None) -> dict[str, str] | None:
        """The request's own headers: its site's User-Agent and headers, then ``extra``."""
        rule = None if self._site_for is None else self._site_for(url)
        if rule is None or not rule.matched:  # no table names the site: the session's own
            return extra
        own = {**dict(rule.headers), "User-Agent": rule.user_agent}
        return own if extra is None else own | extra

    @staticmethod
    async def _wait_for_slot(gate: AddressGate, address: str, deadline: asyncio.Timeout) -> None:
        """Wait for a slot of ``address`` with the total time limit paused.

        A server shared by many hosts may hold a queue of waiting exchanges; the wait is not
        the server being slow, so it must not end as a ``total_timeout``.
        """
        loop = asyncio.get_running_loop()
        when = deadline.when()
        remaining = None if when is None else when - loop.time()
        deadline.reschedule(None)
        await gate.acquire(address)
        deadline.reschedule(None if remaining is None else loop.time() + remaining)

    async def _exchange(
        self,
        target: URL,
        url: str,
        max_body: int,
        robots: bool,
        proxy: ProxyRoute | None,
        *,
        started: float,
        t0: float,
        any_type: bool = False,
        conditions: tuple[tuple[str, str], ...] = (),
    ) -> FetchResult:
        assert self._session is not None
        jars = self._cookies
        cookie = jars.header(target) if jars is not None else None
        headers, tunnel = proxy.headers(target) if proxy else ({}, {})
        if cookie:
            headers["Cookie"] = cookie
        headers.update(conditions)
        if (
            self._h2 is not None
            and proxy is None
            and target.scheme == "https"
            and (self._h2_for is None or self._h2_for(url))
        ):
            own = self._site_headers(url, headers or None)
            return await self._exchange_h2(
                self._h2, target, url, own, max_body=max_body, robots=robots, started=started,
                t0=t0, any_type=any_type,
            )  # fmt: skip
        async with self._session.get(
            target,
            allow_redirects=False,
            headers=self._site_headers(url, headers or None),
            proxy=proxy.url if proxy else None,
            proxy_headers=tunnel or None,
        ) as resp:
            if proxy is not None and resp.status == PROXY_AUTH_REQUIRED:
                return FetchResult(
                    url=url,
                    status=0,
                    started_at=started,
                    elapsed=time.monotonic() - t0,
                    error=PROXY_ERROR,
                    error_detail=f"proxy {proxy.shown}: 407 {resp.reason or ''}".rstrip(),
                )
            if resp.status < MIN_STATUS:  # "000", "042": three digits, but no HTTP status
                return _no_status(url, resp.status, started, t0)
            if jars is not None:  # a redirect's cookies too: a login sets its session on one
                jars.update(target, resp.headers.getall("Set-Cookie", []))
            transport = resp.connection.transport if resp.connection else None
            # Through a proxy the peer is the proxy: the target's address is not known here.
            peer = transport.get_extra_info("peername") if transport and not proxy else None
            payload = await self._payload(resp, max_body, robots, any_type)
            return FetchResult(
                url=url,
                status=resp.status,
                reason=resp.reason or "",
                http_version=f"{resp.version.major}.{resp.version.minor}"
                if resp.version
                else "1.1",
                request_headers=tuple(
                    (name, value)
                    for name, value in resp.request_info.headers.items()
                    if name.lower() not in self._unrecorded
                ),
                response_headers=_raw_headers(resp.raw_headers),
                body=payload.body,
                content=payload.content,
                content_type=payload.content_type,
                started_at=started,
                elapsed=time.monotonic() - t0,
                remote_ip=str(peer[0]) if peer else "",
                error=payload.error,
                truncated=payload.truncated,
                skipped_body=payload.skipped,
            )

    def _h2_headers(self, own: dict[str, str] | None) -> tuple[tuple[str, str], ...]:
        """The session's headers (as aiohttp sends them) with the request's own over them."""
        base = {
            "User-Agent": self._user_agent,
            "Accept": _ACCEPT,
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        if own:
            given = {name.lower() for name in own}
            base = {name: value for name, value in base.items() if name.lower() not in given}
            base.update(own)
        return tuple(base.items())

    async def _exchange_h2(
        self,
        client: Http2Client,
        target: URL,
        url: str,
        own: dict[str, str] | None,
        *,
        max_body: int,
        robots: bool,
        started: float,
        t0: float,
        any_type: bool,
    ) -> FetchResult:
        """The exchange of :meth:`_exchange` over the HTTP/2 transport (direct https only)."""
        sent = client.request_headers(target, self._h2_headers(own))
        async with client.get(target, sent) as resp:
            if resp.status < MIN_STATUS:
                return _no_status(url, resp.status, started, t0)
            if self._cookies is not None:
                self._cookies.update(target, resp.headers.getall("Set-Cookie", []))
            payload = await self._payload(resp, max_body, robots, any_type)
            return FetchResult(
                url=url,
                status=resp.status,
                reason=resp.reason,
                http_version=resp.http_version,  # an h2 answer is recorded as HTTP/1.1
                request_headers=tuple(
                    (name, value) for name, value in sent if name.lower() not in self._unrecorded
                ),
                response_headers=resp.raw_headers,
                body=payload.body,
                content=payload.content,
                content_type=payload.content_type,
                started_at=started,
                elapsed=time.monotonic() - t0,
                remote_ip=resp.remote_ip,
                error=payload.error,
                truncated=payload.truncated,
                skipped_body=payload.skipped,
                extra={"protocol": resp.protocol},
            )

    async def _payload(self, resp: Answer, max_body: int, robots: bool, any_type: bool) -> Payload:
        """The body of either transport's answer, read under the crawl's caps."""
        if robots:
            return await read_robots(resp)
        return await read_page(
            resp,
            max_body=max_body,
            max_decoded=self._limits.max_decoded,
            keep_types=self._limits.keep_types,
            any_type=any_type,
        )


def _no_status(url: str, code: int, started: float, t0: float) -> FetchResult:
    """A status line whose three digits are no HTTP status ("000", "042"): an outcome."""
    return FetchResult(
        url=url,
        status=0,
        started_at=started,
        elapsed=time.monotonic() - t0,
        error="bad_status",
        error_detail=f"status line with code {code:03d}",
    )
