"""Ranking quality on a real documentation site: SQLite's docs, crawled, indexed, judged.

Set-up, all on this machine: Debian's ``sqlite3-doc`` package (about 770 HTML pages under
/usr/share/doc/sqlite3, with the broken links of a real site) is served by a small aiohttp
static server on 127.0.0.1; ``gossamer crawl`` crawls it as ``sqlite.docs.test`` (mapped with
``--resolve``), then it is indexed and ranked (``build_index``, ``rank_crawl``: what the
``index`` and ``rank`` commands call).

Each query below lists the pages that answer it (binary relevance, judged by reading the
pages). Reported per ranking: MRR@10 (reciprocal rank of the first answer) and nDCG@10,
for BM25 alone (no PageRank, no title tiers) and for the blended ranking as shipped.

    apt-get install sqlite3-doc   # once
    python benchmarks/search_quality.py --out /tmp/quality
"""

from __future__ import annotations

import argparse
import asyncio
import math
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from aiohttp import web

from gossamer.index import build_index
from gossamer.rank import rank_crawl
from gossamer.search import RankingWeights, SearchEngine

DOCS = Path("/usr/share/doc/sqlite3")
HOST = "sqlite.docs.test"
BIN = Path(sys.executable).parent
CUTOFF = 10

QUERIES: dict[str, tuple[str, ...]] = {
    "write-ahead logging": ("wal.html",),
    "foreign key constraints": ("foreignkeys.html",),
    "full text search": ("fts5.html", "fts3.html"),
    "autoincrement": ("autoinc.html",),
    "type affinity": ("datatype3.html",),
    "json functions": ("json1.html",),
    "window functions": ("windowfunctions.html",),
    "date and time functions": ("lang_datefunc.html",),
    "create table": ("lang_createtable.html",),
    "vacuum": ("lang_vacuum.html",),
    "pragma statements": ("pragma.html",),
    "atomic commit": ("atomiccommit.html",),
    "file locking": ("lockingv3.html",),
    "query planner": ("optoverview.html", "queryplanner.html"),
    "explain query plan": ("eqp.html",),
    "r-tree module": ("rtree.html",),
    "virtual tables": ("vtab.html",),
    "online backup api": ("backup.html",),
    "common table expressions": ("lang_with.html",),
    "upsert": ("lang_upsert.html",),
    "attach database": ("lang_attach.html",),
    "core functions": ("lang_corefunc.html",),
    "aggregate functions": ("lang_aggfunc.html",),
    "generated columns": ("gencol.html",),
    "strict tables": ("stricttables.html",),
    "without rowid": ("withoutrowid.html",),
    "partial indexes": ("partialindex.html",),
    "temporary files": ("tempfiles.html",),
    "in-memory databases": ("inmemorydb.html",),
    "command line shell": ("cli.html",),
    "database file format": ("fileformat2.html", "fileformat.html"),
    "limits": ("limits.html",),
    "how to compile": ("howtocompile.html",),
    "isolation": ("isolation.html",),
    "savepoint": ("lang_savepoint.html",),
    "create trigger": ("lang_createtrigger.html",),
    "c api introduction": ("cintro.html",),
    "prepare statement": ("c3ref/prepare.html",),
    "threading modes": ("threadsafe.html",),
    "result codes": ("rescode.html",),
    "create index": ("lang_createindex.html",),
    "transactions": ("lang_transaction.html",),
}

RANKINGS = {
    "BM25 alone": RankingWeights(pagerank=0.0, host_rank=0.0, title_tiers=False),
    "BM25 + title tiers": RankingWeights(pagerank=0.0, host_rank=0.0),
    "blended (default)": RankingWeights(),
}


class StaticSite:
    """Serves a folder on 127.0.0.1 from a thread of its own; ``with`` starts and stops it."""

    def __init__(self, folder: Path) -> None:
        self._app = web.Application()
        self._app.router.add_static("/", folder)
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self.port = 0

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        runner = web.AppRunner(self._app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        self.port = runner.addresses[0][1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> StaticSite:
        self._thread.start()
        if not self._ready.wait(30):
            raise SystemExit("the static server did not start")
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._loop is not None and self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


def crawl(out: Path) -> None:
    with StaticSite(DOCS) as site:
        seeds = out.parent / "quality-seeds.txt"
        seeds.write_text(f"http://{HOST}:{site.port}/index.html\n", encoding="utf-8")
        started = time.perf_counter()
        subprocess.run(
            [BIN / "gossamer", "crawl", str(seeds), "--out", str(out), "--no-progress",
             "--resolve", f"{HOST}:127.0.0.1", "--delay", "0", "--max-per-host", "4"],
            check=True,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"crawl: {time.perf_counter() - started:.1f} s")


def judge(engine: SearchEngine) -> tuple[float, float, list[str]]:
    reciprocal, gains, misses = [], [], []
    for query, answers in QUERIES.items():
        paths = [hit.url.split("/", 3)[3] for hit in engine.search(query).hits[:CUTOFF]]
        relevant = [path in answers for path in paths]
        first = next((i for i, ok in enumerate(relevant) if ok), None)
        reciprocal.append(0.0 if first is None else 1.0 / (first + 1))
        dcg = sum(1.0 / math.log2(i + 2) for i, ok in enumerate(relevant) if ok)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(answers), CUTOFF)))
        gains.append(dcg / ideal)
        if first != 0:
            misses.append(f"{query!r}: first answer at {first + 1 if first is not None else '-'}")
    return sum(reciprocal) / len(QUERIES), sum(gains) / len(QUERIES), misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-quality"))
    parser.add_argument("--verbose", action="store_true", help="list queries not answered first")
    args = parser.parse_args()
    if not (DOCS / "index.html").is_file():
        raise SystemExit("install Debian's sqlite3-doc first: apt-get install sqlite3-doc")
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    folder = args.out / "crawl"
    crawl(folder)
    report = build_index(folder)
    print(f"index: {report.indexed} documents in {report.seconds:.1f} s")
    ranks = rank_crawl(folder)
    print(f"rank: {ranks.urls.nodes} URLs, {ranks.urls.iterations} iterations")
    print(f"{len(QUERIES)} queries, binary relevance, cut-off {CUTOFF}")
    for name, weights in RANKINGS.items():
        with SearchEngine(folder, weights) as engine:
            mrr, ndcg, misses = judge(engine)
            documents = engine.documents
        print(f"{name:20s} MRR@10 {mrr:.3f}  nDCG@10 {ndcg:.3f}  ({documents} documents)")
        if args.verbose:
            for miss in misses:
                print(f"    {miss}")


if __name__ == "__main__":
    main()
