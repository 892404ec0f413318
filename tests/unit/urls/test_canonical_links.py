"""CanonicalLinks: canonical_link with a memory across pages, never a different answer."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.urls import canonical_link
from gossamer.urls.canonical import CanonicalLinks

BASES = [
    "http://a.test/dir/page.html",
    "http://a.test/other/deeper/index.html?q=1",
    "https://a.test/dir/page.html",
    "http://a.test:8080/dir/page.html",
    "http://user:pw@a.test/dir/page.html",
    "http://b.test/",
]
HREFS = [
    "http://c.test/x",
    "https://c.test/x?y#z",
    "/x",
    "/x/../y?q",
    "//c.test/x",
    "/\\c.test/x",
    "/\t/c.test/x",
    "x",
    "../x",
    "?q=2",
    "#top",
    "",
    " /x ",
    "HTTP://C.TEST/x",
    "http:x",
    "mailto:m@a.test",
    "javascript:void(0)",
    "/%7Ex/%e2%82%ac",
]


@pytest.mark.parametrize("href", HREFS)
def test_every_answer_is_canonical_link_s_on_every_page(href: str) -> None:
    links = CanonicalLinks()
    for _ in range(2):  # the second round answers from memory where it may
        for base in BASES:
            assert links.for_page(base)(href) == canonical_link(href, base), (href, base)


@settings(max_examples=300, deadline=None)
@given(
    hrefs=st.lists(
        st.one_of(
            st.sampled_from(HREFS),
            st.text(alphabet="/\\:.?#%@x-yz 09\t", max_size=12),
            st.builds(lambda t: "/" + t, st.text(max_size=8)),
        ),
        max_size=20,
    ),
    order=st.lists(st.sampled_from(BASES), min_size=1, max_size=8),
)
def test_memory_never_changes_an_answer(hrefs: list[str], order: list[str]) -> None:
    links = CanonicalLinks(capacity=7)  # small, so the memory also starts over mid-way
    for base in order:
        canonical = links.for_page(base)
        for href in hrefs:
            assert canonical(href) == canonical_link(href, base), (href, base)
