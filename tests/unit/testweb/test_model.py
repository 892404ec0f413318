"""The generator: determinism, the expected set, and robots ground truth against robots.txt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.testweb.generate import build_web
from gossamer.testweb.model import (
    EXPECTED_KINDS,
    HTML_KINDS,
    SITEMAP_KINDS,
    Kind,
    RobotsVariant,
    Role,
    Web,
    WebSpec,
)

from . import SMALL_HOSTS, SMALL_PAGES, robots_allows

PORT = 8080


@pytest.fixture(scope="module")
def default_web() -> Web:
    return build_web(WebSpec())


def robots_text(web: Web, host: str) -> str | None:
    """The rules a crawler ends up with: None for a 5xx robots.txt, '' for a 4xx one."""
    robots = web.resource(host, "/robots.txt")
    assert robots is not None
    if robots.kind is Kind.REDIRECT:
        assert robots.target is not None and robots.target.host == host
        robots = web.resource(host, robots.target.path)
        assert robots is not None
    if robots.kind is Kind.ERROR:
        return None if robots.status >= 500 else ""
    return robots.text


def check_ground_truth(web: Web) -> None:
    for (host, target), resource in web.resources.items():
        if web.is_robots(host, target):
            continue
        text = robots_text(web, host)
        allowed = text is not None and robots_allows(text, "gossamer", target)
        assert resource.disallowed is not allowed, (host, target)
        assert web.is_disallowed(host, target) is not allowed, (host, target)


def check_reachability(web: Web) -> None:
    expected = web.expected(PORT)
    for (host, target), resource in web.resources.items():
        info = web.info(host)
        assert info is not None
        if info.role is Role.NORMAL and resource.kind is Kind.PAGE and not resource.disallowed:
            assert web.url(host, target, PORT) in expected


def test_same_seed_gives_the_same_web() -> None:
    first, second = build_web(WebSpec(seed=42)), build_web(WebSpec(seed=42))
    assert first.hosts == second.hosts
    assert dict(first.resources) == dict(second.resources)
    assert [first.info(h) for h in first.hosts] == [second.info(h) for h in second.hosts]
    assert first.expected(PORT) == second.expected(PORT)
    assert first.trap_year == second.trap_year


def test_different_seed_gives_a_different_web() -> None:
    first, second = build_web(WebSpec(seed=1)), build_web(WebSpec(seed=2))
    assert dict(first.resources) != dict(second.resources)
    assert first.expected(PORT) != second.expected(PORT)


def test_default_web_has_every_robots_variant_and_role(default_web: Web) -> None:
    variants = {info.robots for h in default_web.hosts if (info := default_web.info(h))}
    assert variants == set(RobotsVariant)
    assert len(default_web.hosts_with(Role.TRAP)) == 1
    assert len(default_web.hosts_with(Role.ROBOTS_ERROR)) == 1
    delays = [default_web.crawl_delay(h) for h in default_web.hosts_with(Role.CRAWL_DELAY)]
    assert delays and all(0.1 <= d <= 0.3 for d in delays)
    assert all(h.endswith(".web.test") and h.startswith("site-") for h in default_web.hosts)


def test_seeds_are_roots_of_normal_hosts(default_web: Web) -> None:
    seeds = default_web.seeds(PORT)
    assert len(seeds) == 5
    assert all(url.endswith(f":{PORT}/") for url in seeds)
    assert set(seeds) <= default_web.expected(PORT)


def test_every_ordinary_page_is_expected(default_web: Web) -> None:
    check_reachability(default_web)
    assert len(default_web.expected(PORT)) > 16 * 50


def test_expected_set_holds_only_allowed_fetchable_urls(default_web: Web) -> None:
    excluded = set(default_web.hosts_with(Role.TRAP) + default_web.hosts_with(Role.ROBOTS_ERROR))
    for url in default_web.expected(PORT):
        host, _, rest = url.removeprefix("http://").partition(":")
        target = rest[rest.index("/") :]
        resource = default_web.resource(host, target)
        assert resource is not None and resource.kind in EXPECTED_KINDS
        assert host not in excluded
        assert not default_web.is_disallowed(host, target)
        assert not default_web.is_special(host, target)


def test_ground_truth_agrees_with_served_robots_txt(default_web: Web) -> None:
    check_ground_truth(default_web)


def test_disallowed_pages_are_linked_so_careless_crawlers_find_them(default_web: Web) -> None:
    pointed_at = {
        (link.host, link.path)
        for url in default_web.expected(PORT)
        for resource in [default_web.resource(*_split(url))]
        if resource is not None
        for link in resource.links
    }
    pointed_at |= {
        (r.target.host, r.target.path)
        for r in default_web.resources.values()
        if r.kind is Kind.REDIRECT and r.target is not None
    }
    normal = set(default_web.hosts_with(Role.NORMAL))
    forbidden = [
        key
        for key, resource in default_web.resources.items()
        if resource.disallowed and key[0] in normal
    ]
    assert len(forbidden) >= 16
    assert all(key in pointed_at for key in forbidden)


def test_special_urls_are_few_and_all_present(default_web: Web) -> None:
    kinds = {resource.kind for resource in default_web.resources.values()}
    assert kinds == set(Kind) - SITEMAP_KINDS  # sitemaps are opt-in: test_sitemaps.py
    special = [r for r in default_web.resources.values() if r.kind not in (Kind.PAGE, Kind.ROBOTS)]
    assert len(special) < 0.05 * len(default_web.expected(PORT))
    large = default_web.find(Kind.LARGE)
    assert len(large) == 1 and large[0] not in _keys(default_web)
    assert len(default_web.find(Kind.PDF)) == 3
    assert all(key in _keys(default_web) for key in default_web.find(Kind.PDF))


def test_duplicates_share_their_body() -> None:
    web = build_web(WebSpec(hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES))
    copies = [web.resources[key] for key in web.find(Kind.DUPLICATE)]
    assert len(copies) == 3
    assert len({(c.body_key, c.links) for c in copies}) == 1


def test_trap_host_never_ends() -> None:
    web = build_web(WebSpec(hosts=SMALL_HOSTS, pages_per_host=SMALL_PAGES))
    [trap] = web.hosts_with(Role.TRAP)
    root = web.resource(trap, "/")
    assert root is not None
    assert {link.path for link in root.links} == {f"/cal/{web.trap_year}/01", "/a/"}
    december = web.resource(trap, "/cal/2031/12")
    assert december is not None and december.links[0].path == "/cal/2032/01"
    deep = web.resource(trap, "/a/a/a/")
    assert deep is not None and deep.links[0].path == "/a/a/a/a/"
    assert web.resource(trap, "/cal/2031/13") is None
    assert web.is_special(trap, "/a/a/") and not web.is_disallowed(trap, "/a/a/")


def test_without_special_hosts_only_plain_hosts_remain() -> None:
    web = build_web(WebSpec(hosts=6, special_hosts=False, crawl_delay_hosts=False))
    assert web.hosts_with(Role.NORMAL) == web.hosts
    plain = {Kind.PAGE, Kind.ROBOTS, Kind.ERROR, Kind.REDIRECT}  # robots.txt 404 and 301
    assert {resource.kind for resource in web.resources.values()} <= plain
    assert all(k[1] in ("/robots.txt", "/robots-real.txt") for k in web.find(Kind.REDIRECT))
    check_reachability(web)


@pytest.mark.parametrize(
    "spec",
    [WebSpec(hosts=3), WebSpec(pages_per_host=0), WebSpec(seed_hosts=0), WebSpec(latency=-1)],
)
def test_impossible_specs_are_refused(spec: WebSpec) -> None:
    with pytest.raises(ValueError):
        build_web(spec)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    hosts=st.integers(4, 16),
    pages=st.integers(1, 25),
    special=st.booleans(),
)
def test_any_seed_gives_a_consistent_web(seed: int, hosts: int, pages: int, special: bool) -> None:
    web = build_web(WebSpec(seed=seed, hosts=hosts, pages_per_host=pages, special_hosts=special))
    check_reachability(web)
    check_ground_truth(web)
    assert set(web.seeds(PORT)) <= web.expected(PORT)


def _split(url: str) -> tuple[str, str]:
    host, _, rest = url.removeprefix("http://").partition(":")
    return host, rest[rest.index("/") :]


def _keys(web: Web) -> set[tuple[str, str]]:
    return {_split(url) for url in web.expected(PORT)}


def test_html_kinds_are_expected_kinds() -> None:
    assert HTML_KINDS < EXPECTED_KINDS
