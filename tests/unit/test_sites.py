"""Per-site rules (``gossamer.sites``): which ``[[site]]`` tables apply to a host, most
specific first, key by key; and each table checked at the edge."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gossamer.config import CrawlConfig, FetchConfig, PolitenessConfig, SiteConfig, load_config
from gossamer.errors import ConfigError
from gossamer.sites import SiteRules, site_problem


def rules(*tables: SiteConfig, **crawl: object) -> SiteRules:
    config = CrawlConfig(
        seeds=Path("s"),
        out=Path("o"),
        politeness=PolitenessConfig(delay=1.0, max_per_host=1),
        fetch=FetchConfig(user_agent="crawlbot/2.0 (+https://example.net)"),
        sites=tables,
        **crawl,  # type: ignore[arg-type]
    )
    return SiteRules.of(config)


def test_a_host_no_table_names_keeps_the_crawls_settings() -> None:
    found = rules(SiteConfig(match="*.example.org", delay=5.0)).for_host("example.net")
    assert (found.delay, found.max_per_host, found.max_pages) == (1.0, 1, 10_000)
    assert (found.user_agent, found.product, found.headers) == (
        "crawlbot/2.0 (+https://example.net)",
        "crawlbot",
        (),
    )
    assert found.matched == () and found.proxy is None and found.cookies is None


def test_a_subdomain_glob_does_not_name_the_domain_itself() -> None:
    sites = rules(SiteConfig(match="*.example.org", delay=5.0))
    assert sites.for_host("a.example.org").delay == 5.0
    assert sites.for_host("a.b.example.org").delay == 5.0  # '*' crosses dots
    assert sites.for_host("example.org").delay == 1.0
    assert sites.for_host("badexample.org").delay == 1.0


def test_each_key_comes_from_the_most_specific_table_that_sets_it() -> None:
    sites = rules(
        SiteConfig(match="*", max_pages=50),
        SiteConfig(match="*.example.org", delay=2.0, max_per_host=2, user_agent="orgbot/1"),
        SiteConfig(match="shop.example.org", headers=(("Accept-Language", "de"),)),
        SiteConfig(match="*.shop.example.org", delay=9.0),
    )
    shop = sites.for_host("shop.example.org")
    assert shop.matched == ("shop.example.org", "*.example.org", "*")
    assert (shop.delay, shop.max_per_host, shop.max_pages) == (2.0, 2, 50)
    assert (shop.user_agent, shop.product) == ("orgbot/1", "orgbot")
    assert shop.headers == (("Accept-Language", "de"),)
    deep = sites.for_host("x.shop.example.org")
    assert deep.matched == ("*.shop.example.org", "*.example.org", "*")
    assert deep.delay == 9.0 and deep.headers == ()


def test_equally_specific_globs_go_in_the_order_written() -> None:
    first, second = SiteConfig(match="a*.org", delay=3.0), SiteConfig(match="*a.org", delay=4.0)
    assert rules(first, second).for_host("aa.org").delay == 3.0
    assert rules(second, first).for_host("aa.org").delay == 4.0


def test_hosts_matched_alike_share_one_rule() -> None:
    sites = rules(SiteConfig(match="*.example.org", delay=2.0))
    assert sites.for_host("a.example.org") is sites.for_host("b.example.org")
    assert sites.for_url("https://a.example.org:8443/x?y") is sites.for_host("a.example.org")


def test_robots_txt_is_matched_against_the_sites_own_agent() -> None:
    sites = rules(SiteConfig(match="shop.example.org", user_agent="ShopBot/2 (+https://x.test)"))
    assert sites.product_for("https://shop.example.org/robots.txt") == "shopbot"
    assert sites.product_for("https://shop.example.org") == "shopbot"  # an origin
    assert sites.product_for("https://example.org/robots.txt") == "crawlbot"


_LABEL = st.sampled_from(["a", "b", "ab", "org", "x-y"])
_HOST = st.lists(_LABEL, min_size=1, max_size=4).map(".".join)
_GLOB = st.lists(st.sampled_from(["a", "b", "ab", "org", "*", "*.", ".", "-"]), max_size=5).map(
    "".join
)
_TABLES = st.lists(
    st.builds(
        SiteConfig,
        match=_GLOB.filter(lambda g: site_problem({"match": g}) is None),
        delay=st.none() | st.sampled_from([0.0, 0.5, 2.0]),
        max_per_host=st.none() | st.integers(1, 4),
    ),
    max_size=6,
)


@given(tables=_TABLES, host=_HOST)
def test_most_specific_first_key_by_key(tables: list[SiteConfig], host: str) -> None:
    """Against a plain reading of the rule: of the tables whose glob matches (fnmatch, with
    only ``*``), an exact name first, then more literal characters, then the order written;
    each key from the first that sets it."""
    matching = [(i, t) for i, t in enumerate(tables) if fnmatch.fnmatchcase(host, t.match.lower())]
    matching.sort(key=lambda item: ("*" in item[1].match, -len(item[1].match.replace("*", ""))))
    ordered = [t for _, t in matching]
    found = rules(*tables).for_host(host)
    assert found.matched == tuple(t.match for t in ordered)
    for key, crawls in (("delay", 1.0), ("max_per_host", 1)):
        expected = next((getattr(t, key) for t in ordered if getattr(t, key) is not None), crawls)
        assert getattr(found, key) == expected
    if any("*" not in t.match for t in ordered):
        assert "*" not in found.matched[0]  # an exact host name always comes first


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"match": "*.example.org", "delay": -1.0}, "delay must not be negative"),
        ({"match": "*.example.org", "delay": "soon"}, "invalid duration"),
        ({"match": "example.org:8080"}, "is not a host glob"),
        ({"match": "example..org"}, "is not a host glob"),
        ({"match": "example.org/shop"}, "is not a host glob"),
        ({"match": ""}, "is not a host glob"),
        ({"match": "bücher.de"}, "punycode"),
        ({"delay": 1.0}, "needs a match key"),
        ({"match": "a.org", "speed": 1}, "unknown key 'speed'"),
        ({"match": "a.org", "render": "yes"}, 'render must be true, false or "auto"'),
        ({"match": "a.org", "block": ["pictures"]}, "block names an unknown kind 'pictures'"),
        ({"match": "a.org", "max_per_host": 0}, "max_per_host must be at least 1"),
        ({"match": "a.org", "max_pages": 1.5}, "max_pages must be an integer"),
        ({"match": "a.org", "user_agent": "x\r\nEvil: 1"}, "user_agent must not contain"),
        ({"match": "a.org", "headers": {"Cookie": "a=b"}}, "use the table's cookies key"),
        ({"match": "a.org", "headers": {"X-A": "b\nc"}}, "without control characters"),
        ({"match": "a.org", "headers": {"Bad Name": "b"}}, "bad header name"),
        ({"match": "a.org", "proxy": "socks5://p:1080"}, "only to http:// proxies"),
        ({"match": "a.org", "proxy": "http://u:pw@p:3128"}, "must not hold a password"),
        ({"match": "a.org", "cookies": "/nonexistent/c.txt"}, "names no file"),
    ],
)
def test_a_bad_table_is_named_with_what_is_wrong(table: dict[str, object], said: str) -> None:
    problem = site_problem(table)
    assert problem is not None and said in problem


def test_a_table_is_read_from_toml_with_durations_and_a_cookie_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(
        "# Netscape HTTP Cookie File\n.example.org\tTRUE\t/\tFALSE\t0\tsession\tabc\n",
        encoding="utf-8",
    )
    toml = tmp_path / "c.toml"
    toml.write_text(
        '[[site]]\nmatch = "*.Example.org"\ndelay = "0.5s"\nmax_per_host = 2\n'
        'headers = { Accept-Language = "de" }\nproxy = "http://proxy.test:3128"\n'
        f'cookies = "{cookies.name}"\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)  # a relative cookie file is found from where the command ran
    config = load_config(Path("s"), Path("o"), toml, {})
    (site,) = config.sites
    assert site.delay == 0.5 and site.max_per_host == 2
    assert site.headers == (("Accept-Language", "de"),)
    assert site.cookies == str(cookies)  # made absolute: every process of the crawl finds it
    found = SiteRules.of(config).for_host("www.example.org")  # the glob matches any case
    assert (found.delay, found.proxy, found.cookies) == (
        0.5,
        "http://proxy.test:3128",
        str(cookies),
    )


def test_a_cookie_file_is_checked_as_the_crawls_own(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a cookie file\n", encoding="utf-8")
    problem = site_problem({"match": "a.org", "cookies": str(notes)})
    assert problem is not None and "(a.org) cookies cannot be used" in problem


def test_a_bad_table_in_a_config_file_is_one_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[[site]]\nmatch = "a.org"\n\n[[site]]\nmatch = "*.b.org"\ndelay = -2\n')
    with pytest.raises(ConfigError, match=r"\[\[site\]\] table 2 \(\*\.b\.org\) delay must not"):
        load_config(Path("s"), Path("o"), toml, {})
