"""Index stage, images: the pictures a page shows or links to, with the words that describe them.

Data flow: extract (the parsed tree, before boilerplate is dropped) -> **images** -> the image
store (``imagestore``) -> the Images tab (``gossamer.search.images``). The image files are not
fetched: an image is searchable by what the page says about it.

What describes an image, in the order a reader meets it: its ``alt`` text, its ``title``, the
``figcaption`` of the ``figure`` holding it, the words of its file name, and the words around
it (the text of the nearest enclosing block, cut to ``NEAR_CHARS``). A link to an image file
(``<a href="photo.jpg">``) counts too, named by the link's words. Sources resolve as links do
(``<base href>``, then the canonical form), so the same image on two pages is one URL;
``data:`` and other non-HTTP sources are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.parse.html import base_url
from gossamer.urls import canonical_link

__all__ = ["MAX_IMAGES", "NEAR_CHARS", "PageImage", "file_words", "images_of"]

MAX_IMAGES = 200  # per page: a gallery of thousands says no more with each one
NEAR_CHARS = 300
_FIELD_CHARS = 500  # alt, title, caption: longer is a paragraph put in an attribute
_IMAGE_FILES = re.compile(r"\.(?:png|jpe?g|gif|webp|svg|avif|bmp|ico)$", re.IGNORECASE)
_BLOCKS = frozenset({"p", "li", "td", "th", "dd", "figure", "section", "article", "div", "main"})
_FIGURE_LEVELS = 4  # how far up a figure may hold the image (picture, a, span, figure)


@dataclass(frozen=True, slots=True)
class PageImage:
    """One image of a page and its words."""

    url: str
    alt: str = ""
    title: str = ""
    caption: str = ""
    near: str = ""


def _clean(text: str | None, limit: int = _FIELD_CHARS) -> str:
    return " ".join((text or "").split())[:limit]


def file_words(url: str) -> str:
    """The words of an image URL's file name: ``/img/Red_Fox-2.jpg`` -> ``Red Fox 2``."""
    path = re.split(r"[?#]", url.split("//", 1)[-1], maxsplit=1)[0]
    name = unquote(path.split("/", 1)[1].rsplit("/", 1)[-1]) if "/" in path else ""
    stem = _IMAGE_FILES.sub("", name)
    return " ".join(re.split(r"[\W_]+", stem)).strip()


def _figure_caption(node: LexborNode) -> str:
    parent = node.parent
    for _ in range(_FIGURE_LEVELS):
        if parent is None:
            return ""
        if parent.tag == "figure":
            caption = parent.css_first("figcaption")
            return _clean(caption.text(deep=True, separator=" ")) if caption else ""
        parent = parent.parent
    return ""


def _near(node: LexborNode) -> str:
    parent = node.parent
    while parent is not None and parent.tag not in _BLOCKS:
        parent = parent.parent
    if parent is None:
        return ""
    return _clean(parent.text(deep=True, separator=" "), NEAR_CHARS)


def images_of(tree: LexborHTMLParser, page_url: str) -> tuple[PageImage, ...]:
    """The images a page shows (``<img>``) or links to, each URL once, in page order."""
    base = base_url(tree, page_url)
    found: dict[str, PageImage] = {}
    for node in tree.css("img[src], a[href]"):
        link = node.tag == "a"
        source = node.attributes.get("href" if link else "src") or ""
        # The path's end, read without a URL parser: a hostile href ("http://[") makes
        # urlsplit raise, and the canonical form below refuses it anyway.
        if link and not _IMAGE_FILES.search(re.split(r"[?#]", source, maxsplit=1)[0]):
            continue
        url = canonical_link(source, base)
        if url is None or url in found or not url.startswith(("http://", "https://")):
            continue
        words = _clean(node.text(deep=True, separator=" ")) if link else ""
        found[url] = PageImage(
            url=url,
            alt=words if link else _clean(node.attributes.get("alt")),
            title=_clean(node.attributes.get("title")),
            caption=_figure_caption(node),
            near=_near(node),
        )
        if len(found) >= MAX_IMAGES:
            break
    return tuple(found.values())
