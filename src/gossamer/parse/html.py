"""Link extraction: the parse stage between fetch and the frontier.

An HTML body becomes a :class:`ParsedPage`: its title, the robots directives found in
``<meta name=robots>``, and the canonical http(s) links that the frontier may queue.
Parsing uses Lexbor (through selectolax), which builds the same tree a browser would
from any input, so malformed markup and binary garbage yield a page, never an error.
This runs on every fetched page, so node selection is left to Lexbor's CSS engine and
the Python work per link is one attribute read and one URL parse.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.parse.bounded import parse_bounded
from gossamer.parse.charset import decode_html
from gossamer.urls import resolve
from gossamer.urls.canonical import CanonicalLinks

__all__ = [
    "MAX_LINKS",
    "SCRIPT_BUILT_TEXT",
    "Link",
    "ParsedPage",
    "base_url",
    "may_have_scripts",
    "parse_html",
    "robots_directives",
    "title_of",
]

# Hostile or generated pages carry 100k links; no page deserves more frontier space.
MAX_LINKS = 10_000
# Characters of text below which a page with scripts and links still looks script-built:
# an app shell's menu and footer, not an article.
SCRIPT_BUILT_TEXT = 200

_LINK_SELECTOR = "a[href], area[href]"

# "5; url=/next", "0;URL='/next'", "3, url = /next", "0; /next": the HTML standard's
# refresh syntax, with the time, the separator and the "url=" prefix all optional.
_REFRESH_RE = re.compile(r"\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)", re.IGNORECASE | re.DOTALL)


class Link(NamedTuple):
    """A link found on a page (a named tuple: a page has dozens, and a frozen dataclass
    costs three times as much to build)."""

    url: str  # canonical absolute URL
    nofollow: bool  # rel="nofollow" on every occurrence, or page-level meta robots nofollow


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """What the crawler keeps from one HTML page.

    Title and ``noindex`` are what the index also reads (see ``gossamer.index.extract``);
    the crawl uses the links and ``nofollow``.
    """

    title: str  # the <title>, whitespace collapsed
    links: tuple[Link, ...]  # de-duplicated, in document order, only http(s)
    base_url: str  # the URL relative links were resolved against
    noindex: bool  # <meta name=robots content=noindex> (or "none")
    nofollow: bool
    text_encoding: str  # the Python codec the body was decoded with
    # Over the parse's cost bound (see ``parse.bounded``): nesting past its depth was dropped,
    # and the links and title are those that could be read.
    depth_capped: bool = False
    # Looks built by JavaScript: it has scripts, and no link or little text of its own (a
    # hint to render it; ``gossamer.render`` renders such pages of an ``auto`` host).
    script_built: bool = False


@dataclass(frozen=True, slots=True)
class _MetaDirectives:
    noindex: bool = False
    nofollow: bool = False
    refresh: str | None = None


def _refresh_target(content: str) -> str | None:
    match = _REFRESH_RE.match(content)
    if match is None:
        return None
    target = match.group(1).strip()
    if target[:1] in {"'", '"'}:
        quote = target[0]
        end = target.find(quote, 1)
        target = target[1:] if end < 0 else target[1:end]
    return target.strip() or None


def robots_directives(content: str) -> frozenset[str]:
    """The directives of a ``<meta name=robots>`` tag: lower-case, split at commas and
    spaces; ``none`` stands for both ``noindex`` and ``nofollow``."""
    tokens = frozenset(content.lower().replace(",", " ").split())
    return tokens | {"noindex", "nofollow"} if "none" in tokens else tokens


def _read_meta(metas: Iterable[LexborNode]) -> _MetaDirectives:
    noindex = nofollow = False
    refresh: str | None = None
    for node in metas:
        attrs = node.attributes
        name = (attrs.get("name") or "").strip().lower()
        content = attrs.get("content") or ""
        if name == "robots":
            tokens = robots_directives(content)
            noindex = noindex or "noindex" in tokens
            nofollow = nofollow or "nofollow" in tokens
        elif refresh is None and (attrs.get("http-equiv") or "").strip().lower() == "refresh":
            refresh = _refresh_target(content)
    return _MetaDirectives(noindex=noindex, nofollow=nofollow, refresh=refresh)


def base_url(tree: LexborHTMLParser, page_url: str) -> str:
    """The document base: the first ``<base href>`` if it resolves to http(s)."""
    return _base_of(tree.css_first("base[href]"), page_url)


def _base_of(node: LexborNode | None, page_url: str) -> str:
    if node is None:
        return page_url
    resolved = resolve(node.attributes.get("href") or "", page_url)
    # A javascript: or data: base would make every relative link unusable.
    if resolved is None or not resolved.startswith(("http://", "https://")):
        return page_url
    return resolved


def title_of(tree: LexborHTMLParser) -> str:
    """The text of the page's ``<title>``, whitespace collapsed ("" without one)."""
    return _title_text(tree.css_first("title"))


def _title_text(node: LexborNode | None) -> str:
    if node is None:
        return ""
    return " ".join(node.text(deep=True).split())


def _collect_links(
    nodes: Iterable[LexborNode],
    canonical: Callable[[str], str | None],
    refresh: str | None,
    page_nofollow: bool,
) -> tuple[Link, ...]:
    # A page repeats its links (navigation, "read more"): each distinct href is put in
    # canonical form once. href -> nofollow, which stays True only if every occurrence says
    # so, because one followable link is enough for a crawler to reach the page.
    hrefs: dict[str, bool] = {}
    for node in nodes:
        # One dict of the node's attributes is cheaper than two lookups that may miss.
        attrs = node.attributes
        href = attrs.get("href")
        if href is None:
            continue
        rel = attrs.get("rel")
        nofollow = page_nofollow or (rel is not None and "nofollow" in rel.lower().split())
        if hrefs.get(href, True):
            hrefs[href] = nofollow
    if refresh is not None and refresh not in hrefs:
        hrefs[refresh] = page_nofollow  # after the page's own links, as the last link
    # The same merge per URL, in order of first occurrence: hrefs that differ may name one URL.
    found: dict[str, bool] = {}
    for href, nofollow in hrefs.items():
        url = canonical(href)
        if url is None:
            continue
        if url in found:
            found[url] = found[url] and nofollow
        elif len(found) < MAX_LINKS:
            found[url] = nofollow
        else:
            break  # full: the remaining links of a hostile page are not worth parsing
    return tuple(map(_new_link, found.items()))


# Builds a Link from a (url, nofollow) pair without a Python-level call per link.
_new_link = partial(tuple.__new__, Link)


def parse_html(
    content: bytes,
    url: str,
    content_type: str = "text/html",
    *,
    links: CanonicalLinks | None = None,
) -> ParsedPage:
    """Parse an HTML body fetched from ``url``; never raises on malformed input.

    ``url`` should be the final URL after redirects, since relative links resolve
    against it (or against the page's ``<base href>``). ``links`` keeps the canonical form
    of links met on earlier pages (a crawler parses many pages of one site).
    """
    text, encoding = decode_html(content, content_type)
    bounded = parse_bounded(text)
    tree = bounded.tree
    # Walks by tag name cost a fraction of CSS selector matching; the selector is kept for
    # the rare page with <area> links (to keep document order across a and area) or <base>.
    anchors = tree.tags("a")
    if tree.tags("area"):
        anchors = tree.css(_LINK_SELECTOR)
    titles = tree.tags("title")
    base_node = tree.css_first("base[href]") if tree.tags("base") else None
    metas = tree.tags("meta")
    meta = _read_meta(metas)
    base = _base_of(base_node, url)
    canonical = (links or CanonicalLinks()).for_page(base)
    found = _collect_links(anchors, canonical, meta.refresh, meta.nofollow)
    return ParsedPage(
        title=_title_text(titles[0] if titles else None),
        links=found,
        base_url=base,
        noindex=meta.noindex,
        nofollow=meta.nofollow,
        text_encoding=encoding,
        depth_capped=bounded.capped,
        script_built=may_have_scripts(content) and _script_built(tree, bool(found)),
    )


def may_have_scripts(content: bytes) -> bool:
    """Whether an HTML body may hold a ``<script>``: a byte search, so a page without one
    (most pages a crawl parses) is never walked for scripts nor parsed for the hint."""
    return b"<script" in content or b"<SCRIPT" in content


def _script_built(tree: LexborHTMLParser, has_links: bool) -> bool:
    """Scripts, and no link or under ``SCRIPT_BUILT_TEXT`` characters of text outside them."""
    scripts = tree.tags("script")
    if not scripts:
        return False
    if not has_links:
        return True
    body = tree.body
    if body is None:
        return True
    text = len(body.text(deep=True, strip=True))
    hidden = sum(
        len(node.text(deep=True, strip=True))
        for node in body.css("script, style, noscript, template")
    )
    return text - hidden < SCRIPT_BUILT_TEXT
