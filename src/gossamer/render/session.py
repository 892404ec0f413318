"""One page rendered: its fetched HTML loaded in Chromium, every other request routed back
through the crawl (``subfetch``), the DOM read once the page has settled.

Data flow: the crawl loop's fetched page -> **session.render_page** -> a ``Rendering``: the
serialised DOM and how the page ended:

* ``rendered``: loaded, and the network went quiet (no request for 500 ms) in time;
* ``unsettled``: still busy at ``[render] page_timeout``: the DOM is read as it is then;
* ``failed``: the browser could not load it (it crashed, or the page could not be read);
  the page is stored and parsed from its own HTML, as if it had not been rendered.

The page's own HTML is not fetched again: the route answers the main document with the
bytes the crawl already has (decoded, so its Content-Encoding and length headers go).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Request, Route

from gossamer.fetch import FetchResult
from gossamer.render.browser import BrowserPool
from gossamer.render.subfetch import SubFetches

__all__ = ["FAILED", "RENDERED", "UNSETTLED", "Rendering", "render_page"]

log = logging.getLogger(__name__)

RENDERED = "rendered"
UNSETTLED = "unsettled"
FAILED = "failed"

# Headers that describe the bytes on the wire, not the decoded body handed to the browser.
_WIRE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)


@dataclass(frozen=True, slots=True)
class Rendering:
    state: str  # RENDERED, UNSETTLED or FAILED
    dom: bytes | None  # the serialised DOM (UTF-8); None when FAILED
    detail: str = ""
    screenshot: bytes | None = None  # a PNG of the viewport, when asked for


def _headers(result: FetchResult) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in result.response_headers:
        lower = name.lower()
        if lower in _WIRE_HEADERS:
            continue
        text = value.encode("latin-1", "replace").decode("utf-8", "replace")
        headers[lower] = f"{headers[lower]}\n{text}" if lower in headers else text
    return headers


async def _answer(route: Route, result: FetchResult | None) -> None:
    try:
        if result is None or not result.status:
            await route.abort("blockedbyclient" if result is None else "failed")
        else:
            await route.fulfill(status=result.status, headers=_headers(result), body=result.content)
    except PlaywrightError:  # the page was closed meanwhile: nobody waits for the answer
        pass


def _is_main_document(request: Request) -> bool:
    """The page's own navigation: the first of the main frame, whatever form of the URL the
    browser wrote (its parser and ours may spell an odd URL differently)."""
    if not request.is_navigation_request():
        return False
    try:
        return request.frame.parent_frame is None
    except PlaywrightError:  # a request of no frame (a service worker's)
        return False


async def render_page(
    pool: BrowserPool,
    page: FetchResult,
    subs: SubFetches,
    seconds: float,
    *,
    screenshot: bool = False,
) -> Rendering:
    """Render ``page`` (a fetched 2xx HTML page) within ``seconds``; ``screenshot``: take a
    PNG of the viewport too."""
    served = False

    async def route(route: Route, request: Request) -> None:
        nonlocal served
        if not served and _is_main_document(request):
            served = True
            await _answer(route, page)
            return
        result = await subs.fetch(request.url, request.resource_type, request.method)
        await _answer(route, result)

    deadline = time.monotonic() + seconds
    try:
        return await _load(pool, page, subs, route, deadline, screenshot=screenshot)
    finally:
        await subs.close()  # nothing the page asked for outlives it


async def _load(
    pool: BrowserPool,
    page: FetchResult,
    subs: SubFetches,
    route: Callable[[Route, Request], Awaitable[None]],
    deadline: float,
    *,
    screenshot: bool,
) -> Rendering:
    main_url = page.url
    seconds = deadline - time.monotonic()
    try:
        async with pool.page() as tab:
            await tab.route("**/*", route)
            try:
                await tab.goto(main_url, wait_until="load", timeout=seconds * 1000)
                left = max(0.05, deadline - time.monotonic())
                await tab.wait_for_load_state("networkidle", timeout=left * 1000)
                state = RENDERED
            except PlaywrightError as exc:
                if not tab.is_closed() and "Timeout" in type(exc).__name__ + str(exc)[:200]:
                    state = UNSETTLED
                else:
                    raise
            left = max(1.0, deadline - time.monotonic())
            dom = await asyncio.wait_for(tab.content(), left)
            picture = await tab.screenshot(type="png", timeout=left * 1000) if screenshot else None
            return Rendering(state, dom.encode("utf-8", "replace"), screenshot=picture)
    except (PlaywrightError, TimeoutError) as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        log.info("rendering %s failed: %s", main_url, first)
        await pool.lost_if_dead()
        return Rendering(FAILED, None, type(exc).__name__)
