"""Search side, terminal output: a page of results as text or JSON for ``gossamer search``.

Data flow: engine -> results -> **output** -> stdout. Titles, URLs and snippets come from
crawled pages, so control characters are removed before they reach a terminal: an escape
sequence in a page title must not be able to repaint or retitle the user's terminal.
:func:`printable` is the one sanitiser of crawled text for display: the web UI's titles and
snippets go through it too, so bidi overrides and zero-width characters vanish on both sides.
"""

from __future__ import annotations

import json
import unicodedata
from typing import TYPE_CHECKING

from gossamer.search.results import SearchHit, SearchPage

if TYPE_CHECKING:
    from gossamer.search.images import ImagePage

__all__ = [
    "VIA_LINKS",
    "duplicates_label",
    "format_image_json",
    "format_image_text",
    "format_json",
    "format_text",
    "printable",
]

# Said of a result whose own text does not hold the query: the words of links pointing at it
# do (JSON: the hit's ``via_links``).
VIA_LINKS = "matched via links"

_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def printable(text: str) -> str:
    """``text`` without control or format characters: C0 and C1 controls, bidi embeddings,
    overrides, isolates and marks, zero-width spaces and joiners, the BOM (categories Cc and
    Cf); tabs and line breaks become spaces."""
    return "".join(
        " " if ch in "\t\n\r" else ch
        for ch in text
        if ch in "\t\n\r" or unicodedata.category(ch) not in {"Cc", "Cf"}
    )


def duplicates_label(hit: SearchHit) -> str:
    """What a hit's duplicates are, e.g. "2 other pages with the same content, 1
    near-duplicate"; "" when it has none."""
    parts = []
    if hit.same_content:
        noun = "page" if hit.same_content == 1 else "pages"
        parts.append(f"{hit.same_content} other {noun} with the same content")
    if hit.near_duplicates:
        noun = "near-duplicate" if hit.near_duplicates == 1 else "near-duplicates"
        parts.append(f"{hit.near_duplicates} {noun}")
    return ", ".join(parts)


def _copies(hit: SearchHit) -> list[str]:
    lines = [
        f"       {'same content' if copy.exact else 'near-duplicate'}: {printable(copy.url)}"
        for copy in hit.copies
    ]
    if hit.duplicates > len(hit.copies):
        lines.append(f"       ... and {hit.duplicates - len(hit.copies)} more")
    return lines


def _snippet(hit: SearchHit, color: bool) -> str:
    if not color:
        return printable(hit.snippet.text)
    return "".join(
        f"{_BOLD}{printable(piece)}{_RESET}" if marked else printable(piece)
        for piece, marked in hit.snippet.parts()
    )


def format_text(result: SearchPage, *, color: bool = False) -> str:
    lines: list[str] = []
    if result.matched == "none":
        lines.append(f"No results for {printable(result.query)!r}.")
        return "\n".join(lines)
    if result.matched == "any":
        lines.append("No page has every term; showing pages with some of them.")
    if result.matched == "meaning":
        lines.append("No page has these words; showing pages close in meaning.")
    lines.append(
        f"{result.matches} matches, {result.results} results after folding duplicates"
        f" ({result.seconds * 1000:.1f} ms) - page {result.page} of {result.pages}"
    )
    if not result.pagerank_used:
        lines.append("(no PageRank yet: run 'gossamer rank' to blend it in)")
    for hit in result.hits:
        title = printable(hit.title) or "(no title)"
        lines.append("")
        lines.append(f"{hit.position:3d}. {_BOLD + title + _RESET if color else title}")
        lines.append(f"     {printable(hit.url)}")
        if hit.snippet.text:
            lines.append(f"     {_snippet(hit, color)}")
        s = hit.scores
        label = duplicates_label(hit)
        extra = f" - {label}:" if label else ""
        via = f" - {VIA_LINKS}" if hit.via_links else ""
        meaning = f", meaning {s.similarity:.2f}" if s.similarity else ""
        detail = (
            f"     score {s.blended:.3f} (bm25 {s.bm25:.2f}, pagerank {s.pagerank_scaled:.2f},"
            f" title tier {s.tier}{meaning}){via}{extra}"
        )
        lines.append(f"{_DIM}{detail}{_RESET}" if color else detail)
        lines.extend(_copies(hit))
    return "\n".join(lines)


def format_json(result: SearchPage) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False, indent=2)


def format_image_text(result: ImagePage) -> str:
    """A page of image results: each image's URL, what describes it, the page it is on."""
    if result.matched == "none":
        return f"No images for {printable(result.query)!r}."
    lines = []
    if result.matched == "any":
        lines.append("No image has every term; showing images with some of them.")
    lines.append(
        f"{result.results} image{'' if result.results == 1 else 's'}"
        f" ({result.seconds * 1000:.1f} ms)"
        f" - page {result.page} of {result.pages}"
    )
    first = (result.page - 1) * result.per_page
    for i, image in enumerate(result.images, start=first + 1):
        words = " - ".join(
            printable(part) for part in (image.alt, image.title, image.caption) if part
        )
        lines.append("")
        lines.append(f"{i:3d}. {printable(image.url)}")
        if words:
            lines.append(f"     {words}")
        on = printable(image.page_title) or "(no title)"
        lines.append(f"     on {on}: {printable(image.page_url)}")
    return "\n".join(lines)


def format_image_json(result: ImagePage) -> str:
    return json.dumps(result.to_json(), ensure_ascii=False, indent=2)
