"""One page in the real browser: a page that never settles is kept as it stood at the time
limit, and the request it still waited for is cut off with it (none outlives the page, whose
host's slot goes back to the frontier next); a lost browser is started again for the next page.

Needs Debian's ``chromium`` and the ``playwright`` package; skipped with the reason if either
is missing (``make test`` installs both when root).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from gossamer.config import CrawlConfig
from gossamer.crawling.fetching import build_fetcher
from gossamer.fetch import FetchResult
from gossamer.robots import parse_robots
from tests.chromium import require_chromium

CHROMIUM = require_chromium()

from gossamer.render.browser import BrowserPool  # noqa: E402 (after the skip)
from gossamer.render.session import FAILED, RENDERED, UNSETTLED, render_page  # noqa: E402
from gossamer.render.subfetch import PageLimits, ResourceCache, SubFetches  # noqa: E402

LIMITS = PageLimits(delay=0.0, max_requests=10, blocked=frozenset())
RULES = parse_robots(b"", "gossamer")


class Hanging:
    """A loopback server that reads a request and never answers it, until told to stop."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.closed = asyncio.Event()
        self.stop = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        self.asked.set()
        await reader.read(1)  # b"" once the client has given up and closed the connection
        self.closed.set()
        writer.close()


def _page(url: str, html: str) -> FetchResult:
    body = html.encode()
    return FetchResult(
        url=url, status=200, body=body, content=body, content_type="text/html",
        response_headers=(("Content-Type", "text/html; charset=utf-8"),), started_at=0.0,
    )  # fmt: skip


def test_a_page_that_never_settles_is_kept_and_its_request_cut_off(tmp_path: Path) -> None:
    async def scenario() -> None:
        hanging = Hanging()
        server = await asyncio.start_server(hanging.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        config = CrawlConfig(
            seeds=tmp_path / "s", out=tmp_path / "o", resolve=("*.test:127.0.0.1",)
        )
        url = f"http://slow.test:{port}/"
        html = (
            "<html><body><p id=p>before</p><script>"
            "document.getElementById('p').textContent = 'written by the script';"
            "fetch('/never').then(r => r.text());</script></body></html>"
        )
        kept: list[FetchResult] = []
        pool = BrowserPool(size=1, executable=CHROMIUM, memory_mb=256, user_agent="t")
        try:
            async with build_fetcher(config, connections=2) as fetcher:
                subs = SubFetches(
                    _page(url, html), RULES, LIMITS, fetcher=fetcher, keep=kept.append,
                    cache=ResourceCache(), refused=Counter(),
                )  # fmt: skip
                rendering = await render_page(pool, _page(url, html), subs, 1.5)
                assert hanging.asked.is_set()
                # cut off when the page ended, not left to the 30 s read timeout
                await asyncio.wait_for(hanging.closed.wait(), 5.0)
            assert rendering.state == UNSETTLED
            assert rendering.dom is not None and b"written by the script" in rendering.dom

            # a browser lost between pages: the next page starts another
            assert pool._browser is not None
            await pool._browser.close()
            again = SubFetches(
                _page(url, "<p>x</p>"), RULES, LIMITS, fetcher=None,  # type: ignore[arg-type]
                keep=kept.append, cache=ResourceCache(), refused=Counter(),
            )  # fmt: skip
            # a URL the browser spells otherwise (it escapes the spaces): still the page's
            # own document, served from the bytes fetched, not asked for again
            odd = f"http://slow.test:{port}/odd page?q=a b"
            second = await render_page(
                pool, _page(odd, "<p>plain</p>"), again, 5.0, screenshot=True
            )
            assert second.state == RENDERED and b"plain" in (second.dom or b"")
            assert again.fetched == 0
            assert (second.screenshot or b"").startswith(b"\x89PNG\r\n\x1a\n")
            assert pool.restarts == 1
        finally:
            await pool.close()
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())


def test_a_browser_that_cannot_start_fails_the_page_not_the_crawl(tmp_path: Path) -> None:
    async def scenario() -> None:
        pool = BrowserPool(size=1, executable=str(tmp_path / "none"), memory_mb=256, user_agent="t")
        subs = SubFetches(
            _page("http://a.test/", "<p>x</p>"), RULES, LIMITS, fetcher=None,  # type: ignore[arg-type]
            keep=lambda _: None, cache=ResourceCache(), refused=Counter(),
        )  # fmt: skip
        try:
            rendering = await render_page(pool, _page("http://a.test/", "<p>x</p>"), subs, 5.0)
        finally:
            await pool.close()
        assert rendering.state == FAILED and rendering.dom is None

    asyncio.run(scenario())
