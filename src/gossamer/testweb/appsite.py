"""A small test site whose links and text exist only once JavaScript has run (issue 36).

Role in the data flow: none in production; the far end of the crawler's fetch stage in the
tests of ``--render``. One loopback port answers every host name, routed on the Host header
(reach them with ``--resolve '*.web.test:127.0.0.1'``):

- ``app1.web.test`` ... ``appN.web.test`` build every page with ``/static/app.js``
  (:mod:`gossamer.testweb.appsite_assets`): the HTML of ``/`` and ``/p/<k>.html`` is a shell
  with no link; the script asks ``/api/page?path=...`` for the title, the text (with the page's
  marker word) and the links, loads ``/static/logo.png``, and probes ``/api/secret`` (which
  robots.txt disallows) and ``http://127.0.0.1:<port>/private.json`` (an IP-literal, private
  address). app1's root links to every other app root and to ``plain.web.test``; app2's
  robots.txt sets a Crawl-delay.
- ``plain.web.test`` serves real text and real links in its HTML, with a small inline
  analytics script; ``thin.web.test`` serves short static pages with no script at all.

The server logs every request in :mod:`gossamer.testweb.appsite_audit`, which judges a crawl
(overlaps, Crawl-delay, robots.txt, private addresses, repeats, missing pages). Each response
is handed to the transport whole before the request is finished in the log, as
:mod:`gossamer.testweb.server` does, so a crawler that waits for a response before its next
request to a host never counts as overlapping.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from aiohttp.web import BaseRequest, Response, Server, ServerRunner, StreamResponse, TCPSite

from gossamer.testweb.appsite_assets import (
    APP_JS_TEMPLATE,
    LOGO_PNG,
    marker_word,
    prose,
    server_page,
    shell_page,
)
from gossamer.testweb.appsite_audit import AppSiteReport, RequestLog, host_of
from gossamer.testweb.lifetime import LoopServer, ThreadedServer
from gossamer.testweb.server import WRITE_BUFFER_HIGH

__all__ = ["AppSite", "AppSiteReport", "AppSiteServer", "Gate", "PageKind", "ThreadedAppSite"]

PageKind = Literal["script_built", "server_built"]
PLAIN = "plain.web.test"
THIN = "thin.web.test"
DISALLOWED = "/api/secret"
GATE_LIMIT = 30.0  # seconds a gated request waits at most, so a forgotten gate cannot hang


@dataclass(frozen=True, slots=True)
class AppSite:
    """The site's shape and its ground truth: hosts, pages, links, markers, robots rules.

    ``apps`` script-built hosts of ``pages`` pages each (the root and ``/p/0.html`` ...),
    ``plain_pages`` server-rendered pages beside plain's root, two thin pages, and
    ``crawl_delay`` seconds in app2's robots.txt.
    """

    apps: int = 2
    pages: int = 6
    plain_pages: int = 6
    crawl_delay: float = 0.3

    def __post_init__(self) -> None:
        if self.apps < 1 or self.pages < 3 or self.plain_pages < 3 or self.crawl_delay < 0:
            raise ValueError("AppSite needs apps >= 1, pages >= 3, plain_pages >= 3")

    def app_hosts(self) -> list[str]:
        return [f"app{number}.web.test" for number in range(1, self.apps + 1)]

    def hosts(self) -> list[str]:
        return [*self.app_hosts(), PLAIN, THIN]

    def page_paths(self, host: str) -> list[str]:
        """The HTML pages of ``host``, its root first; [] for a host not on the site."""
        if host in self.app_hosts():
            return ["/", *(f"/p/{k}.html" for k in range(self.pages))]
        if host == PLAIN:
            return ["/", *(f"/s/{k}.html" for k in range(self.plain_pages))]
        return ["/", "/t/0.html"] if host == THIN else []

    def links(self, host: str, path: str, port: int) -> list[str]:
        """The page's links as its document has them (HTML or JSON): same-host ones as paths,
        the others as absolute URLs on ``port``."""
        if path == "/":
            return self._root_links(host, port)
        number = int(path[3:].removesuffix(".html"))  # /p/, /s/ or /t/, then <k>.html
        if host == THIN:
            return ["/", self.url(PLAIN, "/", port)]
        size, prefix = (self.plain_pages, "/s/") if host == PLAIN else (self.pages, "/p/")
        # Two or three other pages; the next one alone makes every page reachable from /p/0.
        others = dict.fromkeys([(number + 1) % size, (number + 2) % size, (3 * number + 1) % size])
        return [f"{prefix}{k}.html" for k in others if k != number]

    def _root_links(self, host: str, port: int) -> list[str]:
        apps = self.app_hosts()
        if host == PLAIN:
            pages = [f"/s/{k}.html" for k in range(self.plain_pages)]
            return [*pages, *(self.url(app, "/", port) for app in apps), self.url(THIN, "/", port)]
        if host == THIN:
            return ["/t/0.html"]
        if host != apps[0]:
            return ["/p/0.html"]
        # app1's root is the one seed: it leads to every other host.
        others = [self.url(app, "/", port) for app in apps[1:]]
        return ["/p/0.html", *others, self.url(PLAIN, "/", port)]

    def static_links(self, host: str, path: str, port: int) -> list[str]:
        """The links a crawler finds without running scripts: none on an app host."""
        return [] if host in self.app_hosts() else self.links(host, path, port)

    @staticmethod
    def url(host: str, path: str, port: int) -> str:
        """The URL as the crawler writes it."""
        return f"http://{host}:{port}{path}"

    def seeds(self, port: int) -> list[str]:
        """app1's root: a rendering crawl reaches every page from it."""
        return [self.url(self.app_hosts()[0], "/", port)]

    @staticmethod
    def resolve() -> str:
        """The ``--resolve`` value that sends every host of the site to loopback."""
        return "*.web.test:127.0.0.1"

    def pages_of(self, kind: PageKind, port: int) -> set[str]:
        """Every page URL of the app hosts (``script_built``) or of plain and thin."""
        hosts = self.app_hosts() if kind == "script_built" else [PLAIN, THIN]
        return {self.url(host, path, port) for host in hosts for path in self.page_paths(host)}

    def marker(self, url: str) -> str:
        """The word found in the text of the page at ``url`` and nowhere else."""
        parts = urlsplit(url)
        return marker_word(parts.hostname or "", parts.path or "/")

    def looks_script_built_truth(self, url: str) -> bool:
        """Is ``url`` an HTML page whose content only a script writes?"""
        parts = urlsplit(url)
        host = parts.hostname or ""
        return host in self.app_hosts() and (parts.path or "/") in self.page_paths(host)

    def reachable(self, seeds: list[str], port: int, *, rendered: bool) -> set[str]:
        """Page URLs a crawl from ``seeds`` reaches, running scripts or not."""
        follow = self.links if rendered else self.static_links
        found: set[str] = set()
        queue = deque(seed for seed in seeds if self._is_page(seed))
        while queue:
            url = queue.popleft()
            if url in found:
                continue
            found.add(url)
            parts = urlsplit(url)
            for href in follow(parts.hostname or "", parts.path, port):
                absolute = href.startswith("http")
                queue.append(href if absolute else self.url(parts.hostname or "", href, port))
        return found

    def _is_page(self, url: str) -> bool:
        parts = urlsplit(url)
        return (parts.path or "/") in self.page_paths(parts.hostname or "")

    def robots(self, host: str) -> str:
        if host not in self.app_hosts():
            return "User-agent: *\nDisallow:\n"
        delay = f"Crawl-delay: {self.crawl_delay}\n" if self.delay_of(host) else ""
        return f"User-agent: *\nDisallow: {DISALLOWED}\n{delay}"

    def delay_of(self, host: str) -> float:
        """The Crawl-delay ``host``'s robots.txt sets (app2 only), 0 when none."""
        return self.crawl_delay if host == "app2.web.test" and self.apps >= 2 else 0.0

    def is_disallowed(self, host: str, target: str) -> bool:
        return host in self.app_hosts() and target.startswith(DISALLOWED)

    def page_json(self, host: str, path: str, port: int) -> dict[str, object]:
        """What ``/api/page?path=`` answers for an app page: title, text, links."""
        return {
            "title": f"{host} page {path}",
            "text": prose(host, path, 60),
            "links": self.links(host, path, port),
        }


class Gate:
    """A test's hold on requests for one target: they wait at the gate until :meth:`open`.

    :attr:`arrived` is set (from the server's thread) once a request has begun in the audit
    and reached the gate; :meth:`open` lets it, and every later one, through.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.arrived = threading.Event()
        self._loop = loop
        self._released = asyncio.Event()

    async def passage(self) -> None:
        """On the server's loop: report the arrival, then wait to be let through."""
        self.arrived.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._released.wait(), GATE_LIMIT)

    def open(self) -> None:
        """From any thread."""
        with contextlib.suppress(RuntimeError):  # the loop closed: nothing waits any more
            self._loop.call_soon_threadsafe(self._released.set)


class AppSiteServer(LoopServer):
    """Serves an :class:`AppSite` on the running event loop on one loopback port."""

    def __init__(
        self, site: AppSite, *, port: int = 0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.site = site
        self.port = 0  # the bound port, once started
        self.gates: dict[str, Gate] = {}  # by request target (path and query)
        self._log = RequestLog(clock)
        self._requested = port
        self._runner: ServerRunner | None = None

    async def start(self) -> int:
        runner = ServerRunner(Server(self._handle, access_log=None), shutdown_timeout=1.0)
        await runner.setup()
        try:
            await TCPSite(runner, "127.0.0.1", self._requested).start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def report(self, *, rendered: bool, seeds: list[str] | None = None) -> AppSiteReport:
        """The verdict on every request so far. The pages expected are those a crawl from
        ``seeds`` (default: :meth:`AppSite.seeds`) reaches, running scripts when ``rendered``:
        without it, app hosts' pages other than a seed are never found."""
        start = self.site.seeds(self.port) if seeds is None else seeds
        expected = self.site.reachable(start, self.port, rendered=rendered)
        return self._log.report(self.site, self.port, expected)

    async def _handle(self, request: BaseRequest) -> StreamResponse:
        host, private = host_of(request.host)
        target = request.raw_path
        ticket = self._log.begin(host, private)
        status = 499  # stays if the client goes away before the whole response is written
        try:
            # Yield once, so requests arriving together overlap here and the log sees it.
            await asyncio.sleep(0)
            gate = self.gates.get(target)
            if gate is not None:
                await gate.passage()
            response = self._respond(host, private, request)
            transport = request.transport
            if transport is not None:  # handing the body over then never waits: see server.py
                transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
            try:
                await response.prepare(request)
                await response.write_eof()
            except ConnectionError:
                return response
            status = response.status
            return response
        finally:
            self._log.finish(ticket, target, request.method, status)

    def _respond(self, host: str, private: bool, request: BaseRequest) -> Response:
        site, path = self.site, request.path
        if private:
            return _json({"secret": "a private address"} if path == "/private.json" else None)
        if path == "/robots.txt" and host in site.hosts():
            return Response(body=site.robots(host).encode(), content_type="text/plain")
        if host not in site.app_hosts():
            return self._server_page(host, path)
        if path in site.page_paths(host):
            return Response(body=shell_page(), content_type="text/html", charset="utf-8")
        if path == "/static/app.js":
            script = APP_JS_TEMPLATE.replace("__PORT__", str(self.port))
            return Response(text=script, content_type="application/javascript")
        if path == "/static/logo.png":
            return Response(body=LOGO_PNG, content_type="image/png")
        if path == "/api/page":
            asked = parse_qs(request.query_string).get("path", [""])[0]
            found = asked in site.page_paths(host)
            return _json(site.page_json(host, asked, self.port) if found else None)
        return _json({"secret": "robots.txt says no"} if path == DISALLOWED else None)

    def _server_page(self, host: str, path: str) -> Response:
        if path not in self.site.page_paths(host):
            return Response(status=404, text="not found\n")
        words = 300 if host == PLAIN else 25
        links = self.site.links(host, path, self.port)
        body = server_page(
            f"{host} {path}",
            prose(host, path, words),
            [(href, href) for href in links],
            analytics=host == PLAIN,
        )
        return Response(body=body, content_type="text/html", charset="utf-8")


def _json(value: object) -> Response:
    """A JSON answer, or a JSON 404 for None."""
    if value is None:
        return Response(status=404, text='{"error": "not found"}', content_type="application/json")
    return Response(text=json.dumps(value), content_type="application/json")


class ThreadedAppSite(ThreadedServer):
    """An :class:`AppSiteServer` on its own event loop in a background thread.

    ``with ThreadedAppSite(AppSite()) as site:`` returns once the port is bound and stops the
    server on exit. :meth:`report` first waits for the loop to finish what it was doing, so
    every response a client has received whole is in it.
    """

    server: AppSiteServer

    def __init__(
        self, site: AppSite | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.site = AppSite() if site is None else site
        super().__init__(AppSiteServer(self.site, clock=clock), "appsite")

    @property
    def port(self) -> int:
        return self.server.port

    def url(self, host: str, path: str = "/") -> str:
        return self.site.url(host, path, self.port)

    def seeds(self) -> list[str]:
        return self.site.seeds(self.port)

    def resolve(self) -> str:
        return self.site.resolve()

    def pages(self, kind: PageKind) -> set[str]:
        return self.site.pages_of(kind, self.port)

    def marker(self, url: str) -> str:
        return self.site.marker(url)

    def looks_script_built_truth(self, url: str) -> bool:
        return self.site.looks_script_built_truth(url)

    def report(self, rendered: bool, seeds: list[str] | None = None) -> AppSiteReport:
        """See :meth:`AppSiteServer.report`."""
        self.sync()
        return self.server.report(rendered=rendered, seeds=seeds)

    def sync(self) -> None:
        """Return once the server's loop has run what was queued on it when called."""
        self._synced()

    @contextlib.contextmanager
    def gate(self, target: str) -> Iterator[Gate]:
        """Hold every request for ``target`` (path and query) until the gate is opened, or
        the block ends."""
        if self._loop is None:
            raise RuntimeError("the app site is not running")
        gate = Gate(self._loop)
        self.server.gates[target] = gate  # one dict store: atomic for the loop's reads
        try:
            yield gate
        finally:
            self.server.gates.pop(target, None)
            gate.open()
