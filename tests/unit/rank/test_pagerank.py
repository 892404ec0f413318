"""PageRank by power iteration, checked against the dense Google-matrix eigenvector."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from gossamer.rank.pagerank import pagerank


def dense_pagerank(edges: list[tuple[int, int]], n: int, damping: float) -> npt.NDArray[np.float64]:
    """The textbook definition: principal eigenvector of the Google matrix."""
    links = np.zeros((n, n))
    for src, dst in edges:
        links[dst, src] += 1
    out = links.sum(axis=0)
    transition = np.where(out > 0, links / np.where(out > 0, out, 1), 1.0 / n)
    google = damping * transition + (1 - damping) / n
    values, vectors = np.linalg.eig(google)
    principal = np.real(vectors[:, np.argmax(np.real(values))])
    return np.asarray(principal / principal.sum(), dtype=np.float64)


def run(edges: list[tuple[int, int]], n: int) -> npt.NDArray[np.float64]:
    src = np.array([s for s, _ in edges], dtype=np.int64)
    dst = np.array([d for _, d in edges], dtype=np.int64)
    return pagerank(src, dst, n).scores


def test_matches_the_dense_definition_with_dangling_nodes() -> None:
    edges = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 2), (4, 0), (4, 3)]
    n = 6  # node 5 has no links at all: dangling, and nobody links to it
    scores = run(edges, n)
    assert scores.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(scores, dense_pagerank(edges, n, 0.85), atol=1e-8)


def test_random_graph_matches_and_reports_convergence() -> None:
    rng = np.random.default_rng(7)
    n = 60
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(300, 2)) if a != b}
    edges = sorted(pairs)
    src = np.array([s for s, _ in edges], dtype=np.int64)
    dst = np.array([d for _, d in edges], dtype=np.int64)
    result = pagerank(src, dst, n, damping=0.85, tolerance=1e-10)
    assert result.converged
    assert 10 < result.iterations < 200
    assert result.residual < 1e-10
    np.testing.assert_allclose(result.scores, dense_pagerank(edges, n, 0.85), atol=1e-8)


def test_symmetric_cycle_is_uniform() -> None:
    scores = run([(0, 1), (1, 2), (2, 0)], 3)
    np.testing.assert_allclose(scores, [1 / 3] * 3)


def test_linked_page_outranks_its_linkers() -> None:
    scores = run([(1, 0), (2, 0), (3, 0)], 4)
    assert scores[0] > scores[1] == pytest.approx(scores[2])


def test_iteration_limit_is_reported_not_raised() -> None:
    src = np.array([0, 1, 1], dtype=np.int64)
    dst = np.array([1, 0, 2], dtype=np.int64)
    result = pagerank(src, dst, 3, tolerance=1e-15, max_iterations=3)
    assert result.iterations == 3
    assert not result.converged


def test_edge_cases() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert pagerank(empty, empty, 0).scores.size == 0
    np.testing.assert_allclose(pagerank(empty, empty, 4).scores, [0.25] * 4)
    with pytest.raises(ValueError, match="damping"):
        pagerank(empty, empty, 2, damping=1.0)
