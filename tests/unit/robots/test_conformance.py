"""Conformance of the robots.txt matcher with the reference matcher's own test vectors.

The vectors (google/robotstxt ``robots_test.cc``, recorded as JSON) are vendored
in ``tests/conformance/robots`` (origin and licence in ``tests/conformance/README.md``). Every case
not named ``GoogleOnly_`` is RFC 9309 behaviour and must pass, except the few listed in
``_CANONICAL_MATCHING``. Of the Google extensions, the few Gossamer deliberately does not
follow are listed in ``_NOT_FOLLOWED``. Both lists run as strict xfails, so a change in
behaviour shows up either way.

The frontier only ever asks :meth:`RobotsRules.is_allowed` about the path and query of a
canonical URL (:func:`gossamer.urls.canonicalize`), and the vectors' URLs are links as
written, so the harness canonicalises them first: it asks what Gossamer asks when it meets
that link. For every vector but the ones in ``_CANONICAL_MATCHING`` this makes no
difference to the verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from gossamer.robots import parse_robots, product_token
from gossamer.urls import canonicalize

VECTORS = (
    Path(__file__).resolve().parents[2] / "conformance" / "robots" / "google_robots_vectors.json"
)

if not VECTORS.is_file():
    pytest.skip(f"robots.txt conformance vectors not found at {VECTORS}", allow_module_level=True)

_CASES: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))

# (test, user_agent, url) of Google extensions Gossamer does not follow, and why.
_NOT_FOLLOWED: dict[tuple[str, str, str], str] = {
    (
        "GoogleOnly_AcceptUserAgentUpToFirstSpace",
        "Foo Bar",
        "http://foo.bar/x/y",
    ): (
        "Gossamer reduces its whole User-Agent to the product token ('foo') before "
        "matching, as RFC 9309 section 2.2.1 describes; the reference matcher instead "
        "refuses to match a caller-supplied name that contains a space"
    ),
    (
        "GoogleOnly_IndexHTMLisDirectory",
        "foobot",
        "http://foo.com/allowed-slash/",
    ): (
        "Google reads 'Allow: /dir/index.html' as also allowing '/dir/'; RFC 9309 has no "
        "such rule and Gossamer keeps to the stricter reading"
    ),
}


# (test, user_agent, url) of RFC 9309 cases whose verdict changes because Gossamer matches
# canonical URLs against rules in canonical spelling, and why Gossamer's verdict is the one
# that describes the request it actually makes.
_CANONICAL_MATCHING: dict[tuple[str, str, str], str] = {
    (
        "ID_Encoding",
        "FooBot",
        "http://foo.bar/foo/bar/\u30c4",
    ): (
        "the reference matcher is handed the link unescaped and compares octets, so the "
        "rule '/foo/bar/%E3%83%84' (or '/foo/bar/\u30c4', which it escapes) does not match; "
        "RFC 9309 section 2.2.2 escapes non-ASCII octets of the URI too, and Gossamer "
        "canonicalises the link as a browser does and requests '/foo/bar/%E3%83%84', the "
        "path the same vectors allow"
    ),
    (
        "ID_Encoding",
        "FooBot",
        "http://foo.bar/foo/bar/baz",
    ): (
        "'Allow: /foo/bar/%62%61%7A' is '/foo/bar/baz' once unreserved escapes are decoded, "
        "as the encoding table of RFC 9309 section 2.2.2 and canonical URLs both do; the "
        "reference matcher compares escapes as written, and its own comment says this "
        "'should not be relied on'"
    ),
}


def _params() -> list[Any]:
    params = []
    for index, case in enumerate(_CASES):
        key = (case["test"], case["user_agent"], case["url"])
        reason = _NOT_FOLLOWED.get(key) or _CANONICAL_MATCHING.get(key)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(case, id=f"{index:03d}-{case['test']}", marks=marks))
    return params


def _path_and_query(url: str) -> str:
    """Path and query of the canonical form of ``url``, as the frontier would ask."""
    parts = urlsplit(url)
    path = parts.path or "/"
    raw = f"{path}?{parts.query}" if parts.query else path
    # Through a fixed host: a few vectors have no URL at all (the empty string).
    canonical = canonicalize("http://h" + raw)
    assert canonical is not None
    return canonical[len("http://h") :]


@pytest.mark.parametrize("case", _params())
def test_vector(case: dict[str, Any]) -> None:
    rules = parse_robots(case["robots_txt"].encode("utf-8"), product_token(case["user_agent"]))
    assert rules.is_allowed(_path_and_query(case["url"])) is case["allowed"]


def test_only_google_extensions_are_not_followed() -> None:
    assert all(test.startswith("GoogleOnly_") for test, _, _ in _NOT_FOLLOWED)
    present = {(case["test"], case["user_agent"], case["url"]) for case in _CASES}
    assert set(_NOT_FOLLOWED) <= present


def test_canonical_matching_cases_are_rfc_cases_present_in_the_vectors() -> None:
    assert not any(test.startswith("GoogleOnly_") for test, _, _ in _CANONICAL_MATCHING)
    present = {(case["test"], case["user_agent"], case["url"]) for case in _CASES}
    assert set(_CANONICAL_MATCHING) <= present
