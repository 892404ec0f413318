"""Web UI, the Crawl page's routes: the live dashboard, its event stream, ``/metrics``, the
live chart, the crawl report, and the steering posts.

Data flow: the crawl feed (``feed``) -> **dashboard** -> browser (events, JSON, metrics, SVG);
browser -> steering post -> checks -> feed -> the crawl's control channel.

Read-only routes carry the guard's headers like every page; the Crawl page alone runs a script,
ours (``script``), under its own policy (:data:`DASHBOARD_POLICY`). Steering posts are checked
before anything is sent to the crawl: the page's CSRF token (a secret of this server process,
written only into the Crawl page, which no other site can read), an ``Origin`` of this server's
own scheme, host and port when the browser sends one, and, when the server was given
``--control-token``, that token. A server bound beyond loopback without a control token
refuses every steering post (403): whoever can reach it could otherwise pause or stop the
crawl.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from multidict import MultiDictProxy

from gossamer.monitor.channel import ChannelError
from gossamer.monitor.report import POLICY as REPORT_POLICY
from gossamer.monitor.report import REPORT_FILE
from gossamer.monitor.series import Timeline
from gossamer.store.reports import REPORTS_FOLDER
from gossamer.web.crawlpage import crawl_page, message_page
from gossamer.web.feed import CrawlFeed, Feed, browser_view
from gossamer.web.guard import is_loopback, secure
from gossamer.web.script import DASHBOARD_JS

__all__ = ["DASHBOARD_POLICY", "Steering", "add_dashboard"]

log = logging.getLogger(__name__)

DASHBOARD_POLICY = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
    "img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; "
    "require-trusted-types-for 'script'; trusted-types 'none'"
)
RETRY_MS = 5000  # how soon a browser asks again when no crawl is running
ACTIONS = ("pause", "resume", "stop", "seeds")


@dataclass(frozen=True, slots=True)
class Steering:
    """Who may steer the crawl from this server."""

    csrf: str  # written into the Crawl page; every post must carry it back
    token: str | None  # --control-token: every post must carry it too
    allowed: bool  # loopback bind, or a control token given

    @classmethod
    def for_bind(cls, bind: str, token: str | None) -> Steering:
        return cls(secrets.token_urlsafe(32), token, is_loopback(bind) or token is not None)

    def refusal(self, form: MultiDictProxy[Any], request: web.Request) -> str | None:
        """Why this post may not steer the crawl, or None."""
        if not self.allowed:
            return "Steering is off: start 'gossamer serve' with --control-token."
        if not _same(str(form.get("csrf", "")), self.csrf):
            return "The form is stale or was not sent by this page: reload the page."
        origin = request.headers.get("Origin")
        if origin is not None and not _same_origin(origin, request.scheme, request.host):
            return "A steering post must come from this server's own page."
        if self.token is not None and not _same(str(form.get("token", "")), self.token):
            return "Wrong or missing control token."
        return None


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def _same_origin(origin: str, scheme: str, host: str) -> bool:
    """Whether a browser's ``Origin`` names this server: the same scheme, host and port
    (RFC 6454), a default port spelt or not. Another port of the same address is another
    origin: any local program serving a page there could otherwise post here."""
    theirs = _origin_of(origin)
    return theirs is not None and theirs == _origin_of(f"{scheme}://{host}")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin_of(text: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a serialised origin, or None for "null" or anything that
    is not one (a path, user info, an unknown scheme, a bad port)."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    default = _DEFAULT_PORTS.get(parts.scheme)
    if default is None or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return parts.scheme, parts.hostname, default if port is None else port


FEED: web.AppKey[Feed] = web.AppKey("feed")
STEERING = web.AppKey("steering", Steering)
FOLDER = web.AppKey("crawl_folder", Path)
CHART = web.AppKey("chart", dict)


def add_dashboard(
    app: web.Application, folder: Path, steering: Steering, feed: Feed | None = None
) -> None:
    """The Crawl page's routes, its feed (by default, of the crawl running in ``folder``) and
    their lifetime, on ``app``."""
    app[FEED] = feed if feed is not None else CrawlFeed(folder)
    app[STEERING] = steering
    app[FOLDER] = folder
    app[CHART] = {}
    app.on_shutdown.append(_shutdown)
    app.router.add_get("/crawl", _page)
    app.router.add_get("/crawl/dashboard.js", _script)
    app.router.add_get("/crawl/events", _events)
    app.router.add_get("/crawl/status.json", _status)
    app.router.add_get("/crawl/chart.svg", _chart)
    app.router.add_get("/crawl/report", _report)
    app.router.add_get("/metrics", _metrics)
    app.router.add_post("/crawl/{action}", _steer)


async def _shutdown(app: web.Application) -> None:
    await app[FEED].close()  # every event stream ends now, not at the shutdown timeout


def _report_path(app: web.Application) -> Path:
    return app[FOLDER] / REPORTS_FOLDER / REPORT_FILE


async def _page(request: web.Request) -> web.StreamResponse:
    steering = request.app[STEERING]
    page = crawl_page(
        steering.csrf,
        token=steering.token is not None,
        can_steer=steering.allowed,
        has_report=_report_path(request.app).is_file(),
    )
    response = web.Response(text=page, content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = DASHBOARD_POLICY
    return response


async def _script(request: web.Request) -> web.StreamResponse:
    return web.Response(text=DASHBOARD_JS, content_type="text/javascript", charset="utf-8")


async def _events(request: web.Request) -> web.StreamResponse:
    """The crawl's status as server-sent events: one now, then one per change; the stream
    ends (with a retry delay) when no crawl is running."""
    feed = request.app[FEED]
    await feed.refresh()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    secure(response.headers)  # before the headers leave: the guard comes too late here
    await response.prepare(request)
    version = -1
    try:
        while not feed.closed:
            if feed.version != version:
                version = feed.version
                data = json.dumps(browser_view(feed.status, version), separators=(",", ":"))
                await response.write(f"event: status\ndata: {data}\n\n".encode())
            if not feed.live:
                await response.write(f"retry: {RETRY_MS}\n\n".encode())
                break
            await feed.changed(version)
    except ConnectionError:
        pass  # the browser went away
    return response


async def _status(request: web.Request) -> web.StreamResponse:
    feed = request.app[FEED]
    await feed.refresh()
    return web.json_response(browser_view(feed.status, feed.version))


async def _metrics(request: web.Request) -> web.StreamResponse:
    from gossamer.monitor.metrics import CONTENT_TYPE, render_metrics  # noqa: PLC0415

    feed = request.app[FEED]
    await feed.refresh()
    response = web.Response(body=render_metrics(feed.status))
    response.headers["Content-Type"] = CONTENT_TYPE
    return response


async def _chart(request: web.Request) -> web.StreamResponse:
    """Pages and errors per second, drawn (off the loop) once per status."""
    from gossamer.monitor.charts import activity_chart  # noqa: PLC0415 - matplotlib, lazily

    feed = request.app[FEED]
    cache: dict[int, str] = request.app[CHART]
    version = feed.version
    svg = cache.get(version)
    if svg is None:
        timeline = Timeline.from_json(feed.status.get("timeline"))
        svg = await asyncio.to_thread(activity_chart, timeline)
        cache.clear()
        cache[version] = svg
    return web.Response(text=svg, content_type="image/svg+xml", charset="utf-8")


async def _report(request: web.Request) -> web.StreamResponse:
    path = _report_path(request.app)
    try:
        page = await asyncio.to_thread(path.read_bytes)
    except OSError as exc:
        raise web.HTTPNotFound(text="This folder has no crawl report yet.") from exc
    response = web.Response(body=page, content_type="text/html", charset="utf-8")
    response.headers["Content-Security-Policy"] = REPORT_POLICY + "; frame-ancestors 'none'"
    return response


async def _steer(request: web.Request) -> web.StreamResponse:
    action = request.match_info["action"]
    if action not in ACTIONS:
        raise web.HTTPNotFound(text="No such steering action.")
    form = await request.post()
    refusal = request.app[STEERING].refusal(form, request)
    if refusal is not None:
        log.warning("steering post refused from %s: %s", request.remote, refusal)
        return _answer(request, 403, refusal)
    command: dict[str, Any] = {"cmd": action}
    if action == "seeds":
        command = {"cmd": "add-seeds", "text": str(form.get("seeds", ""))}
    try:
        reply = await request.app[FEED].command(command)
    except ChannelError:
        return _answer(request, 409, "No crawl is running in this folder.")
    return _answer(request, 200 if reply.get("ok") else 409, _said(action, reply))


def _said(action: str, reply: dict[str, Any]) -> str:
    if not reply.get("ok"):
        return f"The crawl refused: {reply.get('error', 'no reason given')}."
    if action != "seeds":
        warning = reply.get("warning")
        done = f"Done: the crawl is {reply.get('state', 'changing')}."
        return f"{done} {warning}" if warning else done
    queued, problems = reply.get("queued", []), reply.get("problems", [])
    text = f"{len(queued)} seed(s) queued, {reply.get('known', 0)} already known."
    return text + (f" Not used: {'; '.join(problems[:5])}." if problems else "")


def _answer(request: web.Request, status: int, message: str) -> web.StreamResponse:
    if "application/json" in request.headers.get("Accept", ""):
        return web.json_response({"ok": status == 200, "message": message}, status=status)
    title = "Done" if status == 200 else "Not done"
    return web.Response(text=message_page(title, message), status=status, content_type="text/html")
