"""Search side, meaning: fuse the blend's order with the pages nearest the query in meaning.

Data flow: engine (the blend's ordered hits + the page vectors' nearest pages) -> **hybrid**
-> result pages. Pure functions over plain numbers, like ``ranking``.

Two ways to fuse, chosen by ``RankingWeights.fusion``; which one ships, and its weights,
were picked on the tuning corpus by ``benchmarks/hybrid_quality.py``'s protocol:

* ``rrf``, reciprocal-rank fusion: ``1 / (k + r_blend) + semantic / (k + r_vector)`` over
  the first ``semantic_depth`` pages of each list (a page absent from a list gets nothing
  from it). Only ranks count, so BM25's scale never meets the cosine's.
* ``mix``: ``blend / best blend + semantic * cosine``, the cosine computed exactly for every
  page of either list, so a page found by its words gains by its meaning too.

Both keep one page per duplicate group (the best placed), and break ties by the blend's
order, then the vector's, then the page number: the same input, the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Fused", "fuse"]


@dataclass(frozen=True, slots=True)
class Fused:
    """One page of the fused order: its number, group and fused score, and where each side
    had it (0: absent)."""

    num: int
    group: int
    score: float
    blend_rank: int
    vector_rank: int
    similarity: float


def fuse(
    blend: Sequence[tuple[int, int, float]],
    vector: Sequence[tuple[int, int, float]],
    similarity: dict[int, float],
    *,
    fusion: str,
    semantic: float,
    rrf_k: int,
) -> list[Fused]:
    """``blend``: (num, group, blended score) in the blend's order, one per group;
    ``vector``: (num, group, cosine) best first; ``similarity``: the cosine of every page of
    either list (``mix`` reads it). The pages of both, fused, best first, one per group."""
    blend_rank = {num: i + 1 for i, (num, _, _) in enumerate(blend)}
    vector_rank: dict[int, int] = {}
    for i, (num, _, _) in enumerate(vector):
        vector_rank.setdefault(num, i + 1)
    groups = {num: group for num, group, _ in vector}
    groups.update({num: group for num, group, _ in blend})
    blended = {num: score for num, _, score in blend}
    best = max((score for _, _, score in blend), default=0.0) or 1.0
    fused = []
    for num, group in groups.items():
        b, v = blend_rank.get(num, 0), vector_rank.get(num, 0)
        if fusion == "rrf":
            score = (1.0 / (rrf_k + b) if b else 0.0) + (semantic / (rrf_k + v) if v else 0.0)
        else:
            score = blended.get(num, 0.0) / best + semantic * similarity.get(num, 0.0)
        fused.append(Fused(num, group, score, b, v, similarity.get(num, 0.0)))
    absent = len(blend) + len(vector) + 1  # absent from a list: after everything in it
    fused.sort(key=lambda f: (-f.score, f.blend_rank or absent, f.vector_rank or absent, f.num))
    seen: set[int] = set()
    kept = []
    for item in fused:
        if item.group not in seen:
            seen.add(item.group)
            kept.append(item)
    return kept
