"""The engine's columnar ordering agrees with ``order_candidates`` exactly: same scores to
the last bit, same order (ties in BM25 order), same group folding, with tiers on or off."""

from __future__ import annotations

import random

import pytest

from gossamer.search import RankingWeights
from gossamer.search.engine import _clamped
from gossamer.search.ranking import Candidate, Columns, order_candidates, order_columns


def _candidates(rng: random.Random, n: int) -> list[Candidate]:
    # Few distinct values, so that scores tie and groups repeat.
    return [
        Candidate(
            key=i,
            bm25=rng.choice([0.5, 1.0, 1.7, 3.3, 9.25]) * rng.choice([1, 1, 0.1]),
            pagerank=rng.choice([0.0, 0.1, 0.35, 1.0]),
            host_rank=rng.choice([0.0, 0.2, 0.9]),
            title_terms=rng.randint(0, 3),
            group=rng.randint(0, n),
        )
        for i in range(n)
    ]


def _columns(candidates: list[Candidate], titles: bool = True) -> Columns:
    return Columns(
        bm25=[c.bm25 for c in candidates],
        pagerank=[c.pagerank for c in candidates],
        host_rank=[c.host_rank for c in candidates],
        title_terms=[c.title_terms for c in candidates] if titles else None,
        group=[c.group for c in candidates],
    )


@pytest.mark.parametrize("tiers", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_columns_order_as_candidates_do(tiers: bool, seed: int) -> None:
    rng = random.Random(seed)
    candidates = _candidates(rng, rng.randint(0, 300))
    weights = RankingWeights(title_tiers=tiers, pagerank=rng.choice([0.0, 0.3, 1.0]))
    expected = order_candidates(candidates, 2, weights)
    ranking = order_columns(_columns(candidates), 2, weights)
    assert len(ranking) == len(expected)
    assert list(ranking) == expected  # Ordered and Candidate values compare field by field
    assert ranking[3:40] == expected[3:40]
    if expected:
        assert ranking[-1] == expected[-1]


def test_no_title_counts_mean_zero_everywhere() -> None:
    candidates = [Candidate(i, 1.0 + i % 3, 0.0, 0.0, 0, i) for i in range(10)]
    weights = RankingWeights(title_tiers=True)
    assert list(order_columns(_columns(candidates, titles=False), 1, weights)) == (
        order_candidates(candidates, 1, weights)
    )


def test_equal_scores_keep_bm25_order_and_groups_keep_their_best() -> None:
    candidates = [
        Candidate(0, 2.0, 0.0, 0.0, 0, 5),
        Candidate(1, 2.0, 0.0, 0.0, 0, 6),
        Candidate(2, 4.0, 0.0, 0.0, 0, 6),
        Candidate(3, 2.0, 0.0, 0.0, 0, 7),
    ]
    ranking = order_columns(_columns(candidates), 1, RankingWeights())
    assert [o.candidate.key for o in ranking] == [2, 0, 3]
    assert ranking[0].text == 1.0 and ranking[1].text == 0.5


def test_no_candidates() -> None:
    ranking = order_columns(Columns([], [], [], None, []), 1, RankingWeights())
    assert len(ranking) == 0 and ranking[:30] == []


def test_fast_field_values_made_safe_indexes() -> None:
    values: list[int | float | bool | None] = [3, 0, 7]
    assert _clamped(values, 9) is values  # already fine: no copy
    assert _clamped([3, None, 12], 9) == [3, 0, 9]
    assert _clamped([True, 2], 9) == [1, 2]
    assert _clamped([None, 12], None) == [0, 12]
    assert _clamped([], 9) == []
