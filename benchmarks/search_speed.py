"""Speed of the search side: indexing from WARC, query latency at scale, PageRank on 10M links.

Three measurements, each printed with its setup:

* indexing: a synthetic crawl folder (WARC files + crawl.db, written with Gossamer's own
  store) of ``--pages`` HTML pages is indexed end to end by ``build_index``, which reads
  every record back from the WARC files; reported as pages per second, for 1 and for
  ``--workers`` worker processes;
* queries: ``--queries`` queries (one to three words, some phrases, some ``site:``) are run
  against that index with the blended ranking; reported as p50/p95/p99 latency;
* PageRank: a random graph of ``--edges`` links over ``--nodes`` nodes, with link targets
  drawn from a power law as on the web, ranked to the default tolerance.

Page text is drawn from a Zipf-distributed vocabulary, so term statistics look like text.

    python benchmarks/search_speed.py --pages 100000 --edges 10000000 --out /tmp/speed

``--reuse`` queries an index an earlier run left under ``--out`` (its page count and seed
are those of that run) instead of writing and indexing the corpus again.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import time
from pathlib import Path

import numpy as np

from gossamer.fetch.result import FetchResult
from gossamer.index import build_index
from gossamer.rank.pagerank import pagerank
from gossamer.search import SearchEngine
from gossamer.store import MetadataDB, WarcStore, page_row

VOCABULARY = 30_000
HOSTS = 500


def _words(rng: np.random.Generator, count: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.15, size=count), VOCABULARY)
    return [f"w{r}" for r in ranks]


def _page(rng: np.random.Generator, number: int) -> tuple[str, bytes, list[str]]:
    host = f"host{number % HOSTS}.bench.test"
    url = f"http://{host}/page/{number}.html"
    title = " ".join(_words(rng, int(rng.integers(2, 7))))
    paragraphs = "".join(
        f"<p>{' '.join(_words(rng, int(rng.integers(30, 120))))}.</p>"
        for _ in range(int(rng.integers(2, 8)))
    )
    targets = rng.integers(0, 10**9, size=int(rng.integers(5, 25)))
    links = [f"http://host{t % HOSTS}.bench.test/page/{t % 10**6}.html" for t in targets]
    nav = "".join(f'<li><a href="{link}">link</a></li>' for link in links)
    body = (
        f"<!DOCTYPE html><html lang=en><head><title>{title}</title>"
        f'<meta name="description" content="{title} page"></head>'
        f"<body><nav><ul>{nav}</ul></nav><h1>{title}</h1>{paragraphs}"
        f"<footer>footer text</footer></body></html>"
    ).encode()
    return url, body, links


def make_corpus(folder: Path, pages: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    with (
        WarcStore(folder / "warc") as warc,
        MetadataDB(folder / "crawl.db", batch_size=5000) as db,
    ):
        for number in range(pages):
            url, body, links = _page(rng, number)
            result = FetchResult(
                url=url,
                status=200,
                reason="OK",
                response_headers=(("Content-Type", "text/html; charset=utf-8"),),
                body=body,
                content=body,
                content_type="text/html; charset=utf-8",
                started_at=1_700_000_000.0 + number,
            )
            location = warc.write(result)
            host = url.split("/")[2]
            db.add_page(page_row(result, location, depth=1, referrer=None, host=host))
            db.add_links(url, links)
    return time.perf_counter() - started


def bench_index(folder: Path, pages: int, workers: int, seed: int) -> None:
    for count in sorted({1, workers}):
        target = folder / f"crawl-{count}"
        shutil.rmtree(target, ignore_errors=True)
        made = make_corpus(target, pages, seed)
        report = build_index(target, workers=count)
        print(
            f"index: {pages} pages, {count} worker(s): {report.seconds:.1f} s,"
            f" {report.pages_per_second:.0f} pages/s (corpus written in {made:.1f} s)"
        )


def query_texts(queries: int, seed: int) -> list[str]:
    """The benchmark's queries: one to three Zipf-common words, some phrases, some site:."""
    rng = random.Random(seed)
    texts = []
    for _ in range(queries):
        words = [f"w{int(rng.paretovariate(1.0) * 20)}" for _ in range(rng.randint(1, 3))]
        kind = rng.random()
        if kind < 0.15 and len(words) > 1:
            texts.append(f'"{" ".join(words)}"')
        elif kind < 0.3:
            texts.append(f"{words[0]} site:host{rng.randrange(HOSTS)}.bench.test")
        else:
            texts.append(" ".join(words))
    return texts


def indexed(folder: Path) -> Path | None:
    """The first crawl folder under ``folder`` with an index, if any."""
    return next((p for p in sorted(folder.glob("crawl-*")) if (p / "index").is_dir()), None)


def bench_queries(folder: Path, queries: int, seed: int) -> None:
    target = indexed(folder)
    if target is None:
        raise SystemExit(f"no indexed crawl-* folder under {folder}")
    texts = query_texts(queries, seed)
    with SearchEngine(target) as engine:
        engine.search("warm up")
        latencies = []
        for text in texts:
            started = time.perf_counter()
            engine.search(text)
            latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    cut = statistics.quantiles(latencies, n=100)
    print(
        f"queries: {len(texts)} over {engine.documents} documents:"
        f" p50 {cut[49]:.1f} ms, p95 {cut[94]:.1f} ms, p99 {cut[98]:.1f} ms,"
        f" max {latencies[-1]:.1f} ms"
    )


def bench_pagerank(nodes: int, edges: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, nodes, size=edges, dtype=np.int64)
    # Web in-degrees follow a power law: a few pages get most links.
    dst = (np.minimum(rng.zipf(1.6, size=edges), nodes) - 1 + src * 7919) % nodes
    started = time.perf_counter()
    result = pagerank(src, dst.astype(np.int64), nodes)
    elapsed = time.perf_counter() - started
    print(
        f"pagerank: {edges:,} edges over {nodes:,} nodes: {elapsed:.2f} s,"
        f" {result.iterations} iterations, L1 change {result.residual:.1e},"
        f" converged {result.converged}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-search-speed"))
    parser.add_argument("--skip", choices=["index", "pagerank"], action="append", default=[])
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="query the index already under --out (from an earlier run) instead of building one",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if "index" not in args.skip:
        if not (args.reuse and indexed(args.out) is not None):
            bench_index(args.out, args.pages, args.workers, args.seed)
        bench_queries(args.out, args.queries, args.seed)
    if "pagerank" not in args.skip:
        bench_pagerank(args.nodes, args.edges, args.seed)


if __name__ == "__main__":
    main()
