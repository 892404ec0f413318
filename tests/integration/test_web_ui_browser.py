"""The web UI in a real headless Chromium: search, click through, and stay script-free.

The crawl folder holds a page built from script-injection attempts (in its title, meta
description, body, attributes and an inline script). The test searches for it, opens its
cached copy and its page info, and checks that none of the attempts ran: no
``window.__pwned`` in any frame, no dialog, no attribute set by the page's script.

Needs Debian's ``chromium`` and the ``playwright`` package; skipped with the reason if
either is missing. Playwright drives that Chromium directly: no browser download.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from aiohttp import web

from gossamer.web import make_app
from gossamer.web.links import SANDBOX_ALLOWS

from ..unit.index.fake_crawl import HOSTILE_TITLE, searchable_crawl
from ..unit.web.rough_crawl import LINKS_URL, rough_crawl

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():
    pytest.skip(
        "Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True
    )

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


class ServedApp:
    """Runs an aiohttp app on 127.0.0.1 in a thread of its own, for a synchronous browser."""

    def __init__(self, app: web.Application) -> None:
        self._app = app
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self.port = 0

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        runner = web.AppRunner(self._app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = runner.addresses[0][1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> ServedApp:
        self._thread.start()
        assert self._ready.wait(30), "the web UI did not start"
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = searchable_crawl(tmp_path_factory.mktemp("browser-corpus"))
    with ServedApp(make_app(folder)) as served:
        yield f"http://127.0.0.1:{served.port}"


def launch_chromium() -> Iterator[sync_api.Browser]:
    """Debian's Chromium, headless, under Playwright: the body of every browser fixture."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    yield from launch_chromium()


@pytest.fixture
def page(browser: sync_api.Browser) -> Iterator[sync_api.Page]:
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(15_000)
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    yield opened
    assert dialogs == [], f"a crawled script opened a dialog: {dialogs}"
    context.close()


def assert_not_pwned(frame: sync_api.Frame) -> None:
    assert frame.evaluate("typeof window.__pwned") == "undefined"
    assert frame.evaluate("document.body ? document.body.dataset.pwned || '' : ''") == ""
    assert frame.evaluate("document.title") != "pwned"


def test_search_and_click_through_to_a_page(page: sync_api.Page, base_url: str) -> None:
    page.goto(base_url + "/")
    page.get_by_role("searchbox", name="Search").fill("write ahead logging")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/search?**")
    first = page.locator("article.result").first
    assert first.locator("h3").inner_text() == "Write-ahead logging"
    assert first.locator("mark").count() >= 2
    assert page.locator("section.host h2").first.inner_text() == "a.test"
    first.get_by_role("link", name="page info").click()
    page.wait_for_url("**/info?**")
    assert page.get_by_role("heading", name="Links in").is_visible()
    assert "x average" in page.locator("table.meta").nth(1).inner_text()
    assert_not_pwned(page.main_frame)


def test_injection_attempts_stay_text(page: sync_api.Page, base_url: str) -> None:
    page.goto(base_url + "/search?q=hostile")
    result = page.locator("article.result").filter(has_text="Hostile")
    # The title is shown as the characters the page wrote, not as markup.
    assert result.locator("h3 a").inner_text() == HOSTILE_TITLE
    assert_not_pwned(page.main_frame)

    result.get_by_role("link", name="cached").click()
    page.wait_for_url("**/cached?**")
    assert "as it was crawled on" in page.locator(".cached-bar").inner_text()
    frame_element = page.locator("iframe.cached")
    assert frame_element.get_attribute("sandbox") == SANDBOX_ALLOWS
    cached = frame_element.content_frame
    cached.locator("text=Hostile text with").wait_for()
    assert "<script>alert(8)</script> stays text" in cached.locator("body").inner_text()
    inner = page.frames[1]
    assert_not_pwned(inner)
    assert_not_pwned(page.main_frame)
    # The page's own background style may apply (inline styles are allowed) ...
    assert inner.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(1, 2, 3)"
    # ... but the sandbox gives it an opaque origin: nothing of ours is reachable.
    assert inner.evaluate("self.origin") == "null"

    page.go_back()
    page.locator("article.result").filter(has_text="Hostile").get_by_role(
        "link", name="page info"
    ).click()
    page.wait_for_url("**/info?**")
    assert page.locator("h1").inner_text() == HOSTILE_TITLE
    assert_not_pwned(page.main_frame)


def test_cached_copy_opened_directly_is_still_sandboxed(page: sync_api.Page, base_url: str) -> None:
    page.goto(base_url + "/search?q=hostile")
    href = (
        page.locator("article.result")
        .filter(has_text="Hostile")
        .get_by_role("link", name="cached")
        .get_attribute("href")
    )
    assert href is not None
    page.goto(base_url + href.replace("/cached?", "/cached/raw?"))
    page.locator("text=Hostile text with").wait_for()
    assert_not_pwned(page.main_frame)
    assert page.evaluate("self.origin") == "null"


@pytest.fixture(scope="module")
def rough_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = rough_crawl(tmp_path_factory.mktemp("browser-rough"))
    with ServedApp(make_app(folder)) as served:
        yield f"http://127.0.0.1:{served.port}"


def test_links_in_a_cached_copy_lead_to_a_copy_or_a_new_tab(
    page: sync_api.Page, rough_url: str
) -> None:
    # The live site is answered here: the browser never looks r.test up.
    page.context.route("http://r.test/**", lambda route: route.fulfill(body="the live page"))
    cached = f"{rough_url}/cached?{urlencode({'url': LINKS_URL})}"
    page.goto(cached)
    # A page the crawl stored: its cached copy replaces the whole tab, bar and all.
    page.frame_locator("iframe.cached").get_by_role("link", name="relative, crawled").click()
    page.wait_for_url("**/cached?url=http%3A%2F%2Fr.test%2Fabout")
    assert page.frame_locator("iframe.cached").locator("h1").inner_text() == "About us"
    assert "r.test/about" in page.locator(".cached-bar").inner_text()
    # A page it did not store: the live page, in a new tab, outside the sandbox.
    page.goto(cached)
    with page.context.expect_page() as opened:
        page.frame_locator("iframe.cached").get_by_role(
            "link", name="relative, never crawled"
        ).click()
    live = opened.value
    live.wait_for_load_state()
    assert live.url == "http://r.test/elsewhere?x=1"
    assert live.locator("body").inner_text() == "the live page"
    assert live.evaluate("window.opener") is None
    assert page.url == cached  # the cached copy stays where it was
