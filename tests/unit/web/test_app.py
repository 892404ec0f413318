"""The web UI's routes, security headers and escaping, over a real loopback socket."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from gossamer.web import CACHED_POLICY, PAGE_POLICY, make_app
from gossamer.web.links import SANDBOX_ALLOWS

from ..index.fake_crawl import HOSTILE_TITLE, hostile_page

Check = Callable[[TestClient[object, object]], Awaitable[None]]
HOSTILE = hostile_page().url


def run(corpus: Path, check: Check) -> None:
    async def main() -> None:
        async with TestClient(TestServer(make_app(corpus), host="127.0.0.1")) as client:
            await check(client)

    asyncio.run(main())


def no_crawled_markup(page: str) -> None:
    """Our pages hold no script element and no event handler attribute at all."""
    assert "<script" not in page.lower()
    assert not re.search(r"<[^>]+\son\w+\s*=", page, re.IGNORECASE)
    assert "<svg" not in page and "<iframe srcdoc" not in page


def test_search_page_lists_grouped_results(corpus: Path) -> None:
    async def check(client: TestClient[object, object]) -> None:
        home = await client.get("/")
        assert home.status == 200
        assert "Search 8 pages" in await home.text()
        response = await client.get("/search", params={"q": "write ahead"})
        assert response.status == 200
        assert response.headers["Content-Security-Policy"] == PAGE_POLICY
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        page = await response.text()
        assert '<section class="host"><h2>a.test</h2>' in page
        assert "<mark>" in page
        assert "/cached?url=http%3A%2F%2Fa.test%2Fwal" in page
        assert "page info" in page
        styles = await client.get("/style.css")
        assert styles.content_type == "text/css"

    run(corpus, check)


def test_duplicates_and_pagination_links(corpus: Path) -> None:
    async def check(client: TestClient[object, object]) -> None:
        page = await (await client.get("/search", params={"q": "checkpoint"})).text()
        assert "1 other page with the same content" in page
        english = await (
            await client.get("/search", params={"q": "datenbank", "lang": "en"})
        ).text()
        assert "No results" in english
        assert 'name="lang" value="en" checked' in english

    run(corpus, check)


def test_hostile_page_is_escaped_everywhere(corpus: Path) -> None:
    async def check(client: TestClient[object, object]) -> None:
        results = await (await client.get("/search", params={"q": "hostile"})).text()
        assert (
            "&lt;script&gt;window.__pwned = 1&lt;/script&gt;Hostile &amp; &quot;quoted&quot;"
            in results
        )
        no_crawled_markup(results)
        info = await (await client.get("/info", params={"url": HOSTILE, "q": "hostile"})).text()
        no_crawled_markup(info)
        assert HOSTILE_TITLE not in info
        framed = await (await client.get("/cached", params={"url": HOSTILE})).text()
        no_crawled_markup(framed)
        assert f'<iframe class="cached" sandbox="{SANDBOX_ALLOWS}"' in framed
        assert "allow-scripts" not in SANDBOX_ALLOWS and "allow-same-origin" not in SANDBOX_ALLOWS
        raw = await client.get("/cached/raw", params={"url": HOSTILE})
        assert raw.headers["Content-Security-Policy"] == CACHED_POLICY
        assert f"sandbox {SANDBOX_ALLOWS}" in CACHED_POLICY and "script-src" not in CACHED_POLICY
        assert raw.headers["X-Frame-Options"] == "SAMEORIGIN"
        assert "<script>" in await raw.text()  # served as archived: the policy disarms it

    run(corpus, check)


def test_pdf_cached_copy_is_text(corpus: Path) -> None:
    async def check(client: TestClient[object, object]) -> None:
        raw = await client.get("/cached/raw", params={"url": "http://d.test/manual.pdf"})
        body = await raw.text()
        assert raw.content_type == "text/html"
        assert "<pre>" in body and "checkpoint copies pages" in body

    run(corpus, check)


def test_bad_requests_and_missing_pages(corpus: Path) -> None:
    async def check(client: TestClient[object, object]) -> None:
        for params in ({"q": "x", "page": "0"}, {"q": "x", "page": "two"}, {"q": "x" * 1001}):
            response = await client.get("/search", params=params)
            assert response.status == 400
            assert response.headers["Content-Security-Policy"] == PAGE_POLICY
        for path in ("/info", "/cached", "/cached/raw"):
            response = await client.get(path, params={"url": "http://nowhere.test/"})
            assert response.status == 404
        missing = await client.get("/nothing-here")
        assert missing.status == 404
        assert missing.headers["Content-Security-Policy"] == PAGE_POLICY
        info = await (await client.get("/info", params={"url": "http://a.test/wal"})).text()
        assert "Links in" in info and "4 in total" in info

    run(corpus, check)
