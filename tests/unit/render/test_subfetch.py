"""What a rendered page's own requests may be: refused by kind, origin, robots.txt, method and
count before anything is sent; fetched by the crawl's fetcher otherwise, whose SSRF guard
holds for them as for any page; asked once per process."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig
from gossamer.crawling.fetching import build_fetcher
from gossamer.fetch import FetchResult
from gossamer.render.subfetch import PageLimits, ResourceCache, SubFetches
from gossamer.robots import parse_robots

PAGE = FetchResult(url="http://app.test/p/1.html", status=200, started_at=0.0)
RULES = parse_robots(b"User-agent: *\nDisallow: /api/secret\n", "gossamer")
LIMITS = PageLimits(delay=0.0, max_requests=2, blocked=frozenset({"image", "font"}))


def subs(rules: object = RULES, page: FetchResult = PAGE) -> SubFetches:
    return SubFetches(
        page, rules, LIMITS, fetcher=None, keep=lambda _: None, cache=ResourceCache(),  # type: ignore[arg-type]
        refused=Counter(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("url", "kind", "method", "why"),
    [
        ("http://app.test/static/app.js", "script", "GET", None),
        ("http://app.test/api/page?path=/", "fetch", "GET", None),
        ("http://app.test/logo.png", "image", "GET", "blocked"),
        ("http://app.test/f.woff2", "font", "GET", "blocked"),
        ("http://cdn.test/app.js", "script", "GET", "offsite"),
        ("https://app.test/app.js", "script", "GET", "offsite"),  # another origin of the host
        ("http://app.test:8080/app.js", "script", "GET", "offsite"),
        ("http://127.0.0.1/private.json", "fetch", "GET", "offsite"),
        ("data:text/plain,hi", "fetch", "GET", "offsite"),
        ("http://app.test/api/secret", "fetch", "GET", "robots"),
        ("http://app.test/api/page", "fetch", "POST", "method"),
    ],
)
def test_a_request_is_refused_for_one_reason(
    url: str, kind: str, method: str, why: str | None
) -> None:
    assert subs().refusal(url, kind, method) == why


def test_unknown_rules_refuse_every_request_of_the_page() -> None:
    assert subs(rules=None).refusal("http://app.test/static/app.js", "script", "GET") == "robots"


class _Counting:
    """A loopback TCP server that counts the connections made to it."""

    def __init__(self) -> None:
        self.connections = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        await reader.read(65536)
        body = b"console.log('hi')"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/javascript\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)  # fmt: skip
        await writer.drain()
        writer.close()


def _run_fetches(
    tmp_path: Path, page_host: str, resolve: tuple[str, ...]
) -> tuple[list[FetchResult | None], list[FetchResult], Counter[str], int]:
    async def scenario() -> tuple[list[FetchResult | None], list[FetchResult], Counter[str], int]:
        counting = _Counting()
        server = await asyncio.start_server(counting.handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        config = CrawlConfig(seeds=tmp_path / "s", out=tmp_path / "o", resolve=resolve)
        page = FetchResult(url=f"http://{page_host}:{port}/", status=200, started_at=0.0)
        kept: list[FetchResult] = []
        refused: Counter[str] = Counter()
        async with build_fetcher(config, connections=4) as fetcher:
            fetches = SubFetches(
                page, RULES, LIMITS, fetcher=fetcher, keep=kept.append, cache=ResourceCache(),
                refused=refused,
            )  # fmt: skip
            url = f"http://{page_host}:{port}/static/app.js"
            answers = [
                await fetches.fetch(url, "script"),
                await fetches.fetch(url, "script"),  # the cache's
                await fetches.fetch(f"http://{page_host}:{port}/a.js", "script"),
                await fetches.fetch(f"http://{page_host}:{port}/b.js", "script"),  # over 2
            ]
        server.close()
        await server.wait_closed()
        return answers, kept, refused, counting.connections

    return asyncio.run(scenario())


def test_requests_go_through_the_fetcher_once_each_up_to_the_limit(tmp_path: Path) -> None:
    answers, kept, refused, connections = _run_fetches(
        tmp_path, "app.web.test", ("*.web.test:127.0.0.1",)
    )
    first, again, other, over = answers
    assert first is not None and first.status == 200 and first.content == b"console.log('hi')"
    assert again is first  # from the cache: no second request
    assert other is not None and other.status == 200
    assert over is None and refused == Counter({"over_limit": 1})
    assert [result.url for result in kept] == [first.url, other.url]  # each archived once
    assert connections == 2


def test_the_ssrf_guard_holds_for_a_page_s_own_requests(tmp_path: Path) -> None:
    # "localhost" is named by no --resolve entry: its private address is refused after DNS,
    # for the page's own requests as for any fetch, and nothing reaches the server.
    answers, kept, _, connections = _run_fetches(tmp_path, "localhost", ())
    assert all(answer is not None and answer.error == "blocked_address" for answer in answers[:1])
    assert kept and all(result.error == "blocked_address" for result in kept)
    assert connections == 0
