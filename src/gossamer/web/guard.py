"""Web UI, the guard around every request: the Host check, error pages and security headers.

Data flow: browser -> **guard** -> route handler (``app``) -> guard -> browser. It is the one
aiohttp middleware, so it wraps every answer the application gives: a page, a refused
parameter (400), an unknown path (404) or method (405), and a fault no handler expected, which
becomes a plain 500 page with the cause in the server's log rather than in the browser. Each of
them leaves with the same headers: our Content-Security-Policy unless the route set a stricter
one of its own, no framing, no MIME sniffing, no referrer, no caching.

DNS rebinding: a page on another site can point its own host name at 127.0.0.1 and then read
a UI listening on loopback from the user's browser, as if it were that site. The browser still
sends that name in ``Host``, so when the UI listens on a loopback address a request is served
only when ``Host`` names a loopback host (``localhost``, ``127.x.y.z``, ``[::1]``, any port);
anything else is answered 421 Misdirected Request. A UI bound elsewhere was exposed on purpose
and answers to whatever name reaches it.
"""

from __future__ import annotations

import ipaddress
import logging

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware
from multidict import CIMultiDict

from gossamer.search.errors import SearchError
from gossamer.urls import canonicalize, host_of
from gossamer.web.pages import error_page

__all__ = ["PAGE_POLICY", "guard", "is_loopback", "secure"]

log = logging.getLogger(__name__)

PAGE_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
# Characters a Host header (host[:port]) never holds but a URL parser would act on.
_NOT_IN_HOST = frozenset("@/\\?# \t")


def secure(headers: CIMultiDict[str]) -> None:
    """Add the security headers; a route's own policy and framing rule are kept."""
    headers.setdefault("Content-Security-Policy", PAGE_POLICY)
    headers.setdefault("X-Frame-Options", "DENY")
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "no-referrer"
    headers.setdefault("Cache-Control", "no-store")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name, an address, an IPv6 literal in brackets) is this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _names_loopback(value: str) -> bool:
    """Whether a ``Host`` header value names a loopback host, with or without a port."""
    if not value or any(char in _NOT_IN_HOST for char in value):
        return False
    # The WHATWG parser reads the port and normalises the host (case, 127.1, IPv6 spellings).
    url = canonicalize(f"http://{value}/")
    return url is not None and is_loopback(host_of(url))


def _page(status: int, title: str, message: str) -> web.Response:
    return web.Response(
        text=error_page(title, message), status=status, content_type="text/html", charset="utf-8"
    )


def guard(bind: str) -> Middleware:
    """The middleware for a UI listening on ``bind``; it checks ``Host`` if that is loopback."""
    check_host = is_loopback(bind)

    @web.middleware
    async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        response: web.StreamResponse
        try:
            if check_host and not _names_loopback(request.headers.get(hdrs.HOST, "")):
                response = _page(
                    421, "Misdirected request", "This server answers only to localhost."
                )
            else:
                response = await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                secure(exc.headers)
                raise
            response = _page(exc.status, exc.reason, exc.text or exc.reason)
        except SearchError as exc:
            response = _page(400, "Bad request", str(exc))
        except Exception:
            # The outermost layer: whatever went wrong is logged whole, and the browser gets a
            # page that says nothing of the server's insides, with the headers of every page.
            log.exception("failed to answer %s %s", request.method, request.path)
            response = _page(500, "Server error", "The request failed; the server log says why.")
        secure(response.headers)
        return response

    return guarded
