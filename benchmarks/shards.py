"""A sharded index searched as one (issue 34): the same results as the single index?

For each crawl given, two copies of it are indexed (crawl.db copied, the WARC files linked):
one as the single index ``gossamer index`` writes, one split into ``--shards`` shards
(``gossamer index --shards N``); both are ranked. Then every query is asked of both, and
the report says

* the share of queries whose first ten URLs are the same, in the same order, and as a set;
* on the judged corpora (``quality_corpora``: the developers' judged queries in
  ``benchmarks/queries/``), MRR@10 and nDCG@10 of both, judged as ``search_quality`` does;
* the time of ``index`` and of a query (the ranking alone: ``ranked_urls``) for both.

tantivy's BM25 counts deleted documents until a merge drops them, and ``gossamer index``
deletes many (``relink``); which merges happen differs between one index and N shards. The
index run itself now writes again an index holding many (``index.compact``), so both are
compared as ``gossamer index`` leaves them; the index line says how many deleted documents
the compaction dropped and how long it took. ``--http N`` asks the first N
queries of each crawl again through ``serve --shard`` (``RemoteEngine``) against one
``gossamer serve`` of the sharded folder answering every shard, on loopback.

Queries: a judged corpus's own; for any other crawl (the 20k-page generator web), 300
queries of one to three words drawn (seeded) from the titles of its
indexed pages, so most match something.

    python benchmarks/shards.py --out /tmp/shards --crawl /path/to/crawl-20000 \\
        --quality /tmp/quality          # the folders search_quality.py crawled
    python benchmarks/shards.py --out /tmp/shards ... --reuse   # search the same indexes again
    python benchmarks/shards.py --out /tmp/shards-spark ... --engine spark  # shards built by Spark
"""

from __future__ import annotations

import argparse
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from quality_corpora import CORPORA
from search_quality import CUTOFF, judge

from gossamer.index import build_index
from gossamer.index.shards import read_layout
from gossamer.rank import rank_crawl
from gossamer.search import SearchEngine
from gossamer.search.docranks import save_doc_ranks
from gossamer.search.scatter import RemoteEngine
from gossamer.store.docstore import DocStore

SAMPLED = 300


def copy_crawl(source: Path, target: Path) -> Path:
    """A crawl folder of its own for ``source``'s crawl: crawl.db copied whole (through
    SQLite's backup, WAL included), the WARC files linked, no index."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    src = sqlite3.connect(f"file:{source / 'crawl.db'}?mode=ro", uri=True)
    dst = sqlite3.connect(target / "crawl.db")
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    (target / "warc").symlink_to((source / "warc").resolve())
    for name in ("crawl.json", "index.cdxj"):
        if (source / name).is_file():
            shutil.copy(source / name, target / name)
    return target


# ``--engine spark``: the sharded copy is indexed by Spark (``index --engine spark``), on
# this one session; the single index stays the local engine's.
_SPARK: list[Any] = []


def indexed(folder: Path, shards: int | None) -> float:
    started = time.perf_counter()
    if shards is not None and _SPARK:
        from gossamer.spark.indexer import index_on_spark  # noqa: PLC0415 - the spark extra

        report = index_on_spark(_SPARK[0], folder, shards=shards)
    else:
        report = build_index(folder, workers=2, shards=shards)
    seconds = time.perf_counter() - started
    rank_crawl(folder)
    save_doc_ranks(folder)
    done = report.compaction
    print(
        f"  {folder.name}: {report.documents} documents indexed in {seconds:.1f} s;"
        f" compaction: {done.reclaimed} deleted documents dropped from {done.indexes}"
        f" index(es) in {done.seconds:.2f} s",
        flush=True,
    )
    return seconds


def sampled_queries(folder: Path, count: int) -> list[str]:
    """``count`` queries of one to three words from the indexed pages' titles (seeded)."""
    draw = random.Random(34)
    with DocStore(folder / "index" / "docs.db", readonly=True) as store:
        titles = [t for (t,) in store._conn.execute("SELECT title FROM docs WHERE title != ''")]
    queries: list[str] = []
    while len(queries) < count and titles:
        words = [w for w in draw.choice(titles).split() if w.isalpha() and len(w) > 2]
        if words:
            k = min(len(words), draw.randint(1, 3))
            queries.append(" ".join(draw.sample(words, k)))
    return queries


@dataclass(frozen=True, slots=True)
class Compared:
    queries: int
    same_order: int
    same_set: int
    single_ms: float
    sharded_ms: float


def compare(single: SearchEngine, sharded: SearchEngine, queries: list[str]) -> Compared:
    same_order = same_set = 0
    spent = [0.0, 0.0]
    for query in queries:
        found = []
        for i, engine in enumerate((single, sharded)):
            started = time.perf_counter()
            found.append(engine.ranked_urls(query, limit=CUTOFF))
            spent[i] += time.perf_counter() - started
        same_order += found[0] == found[1]
        same_set += set(found[0]) == set(found[1])
    n = max(len(queries), 1)
    return Compared(len(queries), same_order, same_set, spent[0] / n * 1e3, spent[1] / n * 1e3)


def run(name: str, source: Path, out: Path, shards: int, *, reuse: bool, http: int) -> None:
    print(f"{name} ({source}):", flush=True)
    single, split = out / name / "single", out / name / f"shards-{shards}"
    single_s = split_s = float("nan")  # with --reuse: indexed by an earlier run
    if not (reuse and (single / "index" / "docs.db").is_file()):
        single_s = indexed(copy_crawl(source, single), None)
    if not (reuse and (split / "index" / "docs.db").is_file()):
        split_s = indexed(copy_crawl(source, split), shards)
    report(name, single, split, (single_s, split_s), http)


def over_http(single: Path, split: Path, queries: list[str], shards: int) -> None:
    """The queries asked through shard servers: a ``gossamer serve`` of ``split``."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [Path(sys.executable).parent / "gossamer", "serve", str(split), "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # said once the socket is bound
        urls = [f"http://127.0.0.1:{port}/shard/{k}" for k in range(shards)]
        with SearchEngine(single) as one, RemoteEngine(split, urls) as remote:
            expected = [one.ranked_urls(query, limit=CUTOFF) for query in queries]
            started = time.perf_counter()
            found = [remote.ranked_urls(query, limit=CUTOFF) for query in queries]
            spent = (time.perf_counter() - started) / max(len(queries), 1) * 1e3
        same = sum(a == b for a, b in zip(expected, found, strict=True))
        print(f"  over HTTP: same top 10 on {same} of {len(queries)}, {spent:.0f} ms a query"
              " (the results' documents and snippets included)", flush=True)  # fmt: skip
    finally:
        server.terminate()
        server.wait()


def report(
    name: str, single: Path, split: Path, seconds: tuple[float, float], http: int = 0
) -> None:
    single_s, split_s = seconds
    corpus = CORPORA.get(name)
    judged = corpus.judgments() if corpus is not None else {}
    queries = list(judged) or sampled_queries(single, SAMPLED)
    with SearchEngine(single) as one, SearchEngine(split) as many:
        c = compare(one, many, queries)
        print(
            f"| {name} | {c.queries} | {c.same_order / c.queries:.1%}"
            f" | {c.same_set / c.queries:.1%}"
            f" | {single_s:.1f} s / {split_s:.1f} s | {c.single_ms:.1f} / {c.sharded_ms:.1f} ms |",
            flush=True,
        )
        if http:
            over_http(single, split, queries[:http], read_layout(split) or 1)
        if judged:
            a, _ = judge(one, judged)
            b, _ = judge(many, judged)
            print(
                f"  MRR@10 single {a.mrr:.4f}, sharded {b.mrr:.4f}"
                f" (difference {b.mrr - a.mrr:+.4f});"
                f" nDCG@10 {a.ndcg:.4f} / {b.ndcg:.4f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--crawl", type=Path, action="append", default=[], help="a crawl folder")
    parser.add_argument(
        "--quality", type=Path, help="the folder search_quality.py crawled the corpora into"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="search the indexes an earlier run left in --out"
    )
    parser.add_argument(
        "--http", type=int, default=0, metavar="N", help="ask N queries over HTTP too"
    )
    parser.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="the engine that builds the sharded copy (spark: local[2])",
    )
    args = parser.parse_args()
    if args.engine == "spark":
        from gossamer.spark.session import spark_session  # noqa: PLC0415 - the spark extra

        _SPARK.append(spark_session("local[2]"))
    print(
        "| crawl | queries | same top 10, in order | same top 10 URLs | index single / sharded"
        " | a query, single / sharded |"
    )
    print("|---|---|---|---|---|---|")
    sources = [(crawl.name, crawl) for crawl in args.crawl]
    if args.quality is not None:
        sources += [
            (n, args.quality / n) for n in CORPORA if (args.quality / n / "crawl.db").is_file()
        ]
    for name, source in sources:
        run(name, source, args.out, args.shards, reuse=args.reuse, http=args.http)


if __name__ == "__main__":
    main()
