"""Web UI, the Images tab: a grid of the images found for a query, each with its page.

Data flow: ``app`` (``/images``) -> ``gossamer.search.images`` -> **imagepage** -> HTML. Every
string of an image (alt text, title, caption, URLs) comes from a crawled page and goes
through ``esc``; an image URL becomes a link only through ``outbound`` (http and https). The
picture itself is shown only when the crawl archived it, from ``/cached/raw`` (our own
origin: the page's policy allows images from nowhere else, so a grid never makes the
browser fetch from the sites crawled); otherwise the card says what the image is.
"""

from __future__ import annotations

from collections.abc import Collection

from gossamer.index.images import file_words
from gossamer.index.imagestore import ImageRow
from gossamer.search.images import ImagePage
from gossamer.web.pages import shown_title
from gossamer.web.render import esc, layout, local, outbound

__all__ = ["image_results_page"]


def _card(image: ImageRow, archived: bool) -> str:
    described = image.alt or image.title or image.caption
    picture = (
        f'<img src="{local("/cached/raw", url=image.url)}" alt="{esc(shown_title(described))}"'
        ' loading="lazy">'
        if archived
        else ""
    )
    name = file_words(image.url) or image.url
    lines = [
        picture,
        f'<div class="file">{outbound(image.url, shown_title(name, 80))}</div>',
    ]
    for label, text in (("alt", image.alt), ("title", image.title), ("caption", image.caption)):
        if text:
            lines.append(f'<div class="{label}">{esc(shown_title(text, 200))}</div>')
    page = shown_title(image.page_title, 80) or "(no title)"
    lines.append(f'<div class="from">on {outbound(image.page_url, page, "page")}</div>')
    return f'<li class="image">{"".join(lines)}</li>'


def image_results_page(result: ImagePage, archived: Collection[str]) -> str:
    """The grid; ``archived``: the image URLs the crawl stored (shown as pictures)."""
    query = result.query
    if result.matched == "none":
        body = f'<p class="stats">No images for <b>{esc(query)}</b>.</p>'
        return layout(query or "Images", body, query=query, tab="images")
    parts = []
    if result.matched == "any":
        parts.append('<p class="note">No image has every term; these have some of them.</p>')
    parts.append(
        f'<p class="stats">{result.results} image{"" if result.results == 1 else "s"}'
        f" ({result.seconds * 1000:.0f} ms)"
        f" - page {result.page} of {result.pages}</p>"
    )
    cards = "".join(_card(image, image.url in archived) for image in result.images)
    parts.append(f'<ul class="images">{cards}</ul>')
    if result.pages > 1:
        links = []
        if result.page > 1:
            links.append(
                f'<a href="{local("/images", q=query, page=result.page - 1)}">Previous</a>'
            )
        if result.page < result.pages:
            links.append(f'<a href="{local("/images", q=query, page=result.page + 1)}">Next</a>')
        parts.append(f'<nav class="pages" aria-label="Result pages">{"".join(links)}</nav>')
    return layout(query, "".join(parts), query=query, tab="images")
