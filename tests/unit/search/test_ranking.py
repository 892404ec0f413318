"""Ordering: title tiers, the PageRank blend, duplicate folding, weight checks."""

from __future__ import annotations

import numpy as np
import pytest

from gossamer.search import RankingWeights, SearchError
from gossamer.search.ranking import Candidate, log_scaled, order_candidates, tier


def cand(key: int, bm25: float, pr: float = 0.0, title: int = 0, group: int = -1) -> Candidate:
    return Candidate(key, bm25, pr, 0.0, title, key if group < 0 else group)


def test_tiers() -> None:
    assert [tier(2, 2), tier(1, 2), tier(0, 2), tier(0, 0)] == [0, 1, 2, 0]


def test_title_matches_come_first_then_blended_score() -> None:
    ranked = order_candidates(
        [cand(0, 10.0), cand(1, 2.0, title=1), cand(2, 1.0, title=2), cand(3, 9.0, pr=1.0)],
        terms=2,
        weights=RankingWeights(),
    )
    assert [o.candidate.key for o in ranked] == [2, 1, 3, 0]
    assert [o.tier for o in ranked] == [0, 1, 2, 2]
    assert ranked[-1].text == 1.0  # the best BM25 scores 1 after normalising


def test_weights_change_the_order() -> None:
    candidates = [cand(0, 10.0, pr=0.0), cand(1, 8.0, pr=1.0)]
    text_only = order_candidates(candidates, 1, RankingWeights(pagerank=0.0))
    rank_heavy = order_candidates(candidates, 1, RankingWeights(pagerank=1.0))
    assert [o.candidate.key for o in text_only] == [0, 1]
    assert [o.candidate.key for o in rank_heavy] == [1, 0]
    no_tiers = order_candidates(
        [cand(0, 1.0, title=1), cand(1, 5.0)], 1, RankingWeights(title_tiers=False)
    )
    assert [o.candidate.key for o in no_tiers] == [1, 0]


def test_one_result_per_group_keeps_the_best() -> None:
    ranked = order_candidates(
        [cand(0, 5.0, group=7), cand(1, 9.0, group=7), cand(2, 1.0, group=8)], 1, RankingWeights()
    )
    assert [o.candidate.key for o in ranked] == [1, 2]


def test_log_scaling() -> None:
    scaled = log_scaled(np.array([0.0, 0.25, 0.75]), 3)
    assert scaled[0] == 0.0 and scaled[2] == 1.0 and 0 < scaled[1] < 1
    assert log_scaled(np.zeros(0), 0).size == 0


def test_weights_are_validated() -> None:
    RankingWeights().validate()
    with pytest.raises(SearchError):
        RankingWeights(pagerank=-1).validate()
    with pytest.raises(SearchError):
        RankingWeights(text=float("nan")).validate()
    with pytest.raises(SearchError):
        RankingWeights(candidates=0).validate()
