"""Search side, ordering: blend text relevance with PageRank, title tiers, one hit per group.

Data flow: engine (BM25 candidates) -> **ranking** -> result pages. Pure functions over
plain numbers, so the ordering can be tested and tuned without an index.

The order follows seed 002's search engine: candidates whose title holds every query term
come first, then those whose title holds some, then the rest (``tier`` 0, 1, 2); inside a
tier, by the blended score

    ``text * bm25 / max(bm25) + pagerank * pr + host_rank * hr``

where ``pr`` and ``hr`` are log-scaled PageRank (``log(1 + rank * N) / log(1 + max * N)``,
in 0..1), because raw PageRank spans orders of magnitude and would otherwise drown the text
score or vanish next to it. Duplicate groups then keep only their best member.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gossamer.search.errors import SearchError

__all__ = ["Candidate", "RankingWeights", "log_scaled", "order_candidates"]


@dataclass(frozen=True, slots=True)
class RankingWeights:
    """The tunable knobs of the ranking; the defaults were chosen on the test web and docs."""

    text: float = 1.0
    pagerank: float = 0.3
    host_rank: float = 0.1
    title_tiers: bool = True
    # Field boosts for BM25: title and headings say what a page is about.
    title_boost: float = 3.0
    headings_boost: float = 2.0
    description_boost: float = 1.5
    url_boost: float = 1.0
    body_boost: float = 1.0
    candidates: int = 1000  # BM25 hits re-ranked; later ones are not reached

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
        )
        if any(not np.isfinite(n) or n < 0 for n in numbers):
            raise SearchError("ranking weights must be finite and not negative")
        if self.candidates < 1:
            raise SearchError("the number of candidates must be at least 1")


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


def log_scaled(scores: npt.NDArray[np.float64], nodes: int) -> npt.NDArray[np.float64]:
    """PageRank (summing to 1 over ``nodes``) mapped to 0..1 on a log scale."""
    if scores.size == 0 or nodes == 0:
        return np.zeros_like(scores)
    relative = np.log1p(scores * nodes)
    top = float(relative.max())
    return relative / top if top > 0 else relative


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
