"""Cost of hybrid retrieval (issue 35): index time and size with page vectors against without,
and query latency of ``hybrid`` against ``blend`` on the same index.

The corpus and queries are ``search_speed.py``'s (``--pages`` synthetic pages of Zipf words,
500 queries of one to three words, some phrases and ``site:``). The index is built once
without vectors (``build_index``), then the vectors are added by a second run with
``embeddings=True``: that run reads no page (all are indexed) and only embeds, so its time is
the embeddings' own. Latency: the engine opened once (as ``gossamer serve`` does), one warm-up
query per ranking, then every query under ``blend`` and under ``hybrid`` in turn (alternating,
so both meet the same machine load), first page of 30 with snippets.

    python benchmarks/hybrid_speed.py --pages 100000 --out /tmp/hybrid100k    # builds
    python benchmarks/hybrid_speed.py --reuse --out /tmp/hybrid100k           # queries again
    python benchmarks/hybrid_speed.py --reuse --revector --out /tmp/hybrid100k  # vectors again
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np
from search_speed import make_corpus, query_texts

from gossamer.index import build_index
from gossamer.index.embed import Embedder
from gossamer.index.schema import INDEX_DIR
from gossamer.index.vectors import HEADER_FILE, VECTORS_FILE, Vectors
from gossamer.search import SearchEngine
from gossamer.search.ranking import RANKINGS


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build(folder: Path, pages: int, workers: int, seed: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    made = make_corpus(folder, pages, seed)
    plain = build_index(folder, workers=workers)
    size = _size(folder / INDEX_DIR)
    print(
        f"index without vectors: {plain.indexed} pages in {plain.seconds:.1f} s"
        f" ({plain.pages_per_second:.0f} pages/s, {workers} worker(s)); {size / 1e6:.1f} MB"
        f" (corpus written in {made:.1f} s)"
    )
    with_vectors = build_index(folder, workers=workers, embeddings=True)
    v = with_vectors.vectors
    assert v is not None
    extra = (folder / INDEX_DIR / VECTORS_FILE).stat().st_size
    extra += (folder / INDEX_DIR / HEADER_FILE).stat().st_size
    total = plain.seconds + v.seconds
    print(
        f"vectors: {v.embedded} pages embedded in {v.seconds:.1f} s"
        f" ({v.embedded / max(v.seconds, 1e-9):.0f} pages/s); +{extra / 1e6:.1f} MB"
        f" ({extra / size:+.0%} on the index); indexing with vectors {total:.1f} s,"
        f" {plain.indexed / total:.0f} pages/s ({total / plain.seconds:.2f}x the time)"
    )


def revector(folder: Path, workers: int) -> None:
    """The vectors of an indexed folder made again from nothing: their own time."""
    for name in (VECTORS_FILE, HEADER_FILE):
        (folder / INDEX_DIR / name).unlink(missing_ok=True)
    report = build_index(folder, workers=workers, embeddings=True).vectors
    assert report is not None
    print(
        f"vectors again: {report.embedded} pages embedded in {report.seconds:.1f} s"
        f" ({report.embedded / max(report.seconds, 1e-9):.0f} pages/s)"
    )


def latency(folder: Path, queries: int, seed: int) -> None:
    texts = query_texts(queries, seed)
    rankings = {"blend": RANKINGS["blend"], "hybrid": RANKINGS["hybrid"]}
    times: dict[str, list[float]] = {name: [] for name in rankings}
    with SearchEngine(folder) as engine:
        for weights in rankings.values():
            engine.weights = weights
            engine.search("warm up")  # the hybrid one loads the model and maps the vectors
        for text in texts:
            for name, weights in rankings.items():
                engine.weights = weights
                started = time.perf_counter()
                engine.search(text)
                times[name].append((time.perf_counter() - started) * 1000)
        documents = engine.documents
    p95 = {}
    for name, values in times.items():
        cut = statistics.quantiles(values, n=100)
        p95[name] = cut[94]
        print(
            f"{name}: {len(values)} queries over {documents} documents: p50 {cut[49]:.1f} ms,"
            f" p95 {cut[94]:.1f} ms, p99 {cut[98]:.1f} ms, max {max(values):.1f} ms"
        )
    print(f"hybrid p95 / blend p95: {p95['hybrid'] / p95['blend']:.2f}x")
    nearest_alone(folder, texts)


def nearest_alone(folder: Path, texts: list[str]) -> None:
    """The exact neighbour search by itself (the part that grows with the index): what
    says when an approximate index would be worth having."""
    vectors = Vectors.open(folder)
    assert vectors is not None
    queries = Embedder().embed(texts)
    np.asarray(vectors.matrix).sum()  # read the file into the page cache once
    took = []
    for query in queries:
        started = time.perf_counter()
        vectors.nearest(query, 100)
        took.append((time.perf_counter() - started) * 1000)
    cut = statistics.quantiles(took, n=100)
    print(
        f"nearest 100 of {vectors.rows} vectors alone (exact, numpy): p50 {cut[49]:.1f} ms,"
        f" p95 {cut[94]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-hybrid-speed"))
    parser.add_argument("--reuse", action="store_true", help="query the index built earlier")
    parser.add_argument(
        "--revector", action="store_true", help="with --reuse: make the vectors again, timed"
    )
    args = parser.parse_args()
    folder = args.out / "crawl"
    if not (args.reuse and (folder / INDEX_DIR / HEADER_FILE).is_file()):
        build(folder, args.pages, args.workers, args.seed)
    elif args.revector:
        revector(folder, args.workers)
    latency(folder, args.queries, args.seed)


if __name__ == "__main__":
    main()
