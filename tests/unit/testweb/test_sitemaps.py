"""Sitemap hosts: a gzipped sitemap index named in robots.txt, a plain /sitemap.xml found by
guessing, and orphan pages that only those sitemaps reach, checked in the model and on the wire.

The sitemaps are read here with the standard library's ElementTree, not with the crawler's own
parser, so the test web is checked without trusting the code it exists to test."""

from __future__ import annotations

import asyncio
import gzip
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from urllib.parse import urlsplit

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.testweb.generate import build_web
from gossamer.testweb.model import EXPECTED_KINDS, SITEMAP_KINDS, Kind, RobotsVariant, Web, WebSpec
from gossamer.testweb.server import TestWebServer, ThreadedTestWeb
from gossamer.testweb.sitemaps import INDEX_PATH, ORPHANS_PER_HOST, PART_PATHS, PLAIN_PATH, lastmod

from . import (
    SMALL_HOSTS,
    SMALL_PAGES,
    ManualClock,
    loopback_session,
    robots_allows,
    robots_delay,
)
from .test_audit import _polite_crawl
from .test_model import check_ground_truth, check_reachability

SPEC = WebSpec(
    seed=5, hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES, sitemap_hosts=1, guessed_sitemap_hosts=1
)
PORT = 8080


@pytest.fixture(scope="module")
def web() -> Web:
    return build_web(SPEC)


@pytest.fixture(scope="module")
def site(web: Web) -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(web) as running:
        yield running


def hosts_by_root(web: Web) -> tuple[str, str]:
    """The announced host and the guessed one of a web with one of each."""
    roots = web.sitemap_roots()
    [announced] = [host for host, path in roots.items() if path == INDEX_PATH]
    [guessed] = [host for host, path in roots.items() if path == PLAIN_PATH]
    return announced, guessed


def links_of(web: Web) -> set[tuple[str, str]]:
    """Every (host, path) any page or redirect points at."""
    pointed = {
        (link.host, link.path)
        for res in web.resources.values()
        if res.kind not in SITEMAP_KINDS and res.kind is not Kind.ROBOTS
        for link in res.links
    }
    return pointed | {
        (res.target.host, res.target.path) for res in web.resources.values() if res.target
    }


def entries(xml: bytes) -> tuple[str, list[tuple[str, str | None]]]:
    """Root element's local name and each entry's (loc, lastmod)."""
    root = ET.fromstring(xml)
    found = []
    for entry in root:
        fields = {child.tag.rpartition("}")[2]: (child.text or "").strip() for child in entry}
        found.append((fields["loc"], fields.get("lastmod")))
    return root.tag.rpartition("}")[2], found


def split(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.path + (f"?{parts.query}" if parts.query else "")


# The generator.


def test_sitemaps_are_off_by_default() -> None:
    web = build_web(WebSpec(hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES))
    assert web.sitemap_roots() == {} and web.orphans(PORT) == set()
    assert not any(res.kind in SITEMAP_KINDS for res in web.resources.values())
    assert all(res.kind is not Kind.ROBOTS or not res.links for res in web.resources.values())


def test_a_web_with_sitemaps_is_the_same_web_plus_sitemaps_and_orphans(web: Web) -> None:
    plain = build_web(replace(SPEC, sitemap_hosts=0, guessed_sitemap_hosts=0))
    announced, guessed = hosts_by_root(web)
    changed = {key for key, res in plain.resources.items() if web.resources[key] != res}
    assert changed == {(announced, "/robots.txt")}
    assert plain.trap_year == web.trap_year
    assert plain.expected(PORT) == web.expected(PORT) - web.orphans(PORT)
    added = web.resources.keys() - plain.resources.keys()
    assert {key for key in added if web.resources[key].kind in SITEMAP_KINDS} == {
        (announced, INDEX_PATH),
        *((announced, path) for path in PART_PATHS),
        (guessed, PLAIN_PATH),
    }
    assert {web.url(*key, PORT) for key in added if web.resources[key].kind is Kind.PAGE} == (
        web.orphans(PORT)
    )


def test_orphans_are_linked_from_nowhere_and_listed_in_a_sitemap(web: Web) -> None:
    orphans = {split(url) for url in web.orphans(PORT)}
    assert len(orphans) == ORPHANS_PER_HOST * 2
    assert {host for host, _ in orphans} == set(web.sitemap_roots())
    assert not orphans & links_of(web)
    listed = {
        (link.host, link.path)
        for res in web.resources.values()
        if res.kind is Kind.SITEMAP
        for link in res.links
    }
    assert orphans <= listed
    for host in web.sitemap_roots():  # every page of the host, robots.txt's verdict aside
        pages = {key for key, res in web.resources.items() if key[0] == host}
        assert {key for key in pages if web.resources[key].kind in EXPECTED_KINDS} == {
            key for key in listed if key[0] == host
        }


def test_guessed_host_prefers_one_without_robots_txt(web: Web) -> None:
    announced, guessed = hosts_by_root(web)
    info, other = web.info(guessed), web.info(announced)
    assert info is not None and info.robots is RobotsVariant.MISSING
    assert other is not None and other.robots is not RobotsVariant.MISSING
    assert announced not in web.seed_hosts()


def test_every_host_with_a_robots_file_can_announce() -> None:
    web = build_web(WebSpec(seed=2, sitemap_hosts=15, guessed_sitemap_hosts=1))
    variants = {info.robots for host in web.sitemap_roots() if (info := web.info(host))}
    assert {RobotsVariant.REDIRECT, RobotsVariant.WILDCARD, RobotsVariant.MISSING} <= variants
    [moved] = [
        h for h in web.sitemap_roots() if (i := web.info(h)) and i.robots.value == "redirect"
    ]
    real = web.resource(moved, "/robots-real.txt")
    assert real is not None and [link.path for link in real.links] == [INDEX_PATH]
    check_ground_truth(web)
    check_reachability(web)


@pytest.mark.parametrize(
    "spec",
    [
        WebSpec(sitemap_hosts=-1),
        WebSpec(guessed_sitemap_hosts=-1),
        WebSpec(sitemap_hosts=16),  # 16 normal hosts, one without robots.txt
        WebSpec(sitemap_hosts=15, guessed_sitemap_hosts=2),
        WebSpec(aliases=True, sitemap_hosts=15),  # the alias host never gets a sitemap
    ],
)
def test_impossible_sitemap_specs_are_refused(spec: WebSpec) -> None:
    with pytest.raises(ValueError, match="sitemap"):
        build_web(spec)


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    hosts=st.integers(5, 14),
    pages=st.integers(1, 12),
    special=st.booleans(),
    counts=st.tuples(st.integers(0, 2), st.integers(0, 2)),
)
def test_any_seed_gives_a_consistent_sitemap_web(
    seed: int, hosts: int, pages: int, special: bool, counts: tuple[int, int]
) -> None:
    announced, guessed = counts
    spec = WebSpec(seed=seed, hosts=hosts, pages_per_host=pages, special_hosts=special)
    try:
        web = build_web(replace(spec, sitemap_hosts=announced, guessed_sitemap_hosts=guessed))
    except ValueError:  # too few normal hosts for the sitemaps asked for
        return
    check_reachability(web)
    check_ground_truth(web)
    assert len(web.sitemap_roots()) == announced + guessed
    assert len(web.orphans(PORT)) == ORPHANS_PER_HOST * (announced + guessed)
    assert web.orphans(PORT) <= web.expected(PORT)
    assert build_web(spec).expected(PORT) == web.expected(PORT) - web.orphans(PORT)


# The server.


async def fetch(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    async with (
        loopback_session(auto_decompress=False) as session,
        session.get(url, allow_redirects=False, headers=headers) as response,
    ):
        return response.status, dict(response.headers), await response.read()


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    return asyncio.run(fetch(url, **headers))


def test_robots_txt_announces_the_gzipped_index(site: ThreadedTestWeb) -> None:
    announced, guessed = hosts_by_root(site.web)
    status, _, body = get(site.url(announced, "/robots.txt"))
    assert status == 200
    assert re.findall(rb"(?m)^Sitemap: (\S+)$", body) == [site.url(announced, INDEX_PATH).encode()]
    assert body.startswith(b"# Keep crawlers out") or body.startswith(b"User-agent:")
    guessed_robots = get(site.url(guessed, "/robots.txt"))
    assert guessed_robots[0] == 404 and b"Sitemap:" not in guessed_robots[2]
    plain_host = next(h for h in site.web.seed_hosts() if h not in site.web.sitemap_roots())
    assert b"Sitemap:" not in get(site.url(plain_host, "/robots.txt"))[2]


def test_index_and_parts_are_gzip_files_listing_every_page(site: ThreadedTestWeb) -> None:
    web, (announced, _) = site.web, hosts_by_root(site.web)
    status, headers, body = get(site.url(announced, INDEX_PATH), **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Type"] == "application/gzip"
    assert "Content-Encoding" not in headers and body[:2] == b"\x1f\x8b"
    root, parts = entries(gzip.decompress(body))
    assert root == "sitemapindex"
    assert [loc for loc, _ in parts] == [site.url(announced, path) for path in PART_PATHS]
    listed: list[tuple[str, str | None]] = []
    for part_url, _ in parts:
        status, headers, body = get(part_url)
        assert status == 200 and headers["Content-Type"] == "application/gzip"
        root, found = entries(gzip.decompress(body))
        assert root == "urlset" and found
        listed += found
    pages = {key for key, res in web.resources.items() if res.kind in EXPECTED_KINDS}
    assert {split(loc) for loc, _ in listed} == {key for key in pages if key[0] == announced}
    assert all(mod == lastmod(SPEC.seed, *split(loc)) for loc, mod in listed)
    assert all(
        re.fullmatch(r"\d{4}-\d\d-\d\d(T\d\d:\d\d:00\+00:00)?", mod or "") for _, mod in listed
    )


def test_guessed_host_serves_a_plain_sitemap_xml(site: ThreadedTestWeb) -> None:
    _, guessed = hosts_by_root(site.web)
    status, headers, body = get(site.url(guessed, PLAIN_PATH))
    assert status == 200 and headers["Content-Type"].startswith("application/xml")
    root, found = entries(body)
    assert root == "urlset" and body.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    assert {site.url(*split(url)) for url in site.orphans() if split(url)[0] == guessed} <= {
        loc for loc, _ in found
    }
    assert get(site.url(guessed, INDEX_PATH))[0] == 404


def test_hosts_without_sitemaps_answer_404(site: ThreadedTestWeb) -> None:
    plain_host = next(h for h in site.web.seed_hosts() if h not in site.web.sitemap_roots())
    assert get(site.url(plain_host, PLAIN_PATH))[0] == 404
    assert get(site.url(plain_host, INDEX_PATH))[0] == 404


def test_orphans_answer_200_and_no_served_page_links_them(site: ThreadedTestWeb) -> None:
    orphans = site.orphans()
    assert orphans and orphans <= site.expected()
    for url in orphans:
        status, headers, body = get(url)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
    orphan_paths = [split(orphan)[1].encode() for orphan in orphans]
    for url in site.expected() - orphans:
        body = get(url)[2]
        assert not any(path in body for path in orphan_paths), url


def test_sitemap_requests_are_special_not_unexpected(site: ThreadedTestWeb) -> None:
    for host, path in site.web.sitemap_roots().items():
        assert site.web.is_special(host, path) and not site.web.is_disallowed(host, path)
    for path in PART_PATHS:
        host = hosts_by_root(site.web)[0]
        assert site.web.is_special(host, path) and not site.web.is_disallowed(host, path)


# A crawl: links alone miss exactly the orphans; links and sitemaps together pass the audit.


async def _read_sitemaps(
    session: aiohttp.ClientSession, web: Web, port: int, clock: ManualClock
) -> list[str]:
    """What a sitemap-reading crawler adds: robots.txt Sitemap lines, else a guessed
    /sitemap.xml where robots.txt allows it, each index followed to its sitemaps. The clock
    moves on by the host's Crawl-delay after each sitemap, as the crawl's own fetches do."""
    pending: list[str] = []
    delays: dict[str, float] = {}
    for host in web.hosts:
        async with session.get(web.url(host, "/robots.txt", port)) as response:
            if response.status >= 500:
                continue
            text = await response.text() if response.status == 200 else ""
        delays[host] = robots_delay(text)
        named = re.findall(r"(?m)^Sitemap: (\S+)$", text)
        if not named and robots_allows(text, "gossamer", PLAIN_PATH):
            named = [web.url(host, PLAIN_PATH, port)]
        pending += named
    urls = []
    while pending:
        url = pending.pop(0)
        async with session.get(url) as response:
            clock.advance(delays[split(url)[0]])
            if response.status != 200:
                continue
            body = await response.read()
        root, found = entries(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)
        (pending if root == "sitemapindex" else urls).extend(loc for loc, _ in found)
    return urls


@pytest.mark.parametrize("reads_sitemaps", [False, True])
def test_only_a_crawler_that_reads_sitemaps_finds_the_orphans(
    web: Web, reads_sitemaps: bool
) -> None:
    clock = ManualClock()

    async def crawl() -> tuple[tuple[str, ...], bool, str, set[str], tuple[str, ...]]:
        async with TestWebServer(web, clock=clock) as server:
            extra: list[str] = []
            if reads_sitemaps:
                async with loopback_session() as session:
                    extra = await _read_sitemaps(session, web, server.port, clock)
            await _polite_crawl(web.seeds(server.port) + extra, clock)
            report = server.audit.report(web.expected(server.port))
        orphans = web.orphans(server.port)
        return report.missing, report.ok(), report.summary(), orphans, report.unexpected

    missing, ok, summary, orphans, unexpected = asyncio.run(crawl())
    if reads_sitemaps:
        assert ok, summary
        assert unexpected == ()  # guessing /sitemap.xml on any host is fair
    else:
        assert set(missing) == orphans and len(orphans) == ORPHANS_PER_HOST * 2
