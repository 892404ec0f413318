"""Search side, ordering: blend text relevance with PageRank, title tiers, one hit per group.

Data flow: engine (BM25 candidates) -> **ranking** -> result pages. Pure functions over
plain numbers, so the ordering can be tested and tuned without an index.

Candidates are ordered by the blended score

    ``text * bm25 / max(bm25) + pagerank * pr + host_rank * hr``

where ``bm25`` is the field-weighted text score of ``compile`` (anchor text and the
proximity bonus included) and ``pr`` and ``hr`` are log-scaled PageRank
(``log(1 + rank * N) / log(1 + max * N)``, in 0..1): a small additive prior, since raw
PageRank spans orders of magnitude and would otherwise drown the text score or vanish next
to it. Seed 002's title tiers (every query term in the title first, then some, then none:
``tier`` 0, 1, 2) can be put before the score; they are off by default, having lost in the
ablation of BENCHMARKS.md. Duplicate groups then keep only their best member.

``order_candidates`` orders ``Candidate`` values; ``order_columns`` does the same over
parallel lists, for the engine, which has up to 1,000 candidates a query and shows 30: the
same arithmetic in the same order, so the same scores to the last bit and the same order.

Two presets name the rankings a user can choose (``gossamer search --ranking``): ``bm25``,
the field-weighted text score alone as before anchor text and proximity, and ``blend``,
the default, every component with the weights tuned on one documentation corpus and checked
on another (``benchmarks/search_quality.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from gossamer.search.errors import SearchError

__all__ = [
    "FUSIONS",
    "RANKINGS",
    "Candidate",
    "Columns",
    "Ranking",
    "RankingWeights",
    "log_scaled",
    "order_candidates",
    "order_columns",
]


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """The tunable knobs of the ranking; the defaults are the ``blend`` preset.

    Every value is the grid search's choice on the SQLite documentation corpus
    (``benchmarks/search_quality.py``: field boosts, anchor, proximity, PageRank, title
    tiers), measured on the Python and git documentation, which it never saw."""

    text: float = 1.0
    pagerank: float = 0.3
    host_rank: float = 0.1
    title_tiers: bool = False
    # Field boosts for BM25: title and headings say what a page is about.
    title_boost: float = 1.5
    headings_boost: float = 1.25
    description_boost: float = 1.0
    url_boost: float = 1.0
    body_boost: float = 1.0
    anchor_boost: float = 2.0  # words of the links pointing at the page
    proximity_boost: float = 1.0  # the query's words near each other, times the field boost
    proximity_slop: int = 0  # positions allowed between them (0: side by side, in order)
    candidates: int = 1000  # BM25 hits re-ranked; later ones are not reached
    # The hybrid ranking (``hybrid``): 0 leaves the page vectors out (every other preset).
    semantic: float = 0.0  # weight of the pages nearest the query in meaning
    fusion: str = "rrf"  # "rrf" (reciprocal ranks) or "mix" (blend + semantic * cosine)
    rrf_k: int = 60  # rrf's damping of rank: 1 / (k + rank)
    semantic_depth: int = 100  # pages taken from each side before fusing

    @staticmethod
    def preset(name: str) -> RankingWeights:
        """The weights of a named ranking: one of ``RANKINGS``."""
        try:
            return RANKINGS[name]
        except KeyError:
            names = ", ".join(RANKINGS)
            raise SearchError(f"unknown ranking {name!r}; choose one of: {names}") from None

    def validate(self) -> None:
        numbers = (
            self.text,
            self.pagerank,
            self.host_rank,
            self.title_boost,
            self.headings_boost,
            self.description_boost,
            self.url_boost,
            self.body_boost,
            self.anchor_boost,
            self.proximity_boost,
        )
        if any(not math.isfinite(n) or n < 0 for n in numbers):
            raise SearchError("ranking weights must be finite and not negative")
        if self.proximity_slop < 0:
            raise SearchError("the proximity slop must not be negative")
        if self.candidates < 1:
            raise SearchError("the number of candidates must be at least 1")
        if not math.isfinite(self.semantic) or self.semantic < 0:
            raise SearchError("the semantic weight must be finite and not negative")
        if self.fusion not in FUSIONS:
            raise SearchError(f"fusion must be one of: {', '.join(FUSIONS)}")
        if self.rrf_k < 1 or self.semantic_depth < 1:
            raise SearchError("rrf_k and semantic_depth must be at least 1")

    @property
    def hybrid(self) -> bool:
        """Whether the page vectors take part."""
        return self.semantic > 0


FUSIONS = ("rrf", "mix")


RANKINGS: dict[str, RankingWeights] = {
    "blend": RankingWeights(),
    # Issue 6's field-weighted BM25 and nothing else: the baseline every blend is judged by.
    "bm25": RankingWeights(
        pagerank=0.0,
        host_rank=0.0,
        title_tiers=False,
        anchor_boost=0.0,
        proximity_boost=0.0,
        title_boost=3.0,
        headings_boost=2.0,
        description_boost=1.5,
    ),
    # The blend fused with the pages nearest in meaning (page vectors of ``gossamer index
    # --embeddings``): blend / best blend + cosine over both sides' first 100, the pick of
    # benchmarks/hybrid_quality.py's 13-point grid on SQLite (BENCHMARKS.md, issue 35).
    "hybrid": RankingWeights(semantic=1.0, fusion="mix", semantic_depth=100),
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One BM25 hit with what the ordering needs."""

    key: int  # position in the engine's hit list
    bm25: float
    pagerank: float  # log-scaled, 0..1
    host_rank: float  # log-scaled, 0..1
    title_terms: int  # query terms found in the title
    group: int


@dataclass(frozen=True, slots=True)
class Ordered:
    candidate: Candidate
    tier: int
    text: float  # bm25 / max bm25 over the candidates
    score: float  # the blended score


def log_scaled(scores: Sequence[float], nodes: int) -> list[float]:
    """PageRank (summing to 1 over ``nodes``) mapped to 0..1 on a log scale."""
    if not scores or nodes == 0:
        return [0.0] * len(scores)
    relative = [math.log1p(score * nodes) for score in scores]
    top = max(relative)
    return [value / top for value in relative] if top > 0 else relative


def tier(title_terms: int, terms: int) -> int:
    """0 when the title holds every term (or there are none), 1 for some, 2 for none."""
    if title_terms >= terms:
        return 0
    return 1 if title_terms else 2


def order_candidates(
    candidates: Sequence[Candidate], terms: int, weights: RankingWeights
) -> list[Ordered]:
    """Candidates in result order, one per duplicate group."""
    best = max((c.bm25 for c in candidates), default=0.0) or 1.0
    ordered = []
    for c in candidates:
        text = c.bm25 / best
        score = weights.text * text + weights.pagerank * c.pagerank
        score += weights.host_rank * c.host_rank
        level = tier(c.title_terms, terms) if weights.title_tiers else 0
        ordered.append(Ordered(c, level, text, score))
    # Ties fall back to the BM25 order, which tantivy makes deterministic.
    ordered.sort(key=lambda o: (o.tier, -o.score, o.candidate.key))
    seen: set[int] = set()
    kept = []
    for item in ordered:
        if item.candidate.group not in seen:
            seen.add(item.candidate.group)
            kept.append(item)
    return kept


@dataclass(frozen=True, slots=True)
class Columns:
    """The candidates as parallel lists in BM25 order (a candidate's ``key`` is its
    position): what the engine reads from tantivy, with no object per hit."""

    bm25: Sequence[float]
    pagerank: Sequence[float]
    host_rank: Sequence[float]
    title_terms: Sequence[int] | None  # None: no title counts, 0 for every candidate
    group: Sequence[int]


class Ranking(Sequence[Ordered]):
    """``order_columns``' answer: the kept candidates in result order, as ``Ordered``
    values built only for the positions read (a page shows 30 of up to 1,000)."""

    __slots__ = ("_best", "_columns", "_keys", "_scores", "_tiers")

    def __init__(
        self,
        columns: Columns,
        keys: list[int],
        scores: list[float],
        tiers: list[int] | None,
        best: float,
    ) -> None:
        self._columns, self._keys, self._scores = columns, keys, scores
        self._tiers, self._best = tiers, best

    def __len__(self) -> int:
        return len(self._keys)

    @overload
    def __getitem__(self, index: int) -> Ordered: ...

    @overload
    def __getitem__(self, index: slice) -> list[Ordered]: ...

    def __getitem__(self, index: int | slice) -> Ordered | list[Ordered]:
        if isinstance(index, slice):
            return [self._item(key) for key in self._keys[index]]
        return self._item(self._keys[index])

    def without_groups(self, groups: set[int], start: int = 0) -> Ranking:
        """The kept candidates from position ``start`` on whose group is not in ``groups``,
        as a ranking of their own (no ``Ordered`` is built): what follows a fused head."""
        group = self._columns.group
        keys = [key for key in self._keys[start:] if group[key] not in groups]
        return Ranking(self._columns, keys, self._scores, self._tiers, self._best)

    def _item(self, key: int) -> Ordered:
        c = self._columns
        candidate = Candidate(
            key=key,
            bm25=c.bm25[key],
            pagerank=c.pagerank[key],
            host_rank=c.host_rank[key],
            title_terms=c.title_terms[key] if c.title_terms is not None else 0,
            group=c.group[key],
        )
        level = self._tiers[key] if self._tiers is not None else 0
        return Ordered(candidate, level, c.bm25[key] / self._best, self._scores[key])


def order_columns(columns: Columns, terms: int, weights: RankingWeights) -> Ranking:
    """``order_candidates`` over columns: the same scores, computed the same way, and the
    same order (tier, then score, then BM25 position), one per duplicate group."""
    bm25, pagerank, host_rank = columns.bm25, columns.pagerank, columns.host_rank
    best = max(bm25, default=0.0) or 1.0
    text_w, pagerank_w, host_w = weights.text, weights.pagerank, weights.host_rank
    scores = [
        text_w * (b / best) + pagerank_w * p + host_w * h
        for b, p, h in zip(bm25, pagerank, host_rank, strict=True)
    ]
    tiers = None
    if weights.title_tiers:
        titles = columns.title_terms or [0] * len(scores)
        tiers = [tier(count, terms) for count in titles]
        keys = sorted(range(len(scores)), key=lambda i: (tiers[i], -scores[i], i))
    else:
        # A stable sort, reversed, keeps equal scores in BM25 order, as ``order_candidates``.
        keys = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    group = columns.group
    kept = keys
    if len(set(group)) < len(group):  # some candidates share a group: keep the first of each
        seen: set[int] = set()
        kept = []
        for key in keys:
            if group[key] not in seen:
                seen.add(group[key])
                kept.append(key)
    return Ranking(columns, kept, scores, tiers, best)
