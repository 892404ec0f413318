"""The alias host: one host whose pages link to it over a second http port and https, with a
Crawl-delay judged per host name across its origins, and the expected set that follows."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.testweb.audit import CLOCK_SLACK, Audit
from gossamer.testweb.generate import ALIAS_DELAY, build_web
from gossamer.testweb.model import Kind, RobotsVariant, Role, Web, WebSpec
from gossamer.testweb.origins import Origins, Via
from gossamer.testweb.server import TestWebServer, ThreadedTestWeb
from gossamer.testweb.tls import WebCertificates, make_certificates
from gossamer.urls.canonical import canonicalize

from . import SMALL_HOSTS, SMALL_PAGES, ManualClock, RawConnection, loopback_session, robots_delay
from .test_audit import _polite_crawl
from .test_model import check_ground_truth

SPEC = WebSpec(seed=11, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES, aliases=True)
ORIGINS = Origins(8080, (8081,), 8443)


@pytest.fixture(scope="module")
def web() -> Web:
    return build_web(SPEC)


@pytest.fixture(scope="module")
def alias(web: Web) -> str:
    [host] = web.aliased_hosts()
    return host


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> WebCertificates:
    return make_certificates(tmp_path_factory.mktemp("tls"))


def origins_of(urls: set[str], host: str) -> set[tuple[str, int]]:
    found = set()
    for url in urls:
        parts = urlsplit(url)
        if parts.hostname == host and parts.port is not None:
            found.add((parts.scheme, parts.port))
    return found


# The generator.


def test_the_alias_host_is_a_normal_host_with_a_crawl_delay(web: Web, alias: str) -> None:
    info = web.info(alias)
    assert info is not None and info.aliased
    assert info.role is Role.NORMAL and info.robots is RobotsVariant.CRAWL_DELAY
    assert web.crawl_delay(alias) == ALIAS_DELAY == 0.2
    robots = web.resource(alias, "/robots.txt")
    assert robots is not None and robots_delay(robots.text) == ALIAS_DELAY
    assert web.hosts_with(Role.ROBOTS_ERROR)
    root = web.resource(alias, "/")
    assert root is not None
    assert {link.via for link in root.links if link.host == alias} >= {Via.SECOND, Via.TLS}
    [closed] = web.hosts_with(Role.ROBOTS_ERROR)
    assert any(link.host == closed and link.via is Via.TLS for link in root.links)


def test_own_links_of_the_alias_host_take_every_form(web: Web, alias: str) -> None:
    forms = {
        (link.relative, link.via)
        for (host, _), resource in web.resources.items()
        if host == alias
        for link in resource.links
        if link.host == alias
    }
    assert forms == {(True, Via.MAIN), (False, Via.MAIN), (False, Via.SECOND), (False, Via.TLS)}


def test_a_robots_5xx_host_exists_even_without_special_hosts() -> None:
    bare = build_web(WebSpec(hosts=4, special_hosts=False, crawl_delay_hosts=False, aliases=True))
    assert len(bare.hosts_with(Role.ROBOTS_ERROR)) == 1
    assert len(bare.aliased_hosts()) == 1 and not bare.hosts_with(Role.TRAP)
    check_ground_truth(bare)


def test_without_the_flag_nothing_changes() -> None:
    for spec in (WebSpec(), WebSpec(seed=5, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES)):
        plain = build_web(spec)
        assert not plain.aliased_hosts()
        assert all(link.via is Via.MAIN for r in plain.resources.values() for link in r.links)
        assert plain.expected(ORIGINS) == plain.expected(ORIGINS.http)
        assert plain.host_with_robots(RobotsVariant.CRAWL_DELAY) in plain.hosts_with(
            Role.CRAWL_DELAY
        )


def test_expected_holds_the_alias_pages_on_every_origin(web: Web, alias: str) -> None:
    expected = web.expected(ORIGINS)
    assert origins_of(expected, alias) == set(ORIGINS.all())
    for scheme, port in ORIGINS.all():
        assert web.url(alias, "/", port, scheme) in expected
    for host in web.hosts:  # every other host on the main port only
        if host != alias:
            assert origins_of(expected, host) <= {("http", ORIGINS.http)}
    # Which origins a page is expected on follows the links; the robots verdict never varies.
    paths = {urlsplit(url).path for url in expected if urlsplit(url).hostname == alias}
    assert all(not web.is_disallowed(alias, path) for path in paths)
    allowed = {
        target
        for (host, target), resource in web.resources.items()
        if host == alias and resource.kind is Kind.PAGE and not resource.disallowed
    }
    assert allowed <= paths


def test_a_single_port_server_collapses_the_origins(web: Web, alias: str) -> None:
    single = web.expected(ORIGINS.http)
    assert origins_of(single, alias) == {("http", ORIGINS.http)}
    full = web.expected(ORIGINS)
    assert len(single) < len(full)
    assert {urlsplit(u).path for u in single} == {urlsplit(u).path for u in full}
    assert web.seeds(ORIGINS) == web.seeds(ORIGINS.http)


def test_expected_urls_are_already_in_the_crawlers_canonical_form(web: Web) -> None:
    # The audit compares URLs as strings, so they must be what the crawler writes down,
    # default ports (never bound in tests, but possible by hand) included.
    for origins in (ORIGINS, Origins(80, (8081,), 443)):
        urls = web.expected(origins) | set(web.seeds(origins))
        assert all(canonicalize(url) == url for url in urls)
    assert web.seeds(Origins(80))[0].endswith(".web.test/")


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), hosts=st.integers(4, 14), pages=st.integers(1, 12))
def test_any_seed_gives_a_consistent_aliased_web(seed: int, hosts: int, pages: int) -> None:
    web = build_web(WebSpec(seed=seed, hosts=hosts, pages_per_host=pages, aliases=True))
    [alias] = web.aliased_hosts()
    check_ground_truth(web)
    expected = web.expected(ORIGINS)
    assert set(web.seeds(ORIGINS)) <= expected
    assert origins_of(expected, alias) == set(ORIGINS.all())


# The audit: Crawl-delay per host name across origins.


def test_crawl_delay_is_judged_across_the_origins_of_one_host(web: Web, alias: str) -> None:
    clock = ManualClock()
    audit = Audit(web, clock)
    audit.port = ORIGINS.http

    def visit(target: str, scheme: str, port: int, gap: float) -> None:
        clock.advance(gap)
        ticket = audit.begin(alias, scheme=scheme, port=port)
        audit.finish(ticket, target=target, method="GET", user_agent="t", status=200)

    (_, main), (_, second), (_, tls) = ORIGINS.all()
    visit("/", "http", main, 0)
    visit("/robots.txt", "https", tls, 0.01)  # robots.txt on another origin: exempt
    visit("/", "https", tls, ALIAS_DELAY - CLOCK_SLACK / 2)  # the delay kept, across origins
    visit("/", "http", second, ALIAS_DELAY / 2)  # too soon, though on another origin
    report = audit.report(set())
    assert report.crawl_delay_violations == 1
    assert report.repeated_fetches == 0  # one path, three URLs


# The server with an extra http port and https.


@pytest.fixture
def site(web: Web, certs: WebCertificates) -> Iterator[ThreadedTestWeb]:
    clock = ManualClock()
    with ThreadedTestWeb(
        web, extra_ports=[0], ssl_context=certs.server_context, clock=clock
    ) as running:
        yield running


def test_alias_pages_link_over_every_origin(site: ThreadedTestWeb, alias: str) -> None:
    connection = RawConnection(alias, site.port)
    body = connection.get("/")[1].decode()
    connection.close()
    hrefs = set(re.findall(r'href="([^"]+)"', body))
    assert site.url(alias, "/", Via.SECOND) in hrefs and site.url(alias, "/", Via.TLS) in hrefs
    [closed] = site.web.hosts_with(Role.ROBOTS_ERROR)
    assert site.url(closed, "/", Via.TLS) in hrefs
    assert site.origins.https is not None
    assert f"https://{alias}:{site.origins.https}/" in hrefs


def test_every_expected_url_answers_200_on_its_origin(
    site: ThreadedTestWeb, certs: WebCertificates
) -> None:
    expected = site.expected()

    async def check_all() -> set[str]:
        async with loopback_session(certs.client_context()) as session:

            async def one(url: str) -> tuple[str, int]:
                async with session.get(url, allow_redirects=False) as response:
                    await response.read()
                    return url, response.status

            results = await asyncio.gather(*(one(url) for url in sorted(expected)))
        return {url for url, status in results if status == 200}

    answered = asyncio.run(check_all())
    retry = {site.web.url(h, t, site.port) for h, t in site.web.find(Kind.RETRY)}
    assert answered | retry >= expected  # the Retry-After page answers 429 first
    assert site.audit.report(expected).unexpected == ()


def test_a_polite_crawl_over_every_origin_passes(
    web: Web, alias: str, certs: WebCertificates
) -> None:
    clock = ManualClock()

    async def crawl() -> tuple[bool, str, tuple[str, ...], set[str]]:
        server = TestWebServer(web, extra_ports=[0], ssl_context=certs.server_context, clock=clock)
        async with server:
            await _polite_crawl(web.seeds(server.origins), clock, certs.client_context())
            report = server.audit.report(web.expected(server.origins))
            fetched = set(server.audit.fetched())
        return report.ok(), report.summary(), report.unexpected, fetched

    ok, summary, unexpected, fetched = asyncio.run(crawl())
    assert ok, summary
    assert unexpected == ()
    assert {urlsplit(url).scheme for url in fetched if alias in url} == {"http", "https"}
    assert len({urlsplit(url).port for url in fetched if alias in url}) == 3


def test_an_impolite_crawl_over_origins_is_caught(
    site: ThreadedTestWeb, certs: WebCertificates, alias: str
) -> None:
    # Back to back on a clock that never moves: each origin is its own URL (no repeat), but
    # the host name's Crawl-delay is broken twice; the same URL again is a repeat.
    for via in (Via.MAIN, Via.SECOND, Via.TLS, Via.MAIN):
        scheme, port = site.origins.resolve(via)
        connection = RawConnection(
            alias, port, certs.client_context() if scheme == "https" else None
        )
        assert connection.get("/")[0] == 200
        connection.close()
    report = site.report()
    assert report.crawl_delay_violations == 3
    assert report.repeated_fetches == 1
    assert report.concurrent_violations == 0
