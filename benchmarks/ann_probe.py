"""Would an approximate neighbour index pay at 100k pages? usearch's HNSW against numpy's
exact product, on 100,000 random unit vectors of 256 dimensions (issue 35).

Random vectors are the hard case for a graph index (no clusters to follow), so its recall
here is a floor, and its build time a ceiling. usearch is not a dependency of Gossamer; this
probe installs nothing:

    .venv/bin/pip install -c constraints.txt usearch==2.26.6   # once, by hand
    .venv/bin/python benchmarks/ann_probe.py
"""

from __future__ import annotations

import time

import numpy as np
from usearch.index import Index

ROWS, DIMENSIONS, K = 100_000, 256, 100


def main() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((ROWS, DIMENSIONS)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = Index(ndim=DIMENSIONS, metric="ip", dtype="f32")
    started = time.perf_counter()
    index.add(np.arange(ROWS, dtype=np.uint64), matrix, threads=2)
    print(f"HNSW build: {time.perf_counter() - started:.0f} s for {ROWS} vectors, 2 threads")
    ann, exact, recall = [], [], []
    for row in range(200):
        query = matrix[row]
        started = time.perf_counter()
        found = index.search(query, K)
        ann.append(time.perf_counter() - started)
        started = time.perf_counter()
        best = np.argpartition(-(matrix @ query), K - 1)[:K]
        exact.append(time.perf_counter() - started)
        recall.append(len(set(best.tolist()) & set(found.keys.tolist())) / K)
    for name, took in (("HNSW", ann), ("exact", exact)):
        cut = np.percentile(np.array(took) * 1000, [50, 95])
        print(f"{name} search of {K}: p50 {cut[0]:.1f} ms, p95 {cut[1]:.1f} ms")
    print(f"HNSW recall@{K} against exact: {np.mean(recall):.2f}")


if __name__ == "__main__":
    main()
