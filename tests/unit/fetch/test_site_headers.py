"""The fetcher's ``[[site]]`` hook (``site_for``): a site's User-Agent and headers reach its
server, robots.txt included, and no other site's; recorded as sent."""

from __future__ import annotations

import asyncio
from pathlib import Path

from aiohttp import web

from gossamer.config import CrawlConfig, FetchConfig, SiteConfig
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.sites import SiteRules

from .loopback import serve

LIMITS = FetchLimits(
    connect_timeout=2.0,
    read_timeout=2.0,
    total_timeout=5.0,
    max_body=100_000,
    max_decoded=100_000,
    keep_types=("text/html", "text/plain"),
)
AGENT = "crawlbot/1.0"


async def _seen(tables: tuple[SiteConfig, ...]) -> dict[str, dict[str, str]]:
    """What the server saw of one request per host (path -> its headers)."""
    seen: dict[str, dict[str, str]] = {}

    async def handler(request: web.Request) -> web.Response:
        seen[f"{request.host.partition(':')[0]}{request.path}"] = dict(request.headers)
        return web.Response(text="ok", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    fetch = FetchConfig(user_agent=AGENT)
    config = CrawlConfig(seeds=Path("s"), out=Path("o"), fetch=fetch, sites=tables)
    rules = SiteRules.of(config)
    async with serve(app) as port:
        fetcher = Fetcher(
            user_agent=AGENT,
            limits=LIMITS,
            resolve=(parse_resolve("*.test:127.0.0.1"),),
            allow_private=False,
            connections=4,
            site_for=rules.for_url,
        )
        async with fetcher:
            results = [
                await fetcher.fetch(f"http://shop.example.test:{port}/page"),
                *await fetcher.fetch_robots(f"http://shop.example.test:{port}/robots.txt"),
                await fetcher.fetch(f"http://other.test:{port}/page"),
            ]
    for result in results:
        assert result.status == 200, result
    sent = dict(results[0].request_headers)
    assert sent["User-Agent"] == "shopbot/2.0" and sent["Accept-Language"] == "de"
    return seen


def test_a_sites_agent_and_headers_go_to_it_alone() -> None:
    tables = (
        SiteConfig(match="*.example.test", headers=(("Accept-Language", "de"),)),
        SiteConfig(match="shop.example.test", user_agent="shopbot/2.0"),
    )
    seen = asyncio.run(_seen(tables))
    for path in ("shop.example.test/page", "shop.example.test/robots.txt"):
        assert seen[path]["User-Agent"] == "shopbot/2.0"
        assert seen[path]["Accept-Language"] == "de"
    other = seen["other.test/page"]
    assert other["User-Agent"] == AGENT and "Accept-Language" not in other
