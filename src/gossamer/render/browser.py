"""The crawl process's browser: one headless Chromium, a set number of pages at once.

Data flow: ``session.render_page`` asks **browser** for a fresh page (its own browser context:
no cookies, storage or cache shared between two crawled pages) -> loads and reads it -> gives
it back. Chromium is started on the first page that needs it, so a crawl that renders nothing
never starts one, and started again after a crash (:meth:`BrowserPool.lost_if_dead`).

The browser never reaches the network itself: ``--host-resolver-rules`` makes every name
unresolvable inside Chromium, so a request that escaped the page's route (a preconnect, a
service worker, a DNS prefetch) fails instead of bypassing the crawl's fetcher. The V8 heap
of each browser is capped (``[render] memory_mb``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Browser, Page, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

__all__ = ["BrowserPool"]

log = logging.getLogger(__name__)

_ARGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no way out but the crawl's route
    "--no-sandbox",  # a crawler in a container often runs as root, which the sandbox refuses
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--no-first-run",
    "--mute-audio",
)


class BrowserPool:
    """At most ``size`` pages rendered at once in one browser, started when first needed."""

    def __init__(self, *, size: int, executable: str, memory_mb: int, user_agent: str) -> None:
        self._slots = asyncio.Semaphore(size)
        self._executable = executable
        self._args = (*_ARGS, f"--js-flags=--max-old-space-size={memory_mb}")
        self._user_agent = user_agent
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._starting = asyncio.Lock()
        self.restarts = 0  # browsers started again after a crash

    @asynccontextmanager
    async def page(self) -> AsyncIterator[Page]:
        """A page in a browser context of its own, closed with the context after use."""
        async with self._slots:
            browser = await self._live()
            context = await browser.new_context(
                user_agent=self._user_agent, service_workers="block", accept_downloads=False
            )
            try:
                yield await context.new_page()
            finally:
                with contextlib.suppress(PlaywrightError):  # the browser went away with it
                    await context.close()

    async def _live(self) -> Browser:
        async with self._starting:
            browser = self._browser
            if browser is not None and browser.is_connected():
                return browser
            if browser is not None:  # crashed since its last page
                self.restarts += 1
                log.warning("the browser was lost; starting another")
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self._executable, args=list(self._args), headless=True
            )
            return self._browser

    async def lost_if_dead(self) -> None:
        """After a failed page: a browser that is gone is forgotten, and the next page
        starts another (counted in ``restarts``)."""
        browser = self._browser
        if browser is not None and not browser.is_connected():
            self._browser = None
            self.restarts += 1
            with contextlib.suppress(PlaywrightError):
                await browser.close()

    async def close(self) -> None:
        browser, self._browser = self._browser, None
        playwright, self._playwright = self._playwright, None
        try:
            if browser is not None:
                await browser.close()
        except PlaywrightError:
            pass
        if playwright is not None:
            await playwright.stop()
