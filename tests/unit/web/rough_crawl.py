"""A crawl of the rough edges a new user meets first in the web UI.

A page of every kind of link a cached copy can hold, titles made of bidi controls and
zero-width characters, a title far too long for a result list, and enough small pages on
one word for two pages of results.
"""

from __future__ import annotations

from pathlib import Path

from gossamer.index import build_index

from ..index.fake_crawl import FakePage, html, make_crawl

LINKS_URL = "http://r.test/links"
BASE_URL = "http://r.test/based"
ABOUT_URL = "http://r.test/about"
GONE_URL = "http://r.test/gone"
# A title that would render as "Invoice exe.jpg ..." and hide characters between its words.
BIDI_TITLE = (
    "Invoice \u202egpj.exe\u202c \u2066isolated\u2069 zero\u200bwidth\u200c\u200djoin"
    "\u2060er\ufeff marks\u200e\u200f bidiword"
)
BIDI_CLEAN = "Invoice gpj.exe isolated zerowidthjoiner marks bidiword"
LONG_TITLE = "Longtitle " + " ".join(f"word{n}" for n in range(60))  # about 420 characters
FILLERS = 35  # pages matching "filler": two pages of results at 30 a page

LINKS_BODY = (
    '<p>Links: <a href="/about">relative, crawled</a>'
    ' <a href="http://r.test/about#team">absolute with a fragment, crawled</a>'
    ' <a href="elsewhere?x=1">relative, never crawled</a>'
    ' <a href="https://live.test/x?a=1&amp;b=2" target="_self" rel="opener">live</a>'
    ' <a href="gone">crawled, but a 404</a>'
    " <a href=\"javascript:alert('x')\">script</a>"
    ' <a href="mailto:someone@r.test">mail</a>'
    ' <a href="#part" target="_blank">a place on this page</a>'
    ' <a href="http://[bad">unparseable</a></p>'
    '<map name="m"><area href="/about" alt="map area"></map>'
    '<h2 id="part">Part</h2>'
)


def rough_pages() -> list[FakePage]:
    pages = [
        FakePage(LINKS_URL, html("Link collection", "links everywhere", extra=LINKS_BODY)),
        FakePage(ABOUT_URL, html("About us", "who we are")),
        FakePage(GONE_URL, html("Not here", "gone away"), status=404),
        FakePage(
            BASE_URL,
            html(
                "Based links",
                "a base element",
                head='<base href="http://r.test/sub/dir/">',
                extra='<a href="../../about">up to about</a> <a href="page">beside</a>',
            ),
        ),
        FakePage("http://r.test/bidi", html(BIDI_TITLE, f"body {BIDI_TITLE} text")),
        FakePage("http://r.test/long", html(LONG_TITLE, "a page whose title never ends")),
    ]
    # Short, distinct bodies: neither exact nor near duplicates (simhash needs 20 words).
    pages += [
        FakePage(f"http://f.test/{n}", html(f"Filler {n}", f"filler number n{n} alone"))
        for n in range(FILLERS)
    ]
    return pages


def rough_crawl(folder: Path) -> Path:
    """``rough_pages`` crawled and indexed (no ranks: the UI works without them)."""
    make_crawl(folder, rough_pages())
    build_index(folder)
    return folder
