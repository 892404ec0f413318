"""Property tests: parse_html takes any bytes and only ever returns canonical http(s) links."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.parse import decode_html, parse_html
from gossamer.urls import canonicalize

PAGE = "https://example.org/dir/page.html"

_FRAGMENTS = [
    "<a href='",
    "<a href=",
    '<area href="',
    "<base href='",
    "<meta http-equiv=refresh content='0;url=",
    "<meta name=robots content='",
    "<meta charset='",
    "'>",
    '">',
    ">",
    "</a>",
    "<title>",
    "//",
    "/",
    "../",
    "?q=%",
    "#",
    "javascript:",
    "http://",
    "https://h\u00e9.example:8080",
    "nofollow",
    "utf-16",
    "shift_jis",
    " ",
    "\x00",
    "é",
]

markup = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=8)), max_size=30).map(
    lambda parts: "".join(parts).encode("utf-8", errors="surrogatepass")
)

content_types = st.sampled_from(
    ["text/html", "text/html; charset=utf-8", "text/html; charset=latin1", "", "charset=utf-16"]
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=2000), markup), content_types)
def test_parse_html_never_raises_and_links_are_canonical(body: bytes, content_type: str) -> None:
    page = parse_html(body, PAGE, content_type)
    assert len({link.url for link in page.links}) == len(page.links)
    for link in page.links:
        assert link.url.startswith(("http://", "https://"))
        assert canonicalize(link.url) == link.url
    assert page.base_url.startswith(("http://", "https://"))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=500), st.text(max_size=40))
def test_decode_html_never_raises(body: bytes, content_type: str) -> None:
    text, encoding = decode_html(body, content_type)
    assert isinstance(text, str)
    assert b"".decode(encoding) == ""
