"""Index stage, text: from an archived body to the text fields a search engine indexes.

Data flow: store (WARC) -> **extract** -> language, duplicates, full-text index. HTML gives
its title, headings, meta description and main text; PDF gives its text and document title.

Main text is the page with its boilerplate removed. The rules are few and structural,
because they must hold for any site: elements that never carry prose (script, style, forms,
embedded objects) go; so do navigation, banners, footers and sidebars, named by their HTML5
element or ARIA role, except headers and footers inside an ``article`` or ``main``, which
belong to the text; so do lists made almost entirely of links (menus, tables of contents).
When the page marks its main content with ``main`` or ``article``, only that is kept.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass

import pypdf
from pypdf.errors import PyPdfError
from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.index.images import PageImage, images_of
from gossamer.index.links import Anchor, anchors_of
from gossamer.parse import decode_html
from gossamer.parse.bounded import parse_bounded
from gossamer.parse.html import robots_directives, title_of

__all__ = ["MAX_TEXT_CHARS", "PageText", "extract", "extract_html", "extract_pdf", "kind_of"]

log = logging.getLogger(__name__)

# A page longer than this is almost always a data dump; its start says what it is about.
MAX_TEXT_CHARS = 200_000
# HTML bytes parsed, as many as the crawl parses for links (``crawling.recorder.PARSE_LIMIT``):
# the text kept is far shorter, and a 20 MB page of links would take seconds to parse whole.
MAX_PARSED_BYTES = 4 * 1024 * 1024
_MAX_PDF_PAGES = 300
_MAX_HEADINGS = 64

_NEVER_TEXT = (
    "script, style, noscript, template, svg, math, iframe, object, embed, canvas, "
    "form, button, select, textarea, input, dialog, [hidden], [aria-hidden=true]"
)
_CHROME = (
    "nav, aside, [role=navigation], [role=banner], [role=contentinfo], "
    "[role=complementary], [role=search]"
)
_HEADINGS = "h1, h2, h3, h4, h5, h6"
_NOINDEX_NAMES = frozenset({"robots", "gossamer"})
_LINK_LIST_MIN_LINKS = 3
_LINK_LIST_RATIO = 0.8  # share of a list's text that sits inside links

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})


@dataclass(frozen=True, slots=True)
class PageText:
    """The text of one document, split into the fields the index weighs differently."""

    kind: str  # "html" or "pdf"
    title: str
    headings: tuple[str, ...]
    description: str
    body: str  # main text, whitespace collapsed
    lang_hint: str = ""  # <html lang>, lowercased primary subtag; "" when absent
    noindex: bool = False  # <meta name=robots content=noindex>
    anchors: tuple[Anchor, ...] = ()  # the page's links and their words, when its URL is known
    depth_capped: bool = False  # over the parse's cost bound: the text is what could be read
    images: tuple[PageImage, ...] = ()  # the images it shows or links to (``images``)


def kind_of(content_type: str | None) -> str | None:
    """``"html"``, ``"pdf"`` or None (not indexed) for a Content-Type header value."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in HTML_TYPES:
        return "html"
    if mime in PDF_TYPES:
        return "pdf"
    return None


def extract(content: bytes, content_type: str | None, url: str = "") -> PageText | None:
    """The text of an HTML or PDF body fetched from ``url``; None for any other type."""
    kind = kind_of(content_type)
    if kind == "html":
        return extract_html(content, content_type or "text/html", url)
    if kind == "pdf":
        return extract_pdf(content)
    return None


def _clean(text: str) -> str:
    # split/join runs in C and is several times faster than a regex substitution.
    return " ".join(text.split())


def _text(node: LexborNode) -> str:
    return _clean(node.text(deep=True, separator=" "))


def _inside(node: LexborNode, tags: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


_CONTENT_ROOTS = frozenset({"article", "main"})


def _outermost(nodes: list[LexborNode]) -> list[LexborNode]:
    """The nodes not inside another of them, so no subtree is freed twice."""
    chosen = {node.mem_id for node in nodes}
    kept = []
    for node in nodes:
        parent = node.parent
        while parent is not None and parent.mem_id not in chosen:
            parent = parent.parent
        if parent is None:
            kept.append(node)
    return kept


def _is_link_list(node: LexborNode) -> bool:
    links = node.css("a")
    if len(links) < _LINK_LIST_MIN_LINKS:
        return False
    total = len(_text(node))
    linked = sum(len(_text(a)) for a in links)
    return bool(total) and linked / total >= _LINK_LIST_RATIO


def _drop_boilerplate(root: LexborNode) -> None:
    doomed = root.css(_NEVER_TEXT) + root.css(_CHROME)
    doomed += [n for n in root.css("header, footer") if not _inside(n, _CONTENT_ROOTS)]
    for node in _outermost(doomed):
        node.decompose()
    for node in _outermost([n for n in root.css("ul, ol, menu") if _is_link_list(n)]):
        node.decompose()


def _meta(tree: LexborHTMLParser, *names: str) -> str:
    for node in tree.css("meta[content]"):
        attrs = node.attributes
        key = (attrs.get("name") or attrs.get("property") or "").strip().lower()
        if key in names:
            return _clean(attrs.get("content") or "")
    return ""


def _noindex(tree: LexborHTMLParser) -> bool:
    # Read as the crawl's parse reads <meta name=robots>, and also for our own product token.
    return any(
        (node.attributes.get("name") or "").strip().lower() in _NOINDEX_NAMES
        and "noindex" in robots_directives(node.attributes.get("content") or "")
        for node in tree.css("meta[name][content]")
    )


def _lang_hint(tree: LexborHTMLParser) -> str:
    node = tree.css_first("html[lang]")
    if node is None:
        return ""
    lang = (node.attributes.get("lang") or "").strip().lower()
    return lang.split("-", 1)[0][:8]


def extract_html(content: bytes, content_type: str = "text/html", url: str = "") -> PageText:
    """Title, headings, meta description and main text of an HTML page; never raises.

    With the page's ``url``, its links and their words come too (``anchors``): all of
    them, navigation included, since a menu entry names its target as well as any link.
    """
    text, _ = decode_html(content[:MAX_PARSED_BYTES], content_type)
    bounded = parse_bounded(text)
    tree, capped = bounded.tree, bounded.capped
    title = title_of(tree) or _meta(tree, "og:title")
    description = _meta(tree, "description", "og:description", "twitter:description")
    noindex = _noindex(tree)
    lang_hint = _lang_hint(tree)
    anchors = anchors_of(tree, url) if url else ()
    images = images_of(tree, url) if url else ()  # before boilerplate goes: figures in asides
    body = tree.body
    if body is None:
        return PageText(
            "html", title, (), description, "", lang_hint, noindex, anchors, capped, images
        )
    _drop_boilerplate(body)
    roots = body.css("main, [role=main]") or body.css("article")
    if roots:
        # Several articles (a blog index) are all content; keep them in order.
        main_text = " ".join(_text(node) for node in roots)
        heading_nodes = [h for node in roots for h in node.css(_HEADINGS)]
    else:
        main_text = _text(body)
        heading_nodes = body.css(_HEADINGS)
    headings = tuple(h for h in (_text(n) for n in heading_nodes[:_MAX_HEADINGS]) if h)
    if not title and headings:
        title = headings[0]
    main_text = main_text[:MAX_TEXT_CHARS]
    return PageText(
        "html", title, headings, description, main_text, lang_hint, noindex, anchors, capped, images
    )


# pypdf parses hostile input in pure Python; these are the faults a broken file provokes.
_PDF_FAULTS = (
    PyPdfError,
    ValueError,
    LookupError,
    TypeError,
    AttributeError,
    ArithmeticError,
    RecursionError,
    OSError,
)


def extract_pdf(content: bytes) -> PageText:
    """The text of a PDF and its document title; an unreadable PDF yields empty text."""
    title = ""
    parts: list[str] = []
    size = 0
    try:
        reader = pypdf.PdfReader(io.BytesIO(content))
        info = reader.metadata
        if info is not None and info.title:
            title = _clean(str(info.title))
        for page in reader.pages[:_MAX_PDF_PAGES]:
            chunk = page.extract_text() or ""
            parts.append(chunk)
            size += len(chunk)
            if size >= MAX_TEXT_CHARS:
                break
    except _PDF_FAULTS as exc:
        log.info("PDF text not extracted: %s", exc)
    raw = "\n".join(parts)
    if not title:
        first_line = next((line for line in raw.splitlines() if line.strip()), "")
        title = _clean(first_line)[:200]
    return PageText("pdf", title, (), "", _clean(raw)[:MAX_TEXT_CHARS])
