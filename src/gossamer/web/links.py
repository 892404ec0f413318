"""Web UI, the links of a cached copy: each one pointed somewhere a reader can go.

Data flow: cached (the archived HTML, decoded) -> **links** -> the ``/cached/raw`` response.
Left as archived, a link inside the sandboxed frame would open the live page in the frame,
where the site's own framing policy (X-Frame-Options, frame-ancestors) mostly refuses it, and
a relative link would resolve against our ``/cached/raw`` route instead of the page's URL. So
every ``<a href>`` and ``<area href>`` is rewritten before the copy is served:

* to the cached copy of its target (``/cached?url=...``, replacing the whole tab) when the
  crawl stored that page (a 2xx answer with an archived record);
* otherwise to the live URL, opened in a new tab (``target=_blank``, ``rel=noopener
  noreferrer``), so the site is shown unframed and learns nothing of the UI;
* a link to a place in the same document (``#part``) is left alone;
* anything else (``javascript:``, ``mailto:``, what does not parse) loses its ``href``.

Relative links resolve against the page's URL, or its ``<base href>``, as a browser would;
which targets were stored is asked once per page, in batches (``CrawlRecords.stored_pages``).
The frame's sandbox allows exactly these two navigations (see ``app``).

The work is bounded: the page is parsed within ``parse.bounded``'s cost bound, and only its
first ``MAX_REWRITTEN`` links are rewritten (as many as the crawl follows from one page);
later ones lose their ``href`` and stay as text, which costs a fraction of a rewrite.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import Protocol

from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.parse import MAX_LINKS
from gossamer.parse.bounded import parse_bounded
from gossamer.urls import canonicalize, resolve
from gossamer.web.cached import CachedCopy
from gossamer.web.render import route

__all__ = ["MAX_REWRITTEN", "SANDBOX_ALLOWS", "StoredPages", "relink", "relinked"]

# What the cached copy's sandbox (the iframe's attribute and the CSP directive) allows: the two
# navigations above, each only on a click. Scripts, forms and a shared origin stay forbidden.
SANDBOX_ALLOWS = (
    "allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"
)
_ANCHORS = "a[href], area[href]"
_LIVE_REL = "noopener noreferrer"
MAX_REWRITTEN = MAX_LINKS


class StoredPages(Protocol):
    """Which of some URLs the crawl stored (``CrawlRecords`` is one)."""

    def stored_pages(self, urls: Collection[str]) -> set[str]: ...


def relinked(copy: CachedCopy, records: StoredPages) -> CachedCopy:
    """``copy`` with its links rewritten when it is HTML; any other copy as it is."""
    if not copy.content_type.startswith("text/html"):
        return copy
    html = relink(copy.body.decode("utf-8", errors="replace"), copy.url, records)
    return replace(copy, body=html.encode("utf-8"))


def relink(html: str, page_url: str, records: StoredPages) -> str:
    """``html`` (the page found at ``page_url``) with every link rewritten as described above."""
    bounded = parse_bounded(html, events=True)
    tree = bounded.tree
    anchors = tree.css(_ANCHORS)
    if not anchors and not bounded.capped:
        return html
    base = _base(tree, page_url)
    outward: list[tuple[LexborNode, str, str]] = []  # (element, live URL, canonical URL)
    for node in anchors[MAX_REWRITTEN:]:
        _drop(node, "href", "target")
    for node in anchors[:MAX_REWRITTEN]:
        href = (node.attrs.get("href") or "").strip()
        if href.startswith("#"):
            _drop(node, "target")  # a place in this document: the frame scrolls to it
            continue
        live = resolve(href, base)
        canonical = None if live is None else canonicalize(live)
        if live is None or canonical is None:  # not http(s), or not a URL at all
            _drop(node, "href", "target")
            continue
        outward.append((node, live, canonical))
    stored = records.stored_pages({canonical for _, _, canonical in outward})
    for node, live, canonical in outward:
        attrs = node.attrs
        if canonical in stored:
            attrs["href"] = route("/cached", url=canonical)
            attrs["target"] = "_top"
        else:
            attrs["href"] = live
            attrs["target"] = "_blank"
            attrs["rel"] = _LIVE_REL
    return tree.html or html


def _base(tree: LexborHTMLParser, page_url: str) -> str:
    """What relative links resolve against: the first ``<base href>``, if it parses."""
    node = tree.css_first("base[href]")
    href = None if node is None else node.attrs.get("href")
    return (resolve(href.strip(), page_url) if href else None) or page_url


def _drop(node: LexborNode, *names: str) -> None:
    attrs = node.attrs
    for name in names:
        if name in attrs:
            del attrs[name]
