"""The audit: each check on a hand-made request log, then on real crawls of the test web."""

from __future__ import annotations

import asyncio
import re
import ssl
from collections import Counter, deque
from urllib.parse import urldefrag, urljoin, urlsplit

import aiohttp
import pytest

from gossamer.testweb.audit import CLOCK_SLACK, Audit, RequestRecord
from gossamer.testweb.generate import build_web
from gossamer.testweb.model import Kind, RobotsVariant, Role, Web, WebSpec
from gossamer.testweb.server import TestWebServer

from . import SMALL_HOSTS, SMALL_PAGES, ManualClock, loopback_session, robots_allows, robots_delay

CAP = 10_000_000  # the crawler's body cap the large file is meant to exceed


@pytest.fixture(scope="module")
def web() -> Web:
    return build_web(WebSpec(seed=5, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES))


def visit(
    audit: Audit,
    clock: ManualClock,
    host: str,
    target: str,
    *,
    status: int = 200,
    method: str = "GET",
) -> None:
    """One complete request taking 10 ms."""
    ticket = audit.begin(host)
    clock.advance(0.01)
    audit.finish(ticket, target=target, method=method, user_agent="test", status=status)


def fresh(web: Web) -> tuple[Audit, ManualClock]:
    clock = ManualClock()
    audit = Audit(web, clock)
    audit.port = 8000
    return audit, clock


def test_an_empty_log_is_ok(web: Web) -> None:
    report = fresh(web)[0].report(set())
    assert report.ok() and report.requests == 0
    assert report.summary().startswith("audit: OK")


def test_overlapping_requests_to_one_host_are_counted(web: Web) -> None:
    audit, _ = fresh(web)
    first, second = web.hosts[0], web.hosts[1]
    outer = audit.begin(first)
    other_host = audit.begin(second)
    inner = audit.begin(first)
    for ticket in (inner, other_host, outer):
        audit.finish(ticket, target="/", method="GET", user_agent="test", status=200)
    visit(audit, _, first, "/articles/x.html")  # after both finished: fine
    assert audit.report(set()).concurrent_violations == 1


def test_robots_violations_use_the_generators_verdict(web: Web) -> None:
    audit, clock = fresh(web)
    forbidden = [key for key, res in web.resources.items() if res.disallowed]
    host, target = forbidden[0]
    visit(audit, clock, host, target)
    [closed] = web.hosts_with(Role.ROBOTS_ERROR)
    visit(audit, clock, closed, "/robots.txt", status=500)  # reading robots.txt is always fine
    visit(audit, clock, closed, "/anything/at/all.html", status=404)
    visit(audit, clock, web.seed_hosts()[0], "/")
    report = audit.report(set())
    assert report.robots_violations == 2
    assert not report.ok()


def test_crawl_delay_is_measured_between_request_starts(web: Web) -> None:
    audit, clock = fresh(web)
    host = web.hosts_with(Role.CRAWL_DELAY)[0]
    delay = web.crawl_delay(host)
    visit(audit, clock, host, "/robots.txt")  # exempt: the delay is not known before it
    visit(audit, clock, host, "/")
    clock.advance(delay - 0.01 - CLOCK_SLACK / 2)  # within the slack: obeyed
    visit(audit, clock, host, "/a.html")
    clock.advance(delay / 2)  # far too soon
    visit(audit, clock, host, "/b.html")
    assert audit.report(set()).crawl_delay_violations == 1


def test_repeated_fetches_count_only_successful_gets_of_pages(web: Web) -> None:
    audit, clock = fresh(web)
    host = web.seed_hosts()[0]
    for _ in range(3):
        visit(audit, clock, host, "/")
    visit(audit, clock, host, "/busy.html", status=429)
    visit(audit, clock, host, "/busy.html")
    visit(audit, clock, host, "/robots.txt")
    visit(audit, clock, host, "/robots.txt")
    visit(audit, clock, host, "/head.html", method="HEAD")
    visit(audit, clock, host, "/head.html")
    assert audit.report(set()).repeated_fetches == 2


def test_missing_and_unexpected_urls(web: Web) -> None:
    audit, clock = fresh(web)
    expected = web.expected(audit.port)
    got, refused = sorted(expected)[:2]
    for url, status in ((got, 200), (refused, 429)):
        parts = urlsplit(url)
        assert parts.hostname is not None
        visit(audit, clock, parts.hostname, parts.path, status=status)
    [trap] = web.hosts_with(Role.TRAP)
    visit(audit, clock, trap, "/a/a/a/")  # special: never unexpected
    normal = web.seed_hosts()[0]
    visit(audit, clock, normal, "/made/up.html", status=404)
    report = audit.report(expected)
    assert got not in report.missing and refused in report.missing
    assert len(report.missing) == len(expected) - 1
    assert report.unexpected == (web.url(normal, "/made/up.html", audit.port),)
    assert audit.fetched()[0] == got


# Real crawls through the server.


def test_two_overlapping_requests_to_one_host_through_the_server() -> None:
    slow = build_web(
        WebSpec(
            hosts=2, pages_per_host=3, latency=0.2, special_hosts=False, crawl_delay_hosts=False
        )
    )

    async def both_at_once() -> int:
        async with TestWebServer(slow) as server, loopback_session() as session:
            host = slow.hosts[0]
            first, second = (slow.url(host, path, server.port) for path in ("/", "/robots.txt"))
            await asyncio.gather(_read(session, first), _read(session, second))
            return server.audit.report(set()).concurrent_violations

    assert asyncio.run(both_at_once()) == 1


def test_careless_fetches_are_caught(web: Web) -> None:
    clock = ManualClock()
    forbidden = [key for key, res in web.resources.items() if web.is_disallowed(*key)]
    page = web.seeds(0)[0]

    async def careless() -> tuple[int, int, int]:
        async with TestWebServer(web, clock=clock) as server, loopback_session() as session:
            for host, target in forbidden:
                await _read(session, web.url(host, target, server.port))
            for _ in range(2):
                await _read(session, page.replace(":0/", f":{server.port}/"))
            delayed = web.hosts_with(Role.CRAWL_DELAY)[0]
            for _ in range(2):  # back to back on a manual clock that has not moved
                await _read(session, web.url(delayed, "/", server.port))
            report = server.audit.report(set())
        return report.robots_violations, report.repeated_fetches, report.crawl_delay_violations

    robots, repeated, delay = asyncio.run(careless())
    assert robots == len(forbidden) > 10
    assert repeated == 2  # the seed twice, the crawl-delay root twice
    assert delay >= 1


def test_a_polite_complete_crawl_passes(web: Web) -> None:
    clock = ManualClock()

    async def crawl() -> tuple[bool, str, tuple[str, ...]]:
        async with TestWebServer(web, clock=clock) as server:
            await _polite_crawl(web.seeds(server.port), clock)
            report = server.audit.report(web.expected(server.port))
        return report.ok(), report.summary(), report.unexpected

    ok, summary, unexpected = asyncio.run(crawl())
    assert ok, summary
    assert unexpected == ()
    variants = {info.robots for host in web.hosts if (info := web.info(host))}
    assert {RobotsVariant.REDIRECT, RobotsVariant.WILDCARD} <= variants


async def _read(session: aiohttp.ClientSession, url: str) -> int:
    async with session.get(url, allow_redirects=False) as response:
        await response.read()
        return response.status


async def _polite_crawl(
    seeds: list[str], clock: ManualClock, ssl_context: ssl.SSLContext | None = None
) -> None:
    """A sequential reference crawler: robots.txt first, then Crawl-delay and Retry-After
    honoured by moving the manual clock, which is the only clock the server's audit reads.
    Politeness (rules, delay, budget) is kept per host name, whichever origin a URL names."""
    rules: dict[str, str | None] = {}
    last_start: dict[str, float] = {}
    per_host: Counter[str] = Counter()
    queue, seen = deque(seeds), set(seeds)
    headers = {"User-Agent": "gossamer-reference/1.0"}
    async with loopback_session(ssl_context, headers=headers) as session:
        while queue:
            url = queue.popleft()
            parts = urlsplit(url)
            host = parts.hostname or ""
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if host not in rules:
                robots_url = f"{parts.scheme}://{parts.netloc}/robots.txt"
                rules[host] = await _robots(session, robots_url)
            text = rules[host]
            per_host[host] += 1
            if text is None or not robots_allows(text, "gossamer", target) or per_host[host] > 40:
                continue  # the per-host budget is what gets the crawl out of the trap
            if host in last_start:
                clock.now = max(clock.now, last_start[host] + robots_delay(text))
            for link in await _fetch_links(session, url, clock):
                if link not in seen:
                    seen.add(link)
                    queue.append(link)
            last_start[host] = clock.now


async def _robots(session: aiohttp.ClientSession, url: str) -> str | None:
    async with session.get(url) as response:  # follows the robots.txt redirect
        if response.status >= 500:
            return None
        return await response.text() if response.status == 200 else ""


async def _fetch_links(session: aiohttp.ClientSession, url: str, clock: ManualClock) -> list[str]:
    while True:
        async with session.get(url, allow_redirects=False) as response:
            if response.status == 429:
                clock.advance(float(response.headers["Retry-After"]))
                continue
            if response.status in (301, 302):
                return [urljoin(url, response.headers["Location"])]
            if response.content_type != "text/html" or (response.content_length or 0) > CAP:
                response.close()
                return []
            body = await response.read()
        hrefs = re.findall(rb'href="([^"]+)"', body)
        links = (urldefrag(urljoin(url, href.decode("ascii")))[0] for href in hrefs)
        return [link for link in links if link.startswith(("http://", "https://"))]


def test_kinds_checked_here_exist(web: Web) -> None:
    assert web.find(Kind.RETRY) and web.find(Kind.LARGE) and web.find(Kind.REDIRECT)


def test_records_logged_by_another_server_are_judged_by_the_same_rules(web: Web) -> None:
    # As benchmarks/nginx_audit.py hands over an nginx access log: intervals in milliseconds.
    host = web.hosts[0]
    seen = fresh(web)[0]
    seen.port = 8000

    def record(target: str, start: int, end: int) -> RequestRecord:
        return RequestRecord(
            host=host, target=target, method="GET", user_agent="", started=start / 1000,
            ended=end / 1000, status=200, overlapped=False, scheme="http", port=8000,
            start_seq=start, end_seq=end,
        )  # fmt: skip

    records = [record("/", 0, 10), record("/a.html", 10, 20), record("/a.html", 15, 30)]
    report = Audit.of_records(web, 8000, records).report(set())
    assert report.requests == 3
    assert report.concurrent_violations == 1  # the third began before the second ended
    assert report.repeated_fetches == 1
    assert seen.url(records[1]) == f"http://{host}:8000/a.html"
