"""``gossamer index --engine spark --shards N``: pages read and extracted by Spark tasks make
the same sharded index as the local engine's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer.index import build_index
from gossamer.index.schema import DOCSTORE_FILE, INDEX_DIR
from gossamer.index.shards import read_layout
from gossamer.search.engine import SearchEngine
from gossamer.search.ranking import RANKINGS
from gossamer.spark.indexer import index_on_spark

from ..index.fake_crawl import make_crawl, search_corpus

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _rows(folder: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(folder / INDEX_DIR / DOCSTORE_FILE) as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(docs)")]
        kept = [c for c in columns if c not in ("indexed_at",)]
        return sorted(db.execute(f"SELECT {', '.join(kept)} FROM docs").fetchall(), key=str)


def _top(folder: Path, query: str) -> list[str]:
    with SearchEngine(folder, RANKINGS["blend"]) as engine:
        return [hit.url for hit in engine.search(query).hits]


def test_a_spark_built_sharded_index_equals_the_local_one(
    spark: SparkSession, tmp_path: Path
) -> None:
    local = make_crawl(tmp_path / "local", search_corpus())
    ours = make_crawl(tmp_path / "spark", search_corpus())
    theirs_report = build_index(local, shards=2)
    report = index_on_spark(spark, ours, shards=2)
    assert report.indexed == theirs_report.indexed > 0
    assert read_layout(ours) == 2
    assert _rows(ours) == _rows(local)
    for query in ("write ahead", "checkpoint", "journal"):
        assert _top(ours, query) == _top(local, query), query
