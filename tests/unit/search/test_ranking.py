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
        weights=RankingWeights(title_tiers=True),
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
    scaled = log_scaled([0.0, 0.25, 0.75], 3)
    assert scaled[0] == 0.0 and scaled[2] == 1.0 and 0 < scaled[1] < 1
    # log(1 + rank * N) / log(1 + max * N): the rank times the node count, not divided by it.
    assert scaled[1] == pytest.approx(np.log1p(0.75) / np.log1p(2.25))
    assert log_scaled([], 0) == []


def test_log_scaling_at_the_edges() -> None:
    assert log_scaled([], 5) == []  # no scores, some nodes
    assert log_scaled([0.5, 0.5], 0) == [0.0, 0.0]  # no graph
    assert log_scaled([1.0], 1) == [1.0]  # one page, one node
    assert log_scaled([0.5, 0.5], 2) == [1.0, 1.0]
    assert log_scaled([0.0, 0.0, 0.0], 3) == [0.0, 0.0, 0.0]  # all zero: no 0 / 0
    # The top is 1 even where log(1 + max * N) is below 1.
    small = log_scaled([0.1, 0.2], 2)
    assert max(small) == 1.0 and small[0] == pytest.approx(np.log1p(0.2) / np.log1p(0.4))


def test_weights_are_validated() -> None:
    RankingWeights().validate()
    # Zero turns a part of the blend off, and one candidate is enough: both are valid.
    RankingWeights(text=0.0, pagerank=0.0, host_rank=0.0, body_boost=0.0).validate()
    RankingWeights(candidates=1).validate()
    negative = "ranking weights must be finite and not negative"
    with pytest.raises(SearchError, match=f"^{negative}$"):
        RankingWeights(pagerank=-1).validate()
    with pytest.raises(SearchError, match=f"^{negative}$"):
        RankingWeights(text=float("nan")).validate()
    with pytest.raises(SearchError, match=r"^the number of candidates must be at least 1$"):
        RankingWeights(candidates=0).validate()


def test_no_candidates_and_no_tiers() -> None:
    assert order_candidates([], 2, RankingWeights()) == []
    flat = order_candidates(
        [cand(0, 1.0, title=2), cand(1, 5.0, title=0)], 2, RankingWeights(title_tiers=False)
    )
    assert [(o.candidate.key, o.tier) for o in flat] == [(1, 0), (0, 0)]


def test_host_rank_is_blended_into_the_score() -> None:
    weights = RankingWeights()
    # The same text score and PageRank; only the host's rank differs.
    obscure = Candidate(0, 5.0, 0.5, 0.0, 0, 0)
    known = Candidate(1, 5.0, 0.5, 0.8, 0, 1)
    ranked = order_candidates([obscure, known], 1, weights)
    assert [o.candidate.key for o in ranked] == [1, 0]
    assert ranked[0].score == pytest.approx(1.0 * 1.0 + 0.3 * 0.5 + 0.1 * 0.8)
    assert ranked[1].score == pytest.approx(1.0 * 1.0 + 0.3 * 0.5)
    # Enough host rank outweighs a small lead in text; its weight decides how much.
    leading = Candidate(2, 5.0, 0.0, 0.0, 0, 2)
    trailing = Candidate(3, 4.8, 0.0, 1.0, 0, 3)
    assert [o.candidate.key for o in order_candidates([leading, trailing], 1, weights)] == [3, 2]
    no_host = RankingWeights(host_rank=0.0)
    assert [o.candidate.key for o in order_candidates([leading, trailing], 1, no_host)] == [2, 3]
    heavy = order_candidates([obscure, known], 1, RankingWeights(host_rank=2.0))
    assert heavy[0].score == pytest.approx(1.0 + 0.3 * 0.5 + 2.0 * 0.8)


def test_presets_name_the_rankings_a_user_can_choose() -> None:
    assert RankingWeights.preset("blend") == RankingWeights()
    bm25 = RankingWeights.preset("bm25")
    assert (bm25.pagerank, bm25.host_rank, bm25.anchor_boost, bm25.proximity_boost) == (0, 0, 0, 0)
    assert not bm25.title_tiers
    with pytest.raises(SearchError, match="unknown ranking 'pagerank'; choose one of: blend, bm25"):
        RankingWeights.preset("pagerank")
    with pytest.raises(SearchError, match="slop"):
        RankingWeights(proximity_slop=-1).validate()
