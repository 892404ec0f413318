"""Property tests: canonicalize never raises and is idempotent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.urls import canonical_link, canonicalize

_URL_ALPHABET = "abcAB019-._~%/?#:@[]!$&'()*+,;= \t\né\u00a0\u3002xX"

url_like = st.builds(
    lambda scheme, rest: scheme + rest,
    st.sampled_from(["http://", "https://", "HTTP://", "http:", "//", "", "ftp://", "javascript:"]),
    st.text(alphabet=_URL_ALPHABET, max_size=60),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), url_like))
def test_canonicalize_total_and_idempotent(raw: str) -> None:
    first = canonicalize(raw)
    if first is not None:
        assert first.startswith(("http://", "https://"))
        assert "#" not in first
        assert canonicalize(first) == first


@settings(max_examples=200, deadline=None)
@given(url_like)
def test_canonical_link_output_is_canonical(href: str) -> None:
    link = canonical_link(href, "https://example.org/dir/page.html")
    if link is not None:
        assert canonicalize(link) == link
