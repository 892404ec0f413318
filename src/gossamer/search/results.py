"""Search side, output values: a page of results, as the terminal, JSON and the web UI see it.

Data flow: engine -> **results** -> CLI output or web pages. Strings in here come from
crawled pages and are raw text; whoever renders them escapes them for their medium.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Copy", "HitScores", "SearchHit", "SearchPage", "Snippet"]


@dataclass(frozen=True, slots=True)
class Snippet:
    """A fragment of the page with the query terms marked by character ranges."""

    text: str
    highlights: tuple[tuple[int, int], ...] = ()

    def parts(self) -> list[tuple[str, bool]]:
        """The text cut into (piece, highlighted) pairs, in order."""
        pieces: list[tuple[str, bool]] = []
        at = 0
        for start, end in self.highlights:
            if start > at:
                pieces.append((self.text[at:start], False))
            pieces.append((self.text[start:end], True))
            at = end
        if at < len(self.text):
            pieces.append((self.text[at:], False))
        return pieces

    @staticmethod
    def from_bytes_ranges(fragment: str, ranges: list[tuple[int, int]]) -> Snippet:
        """tantivy reports UTF-8 byte ranges; Python strings index characters."""
        data = fragment.encode()
        spans: list[tuple[int, int]] = []
        for start, end in sorted(ranges):
            char_start = len(data[:start].decode(errors="ignore"))
            char_end = char_start + len(data[start:end].decode(errors="ignore"))
            if spans and char_start < spans[-1][1]:
                continue  # overlapping highlight: keep the first
            spans.append((char_start, char_end))
        return Snippet(fragment, tuple(spans))


@dataclass(frozen=True, slots=True)
class HitScores:
    bm25: float
    text: float  # bm25 relative to the best candidate, 0..1
    pagerank: float  # as computed (sums to 1 over the graph)
    pagerank_scaled: float  # log-scaled 0..1, as blended
    host_rank: float
    host_rank_scaled: float
    blended: float
    tier: int  # 0: every term in the title, 1: some, 2: none
    similarity: float = 0.0  # cosine of the page's vector and the query's (hybrid only)


@dataclass(frozen=True, slots=True)
class Copy:
    """Another page of a hit's duplicate group: ``exact`` when it has the same content (the
    same body digest), else a near-duplicate."""

    url: str
    title: str
    exact: bool


@dataclass(frozen=True, slots=True)
class SearchHit:
    position: int  # 1-based, over all pages of results
    url: str
    title: str
    host: str
    snippet: Snippet
    kind: str  # "html" or "pdf"
    lang: str
    crawled: str  # ISO 8601 UTC
    scores: HitScores
    duplicates: int  # other pages of its group: same_content + near_duplicates
    group: int
    same_content: int = 0  # other pages with the same body digest
    near_duplicates: int = 0  # other pages with nearly the same text
    copies: tuple[Copy, ...] = ()  # the first of them, exact ones first
    via_links: bool = False  # found only through the words of links pointing at it


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of results for one query."""

    query: str
    understood: str  # the query as parsed, e.g. 'write "ahead log" -journal site:x'
    page: int
    per_page: int
    matches: int  # documents tantivy matched, before duplicates were folded
    results: int  # results after folding, within the candidate window
    hits: tuple[SearchHit, ...]
    matched: str  # "all" terms, "any" term (fallback), "meaning" (hybrid: no word), "none"
    language: str | None
    pagerank_used: bool
    seconds: float

    @property
    def pages(self) -> int:
        return max(1, -(-self.results // self.per_page))

    def by_host(self) -> list[tuple[str, list[SearchHit]]]:
        """This page's hits grouped per host, hosts in order of their best hit."""
        groups: dict[str, list[SearchHit]] = {}
        for hit in self.hits:
            groups.setdefault(hit.host, []).append(hit)
        return list(groups.items())

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["pages"] = self.pages
        for hit in data["hits"]:
            hit["snippet"]["highlights"] = [list(r) for r in hit["snippet"]["highlights"]]
        return data
