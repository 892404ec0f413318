"""Which proxy a request goes through: the environment read as curl reads it, --proxy over it,
a site's proxy over both, and a proxy's password never in what is stored or shown."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.errors import ConfigError
from gossamer.fetch.proxy import (
    PASSWORD_ENV,
    NoProxy,
    Proxies,
    proxy_problem,
    redacted,
    split_password,
)

PROXY = "http://proxy.corp:3128"


def test_the_environment_gives_a_proxy_per_target_scheme() -> None:
    proxies = Proxies.of(None, {"http_proxy": PROXY, "HTTPS_PROXY": "http://tls.corp:8080"})
    assert proxies.for_url("http://example.org/") == PROXY
    assert proxies.for_url("https://example.org/") == "http://tls.corp:8080"


def test_the_lower_case_name_wins_and_all_proxy_is_the_fallback() -> None:
    env = {"http_proxy": PROXY, "HTTP_PROXY": "http://upper:1", "ALL_PROXY": "http://all:2"}
    proxies = Proxies.of(None, env)
    assert proxies.for_url("http://example.org/") == PROXY
    assert proxies.for_url("https://example.org/") == "http://all:2"


def test_upper_case_http_proxy_is_ignored_under_cgi() -> None:
    """httpoxy: a CGI request's Proxy header arrives as HTTP_PROXY."""
    env = {"HTTP_PROXY": "http://attacker:1", "REQUEST_METHOD": "GET"}
    assert Proxies.of(None, env).for_url("http://example.org/") is None
    assert Proxies.of(None, {"HTTP_PROXY": PROXY}).for_url("http://example.org/") == PROXY


def test_no_proxy_names_match_themselves_and_their_subdomains() -> None:
    env = {"http_proxy": PROXY, "no_proxy": ".internal.example, localhost,10.0.0.0/8 ,[::1]"}
    proxies = Proxies.of(None, env)
    direct = [
        "http://internal.example/",
        "http://a.internal.example:8080/x",
        "http://localhost:9/",
        "http://10.1.2.3/",
        "http://[::1]:80/",
    ]
    assert [proxies.for_url(url) for url in direct] == [None] * len(direct)
    for url in ("http://notinternal.example/", "http://11.0.0.1/", "http://localhost.evil/"):
        assert proxies.for_url(url) == PROXY


def test_a_star_in_no_proxy_turns_the_environment_proxy_off() -> None:
    assert Proxies.of(None, {"http_proxy": PROXY, "NO_PROXY": "*"}).for_url("http://a/") is None


def test_the_configured_proxy_replaces_the_environment_and_keeps_no_proxy() -> None:
    env = {"http_proxy": "http://other:1", "no_proxy": "local.test"}
    proxies = Proxies.of("http://mine:3128", env)
    assert proxies.for_url("https://example.org/") == "http://mine:3128"
    assert proxies.for_url("http://www.local.test/") is None


def test_none_turns_every_proxy_off() -> None:
    proxies = Proxies.of("none", {"http_proxy": PROXY, "https_proxy": PROXY})
    assert proxies.for_url("http://a/") is None
    assert proxies.for_url("https://a/") is None


def test_a_sites_proxy_wins_over_no_proxy_and_none_sends_it_direct() -> None:
    proxies = Proxies.of(None, {"http_proxy": PROXY, "no_proxy": "shop.test"})
    assert proxies.for_url("http://shop.test/", site="http://site:1") == "http://site:1"
    assert proxies.for_url("http://example.org/", site="none") is None


def test_a_configured_user_takes_the_password_from_the_environment() -> None:
    proxies = Proxies.of("http://alice@proxy.corp:3128", {PASSWORD_ENV: "s3cret"})
    assert proxies.for_url("http://example.org/") == "http://alice:s3cret@proxy.corp:3128"


def test_a_configured_user_without_a_password_is_refused_in_one_message() -> None:
    with pytest.raises(ConfigError, match=PASSWORD_ENV):
        Proxies.of("http://alice@proxy.corp:3128", {})


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("socks5://proxy:1080", "only to http:// proxies"),
        ("https://proxy:443", "only to http:// proxies"),
        ("http://", "names no proxy host"),
        ("http://proxy:3128/path", "without a path"),
        ("http://proxy:99999", "is not a proxy URL"),
        ("http://a:b@proxy:3128", "must not hold a password"),
    ],
)
def test_unusable_proxy_urls_are_refused(value: str, problem: str) -> None:
    found = proxy_problem(value)
    assert found is not None and problem in found
    assert "b@" not in found


@pytest.mark.parametrize("value", ["none", "NONE", "http://proxy:3128", "proxy:3128", "[::1]:3"])
def test_usable_proxy_values(value: str) -> None:
    assert proxy_problem(value) is None


def test_an_unusable_environment_proxy_is_refused_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match="https_proxy") as raised:
        Proxies.of(None, {"HTTPS_PROXY": "socks5://u:hidden@proxy:1080"})
    assert "hidden" not in str(raised.value)


def test_a_password_is_split_off_and_hidden() -> None:
    assert split_password("http://alice:s3cret@proxy:3128") == ("http://alice@proxy:3128", "s3cret")
    assert split_password("http://proxy:3128") == ("http://proxy:3128", None)
    assert redacted("http://alice:s3cret@proxy:3128") == "http://alice:***@proxy:3128"
    assert redacted("http://proxy:3128") == "http://proxy:3128"


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=30))
def test_redacted_never_shows_the_password(password: str) -> None:
    """Whatever the password holds (an unencoded / or @ included), it is not shown."""
    assert redacted(f"http://alice:{password}@proxy.corp:3128") == (
        "http://alice:***@proxy.corp:3128"
    )
    if not password.startswith("//"):  # else "alice://..." reads as a scheme
        assert redacted(f"alice:{password}@proxy.corp:3128") == "alice:***@proxy.corp:3128"


def test_no_proxy_ignores_ports_and_blank_entries() -> None:
    rule = NoProxy.parse(" , example.org:8080,,")
    assert rule.matches("example.org") and rule.matches("www.example.org")
    assert not rule.matches("example.com")
