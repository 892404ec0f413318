"""Index stage, anchors out: the links of one archived page with the words that name them.

Data flow: extract (the parsed tree, before boilerplate is dropped) -> **links** -> anchor
store (``anchors``) -> the anchor field of each target's document. The crawl's link graph
in ``crawl.db`` keeps only which page links to which; the words of a link are read here,
from the same archived HTML the indexer reads anyway.

Targets are resolved as the crawl resolves them (``<base href>``, then the canonical form
of ``gossamer.urls``), so they match the URLs of the documents they name. A link's words
are its text; an image link without text is named by the image's ``alt``, and failing
that by the link's ``title``. Links to the page itself name nothing new and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.parse.html import base_url
from gossamer.urls import canonical_link

__all__ = ["MAX_ANCHORS", "MAX_ANCHOR_CHARS", "Anchor", "anchors_of"]

MAX_ANCHORS = 1000  # per page; generated pages carry many thousands of links
MAX_ANCHOR_CHARS = 200  # a longer "anchor" is a paragraph wrapped in a link


@dataclass(frozen=True, slots=True)
class Anchor:
    """A link on a page: the canonical URL it points at and the words it shows."""

    target: str
    text: str


def _words(node: LexborNode) -> str:
    text = " ".join(node.text(deep=True, separator=" ").split())
    if not text:
        image = node.css_first("img[alt]")
        if image is not None:
            text = " ".join((image.attributes.get("alt") or "").split())
    if not text:
        text = " ".join((node.attributes.get("title") or "").split())
    return text[:MAX_ANCHOR_CHARS]


def anchors_of(tree: LexborHTMLParser, page_url: str) -> tuple[Anchor, ...]:
    """The links of a page with their words, each (target, words) pair once, in order."""
    base = base_url(tree, page_url)  # the crawl's own rule: links resolve alike
    resolved: dict[str, str | None] = {}
    found: dict[Anchor, None] = {}
    for node in tree.css("a[href]"):
        href = node.attributes.get("href")
        if href is None:
            continue
        if href not in resolved:
            resolved[href] = canonical_link(href, base)
        target = resolved[href]
        if target is None or target == page_url:
            continue
        text = _words(node)
        if text:
            found[Anchor(target, text)] = None
            if len(found) >= MAX_ANCHORS:
                break
    return tuple(found)
