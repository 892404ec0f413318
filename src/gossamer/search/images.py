"""Search side, the Images tab: images of crawled pages found by the words that describe them.

Data flow: query -> **images** (the image store of ``gossamer.index.imagestore``) -> the
``/images`` grid of the UI, ``gossamer search DIR QUERY --images``.

The query syntax is the web search's (``query``): every word or phrase is required, ``OR``
joins alternatives, ``-word`` excludes; ``site:`` keeps the images of pages on that host. Each
word becomes an FTS5 string (quoted, so no word is read as FTS5 syntax), searched in the
alt text, title, caption, file name, nearby words and page title, Porter-stemmed as the
page index is. Nothing matching every word falls back to any of them, as the web search does.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gossamer.index.imagestore import IMAGES_FILE, ImageRow, ImageStore
from gossamer.index.schema import INDEX_DIR
from gossamer.search.errors import SearchError
from gossamer.search.query import ParsedQuery, QueryTerm, parse_query

__all__ = ["IMAGES_PER_PAGE", "ImagePage", "ImageSearch", "fts_expression"]

IMAGES_PER_PAGE = 40
_LIMIT = 1000  # images ranked per query; later ones are not reached


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _term(term: QueryTerm) -> str:
    if term.alternatives:
        return "(" + " OR ".join(_term(t) for t in term.alternatives) + ")"
    return _quoted(term.text)


def fts_expression(parsed: ParsedQuery, *, every: bool = True) -> str:
    """The FTS5 expression of a query's words: all of them (``every``) or any; "" for none."""
    terms = [_term(t) for t in parsed.include if t.text.strip()]
    if not terms:
        return ""
    joined = " AND ".join(terms) if every else " OR ".join(terms)
    excluded = [_term(t) for t in parsed.exclude if t.text.strip()]
    if excluded:
        joined = f"({joined}) NOT ({' OR '.join(excluded)})"
    return joined


def _on_sites(url: str, sites: tuple[str, ...], excluded: tuple[str, ...]) -> bool:
    host = (urlsplit(url).hostname or "").lower()

    def under(site: str) -> bool:
        return host == site or host.endswith("." + site)

    return (not sites or any(map(under, sites))) and not any(map(under, excluded))


@dataclass(frozen=True, slots=True)
class ImagePage:
    """One page of image results."""

    query: str
    page: int
    per_page: int
    results: int
    matched: str  # "all" words, "any" word, or "none"
    images: tuple[ImageRow, ...]
    seconds: float

    @property
    def pages(self) -> int:
        return max(1, -(-self.results // self.per_page))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["pages"] = self.pages
        return data


class ImageSearch:
    """Searches one folder's images; open once, ask many queries."""

    def __init__(self, crawl_dir: Path) -> None:
        path = crawl_dir / INDEX_DIR / IMAGES_FILE
        if not path.is_file():
            raise SearchError(
                f"{crawl_dir} has no image index: run 'gossamer index {crawl_dir}'"
                f" (an index made before images were kept: rm -r {crawl_dir / INDEX_DIR} first)"
            )
        self._store = ImageStore(path, readonly=True)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> ImageSearch:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def images(self) -> int:
        return self._store.count()

    def search(self, text: str, *, page: int = 1, per_page: int = IMAGES_PER_PAGE) -> ImagePage:
        """Page ``page`` (from 1; past the last, the last) of the images for ``text``."""
        started = time.perf_counter()
        parsed = parse_query(text)
        found: list[ImageRow] = []
        matched = "none"
        for every, label in ((True, "all"), (False, "any")):
            expression = fts_expression(parsed, every=every)
            if not expression:
                break
            rows = self._store.search(expression, _LIMIT)
            found = [r for r in rows if _on_sites(r.page_url, parsed.sites, parsed.exclude_sites)]
            if found:
                matched = label
                break
        last = max(1, -(-len(found) // per_page))
        page = min(max(page, 1), last)
        shown = found[(page - 1) * per_page : page * per_page]
        return ImagePage(
            text, page, per_page, len(found), matched, tuple(shown), time.perf_counter() - started
        )
