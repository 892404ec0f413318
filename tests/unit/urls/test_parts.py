"""The identity parts of a canonical URL: origin (robots.txt), host name (politeness), path."""

from __future__ import annotations

from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st

from gossamer.urls import (
    as_host,
    canonicalize,
    host_key,
    host_of,
    origin_of,
    path_query_of,
    port_of,
    robots_url,
)


def test_one_host_name_for_every_scheme_and_port() -> None:
    forms = [
        "http://Example.ORG/a",
        "https://example.org/b",
        "http://example.org:80/c",
        "http://example.org:8080/d",
        "https://user:secret@example.org:8443/e",
    ]
    keys = {host_of(canonicalize(url) or "") for url in forms}
    assert keys == {"example.org"}


def test_origins_stay_apart_per_scheme_and_port() -> None:
    assert origin_of("http://a.test:8080/x/y?q") == "http://a.test:8080"
    assert origin_of("https://a.test/") == "https://a.test"
    assert origin_of("http://a.test") == "http://a.test"
    assert robots_url("https://a.test:8443/x?y") == "https://a.test:8443/robots.txt"


def test_credentials_never_reach_a_key() -> None:
    url = "https://user:secret@a.test:8443/p"
    assert "secret" not in origin_of(url) and "secret" not in host_of(url)


def test_idn_and_ipv6_hosts() -> None:
    assert host_of(canonicalize("http://bücher.example/") or "") == "xn--bcher-kva.example"
    assert host_of("http://[::1]:8080/a") == "[::1]"
    assert origin_of("http://[::1]:8080/a") == "http://[::1]:8080"


def test_path_and_query() -> None:
    assert path_query_of("http://a.test/x/y?q=1") == "/x/y?q=1"
    assert path_query_of("http://a.test") == "/"
    assert path_query_of("http://a.test:81") == "/"


_LABEL = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True)


@given(
    scheme=st.sampled_from(["http", "https"]),
    labels=st.lists(_LABEL, min_size=1, max_size=4),
    port=st.one_of(st.none(), st.integers(1, 65535)),
    path=st.text(alphabet="abc/?=&%.-_~", max_size=20),
)
def test_parts_agree_with_the_standard_library(
    scheme: str, labels: list[str], port: int | None, path: str
) -> None:
    url = canonicalize(f"{scheme}://{'.'.join(labels)}{'' if port is None else f':{port}'}/{path}")
    assert url is not None
    split = urlsplit(url)
    assert host_of(url) == split.hostname
    assert origin_of(url) == f"{split.scheme}://{split.netloc}"
    expected = split.path + (f"?{split.query}" if "?" in url else "")
    assert path_query_of(url) == expected


def test_authority_and_port() -> None:
    assert host_key("https://user:pw@a.test:8443/x") == "a.test:8443"
    assert host_key("http://[::1]:8080/") == "[::1]:8080"
    assert port_of("http://a.test:0/") == 0
    assert port_of("https://a.test:8443/x") == 8443
    assert port_of("http://[::1]:81/") == 81
    assert port_of("http://a.test/") is None
    assert port_of("http://[::1]/") is None


def test_a_host_name_from_a_url_an_origin_or_a_host_name() -> None:
    assert as_host("http://a.test:8080/x") == "a.test"
    assert as_host("https://a.test") == "a.test"
    assert as_host("a.test") == "a.test"
