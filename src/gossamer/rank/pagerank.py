"""Rank stage, algorithm: PageRank by power iteration on a sparse link matrix.

Data flow: graph -> **pagerank** -> export (Parquet) -> search. The transition matrix is
built once as CSR (one column per linking node, each out-link weighted 1/out-degree), so
an iteration is one sparse matrix-vector product: about 20 ms per 10 million links here.

Each iteration computes ``r' = d * M r + (d * dangling(r) + 1 - d) / N``: a node without
out-links (a page not crawled, or crawled with no links) hands its rank to every node
equally, as if the surfer jumped anywhere. The vector keeps sum 1, so scores of graphs of
different sizes compare after multiplying by N (1.0 = average). Iteration stops when the
L1 change falls below ``tolerance``; the number of iterations is reported, and reaching
``max_iterations`` first is reported as not converged rather than raised.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gossamer.rank.defaults import DAMPING, TOLERANCE

__all__ = ["DAMPING", "TOLERANCE", "PageRankResult", "pagerank"]

MAX_ITERATIONS = 1000


@dataclass(frozen=True, slots=True, eq=False)
class PageRankResult:
    """Scores (summing to 1) and how the iteration went."""

    scores: npt.NDArray[np.float64]
    iterations: int
    residual: float  # L1 change in the last iteration
    converged: bool
    damping: float
    tolerance: float


def pagerank(
    src: npt.NDArray[np.int64],
    dst: npt.NDArray[np.int64],
    nodes: int,
    *,
    damping: float = DAMPING,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> PageRankResult:
    """PageRank of a graph given as edge arrays over node numbers ``0 .. nodes-1``.

    Repeated edges count once per occurrence; callers pass de-duplicated edges when a
    page's many links to one target should count once.
    """
    if not 0.0 < damping < 1.0:
        raise ValueError(f"damping must be between 0 and 1, not {damping}")
    if nodes == 0:
        empty = np.zeros(0, dtype=np.float64)
        return PageRankResult(empty, 0, 0.0, True, damping, tolerance)
    out_degree = np.bincount(src, minlength=nodes).astype(np.float64)
    dangling = out_degree == 0
    weights = np.reciprocal(out_degree[src]) if len(src) else np.zeros(0)
    # CSR over (dst, src): row i lists who links to i, so M @ r gathers incoming rank.
    from scipy import sparse  # noqa: PLC0415 - only computing ranks needs scipy, not reading them

    matrix = sparse.coo_array((weights, (dst, src)), shape=(nodes, nodes)).tocsr()
    scores = np.full(nodes, 1.0 / nodes)
    teleport = (1.0 - damping) / nodes
    residual = float("inf")
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        spread = damping * float(scores[dangling].sum()) / nodes + teleport
        updated: npt.NDArray[np.float64] = damping * np.asarray(matrix @ scores) + spread
        residual = float(np.abs(updated - scores).sum())
        scores = updated
        if residual < tolerance:
            break
    return PageRankResult(
        scores=scores,
        iterations=iterations,
        residual=residual,
        converged=residual < tolerance,
        damping=damping,
        tolerance=tolerance,
    )
