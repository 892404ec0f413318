"""Spider-trap heuristics: which canonical URLs are refused, and session ids stripped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.urls import canonical_link, canonicalize
from gossamer.urls.traps import MAX_PATH_DEPTH, strip_session_ids, trap_reason


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://a.test/", None),
        ("http://a.test/blog/2024/05/hello-world.html?page=2", None),
        ("http://a.test/a/b/a/b/a/b/", None),  # three times each: still allowed
        ("http://a.test/a/b/a/b/a/b/a/", "trap_repeated_segment"),
        ("http://a.test/cal/cal/cal/cal", "trap_repeated_segment"),
        ("http://a.test/" + "/".join(str(n) for n in range(MAX_PATH_DEPTH)), None),
        ("http://a.test/" + "/".join(str(n) for n in range(MAX_PATH_DEPTH + 1)), "trap_too_deep"),
        ("http://a.test/?" + "x" * 3000, "trap_too_long"),
        ("http://a.test/s?a=1&a=2&a=3", None),
        ("http://a.test/s?a=1&a=2&a=3&a=4", "trap_repeated_parameter"),
        ("http://a.test//////", None),  # empty segments are not segments
    ],
)
def test_trap_reason(url: str, reason: str | None) -> None:
    assert trap_reason(url) == reason


def test_limits_are_parameters() -> None:
    url = "http://a.test/x/y/x/y"
    assert trap_reason(url, max_repeats=1) == "trap_repeated_segment"
    assert trap_reason(url, max_depth=3) == "trap_too_deep"
    assert trap_reason(url, max_length=10) == "trap_too_long"


@pytest.mark.parametrize(
    ("url", "stripped"),
    [
        ("http://a.test/p?sid=1&a=2", "http://a.test/p?a=2"),
        ("http://a.test/p?a=2&PHPSESSID=abc&b", "http://a.test/p?a=2&b"),
        ("http://a.test/p?ASPSESSIONIDQSDRTABC=x", "http://a.test/p"),
        ("http://a.test/p;jsessionid=0F1E2D?q=1", "http://a.test/p?q=1"),
        ("http://a.test/p;JSESSIONID=0F1E2D/next", "http://a.test/p/next"),
        ("http://a.test/p;version=2", "http://a.test/p;version=2"),  # not a session id
        ("http://a.test/p?side=1&sidebar=2", "http://a.test/p?side=1&sidebar=2"),
        ("http://a.test/p?cfid=1&cftoken=2&zenid=3&osCsid=4", "http://a.test/p"),
        ("http://a.test/", "http://a.test/"),
    ],
)
def test_strip_session_ids(url: str, stripped: str) -> None:
    assert strip_session_ids(url) == stripped


_PIECES = st.sampled_from(
    ["sid", "jsessionid", "PHPSESSID", "a", "b", "=", "&", ";", "/", "?", "%41", "x", "1", "é"]
)
_hrefs = st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(_hrefs)
def test_strip_keeps_canonical_urls_canonical_and_is_idempotent(href: str) -> None:
    url = canonical_link(href, "http://a.test/dir/")
    if url is None:
        return
    stripped = strip_session_ids(url)
    assert strip_session_ids(stripped) == stripped
    assert canonicalize(stripped) == stripped
    assert stripped.split("/")[:3] == url.split("/")[:3]  # scheme and authority untouched
    query = stripped.partition("?")[2]
    assert not any(p.partition("=")[0].lower() == "sid" for p in query.split("&"))


@settings(max_examples=300, deadline=None)
@given(st.one_of(_hrefs, st.text(max_size=300)))
def test_trap_reason_is_total(href: str) -> None:
    url = canonical_link(href, "https://a.test/")
    if url is not None:
        assert trap_reason(url) in (
            None,
            "trap_too_long",
            "trap_too_deep",
            "trap_repeated_segment",
            "trap_repeated_parameter",
        )
