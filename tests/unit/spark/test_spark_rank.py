"""``gossamer rank --engine spark``: the ranks of Spark's DataFrame iterations are scipy's."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.parquet as pq
import pytest

from gossamer.rank import load_ranks, rank_crawl
from gossamer.search.docranks import save_doc_ranks
from gossamer.search.engine import SearchEngine
from gossamer.search.ranking import RANKINGS
from gossamer.spark.indexer import index_on_spark
from gossamer.spark.ranker import rank_on_spark
from gossamer.store.catalogue_build import build_catalogue

from ..rank.test_rank_crawl import crawl as tiny_crawl
from .webgraph import web_crawls, web_pages

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _l1(spark_ranks: dict[str, float], local_ranks: dict[str, float]) -> float:
    assert spark_ranks.keys() == local_ranks.keys()
    names = sorted(local_ranks)
    a = np.array([spark_ranks[n] for n in names])
    b = np.array([local_ranks[n] for n in names])
    return float(np.abs(a / a.sum() - b / b.sum()).sum())


def test_the_workers_folders_rank_as_scipy_ranks_their_merged_crawl(
    spark: SparkSession, tmp_path: Path
) -> None:
    whole, workers = web_crawls(tmp_path)
    # Damping 0.5 halves the rounds a Spark job each costs (about 15 instead of 37: the
    # default's equality is measured at 20,000 pages in BENCHMARKS.md, 1.4e-16). scipy runs
    # to the default 1e-9; Spark stops at an L1 change of 1e-7, within 1e-7 * d / (1 - d) of
    # the fixed point: close enough to show 1e-6.
    local = rank_crawl(whole, damping=0.5)
    report = rank_on_spark(spark, workers, out=tmp_path / "out", damping=0.5, tolerance=1e-7)
    assert report.urls.converged and report.hosts.converged
    assert (report.urls.nodes, report.urls.edges) == (local.urls.nodes, local.urls.edges)
    assert (report.hosts.nodes, report.hosts.edges) == (local.hosts.nodes, local.hosts.edges)
    by_spark, by_scipy = load_ranks(tmp_path / "out"), load_ranks(whole)
    assert by_spark is not None and by_scipy is not None
    assert _l1(by_spark.url_rank, by_scipy.url_rank) < 1e-6
    assert _l1(by_spark.host_rank, by_scipy.host_rank) < 1e-6
    host_edges = {
        (row["src"], row["dst"], row["links"])
        for row in pq.read_table(tmp_path / "out" / "rank" / "host_edges.parquet").to_pylist()
    }
    assert host_edges == {
        (row["src"], row["dst"], row["links"])
        for row in pq.read_table(whole / "rank" / "host_edges.parquet").to_pylist()
    }
    summary = json.loads((tmp_path / "out" / "rank" / "summary.json").read_text())
    assert summary["engine"] == "spark" and len(summary["folders"]) == 2
    # Indexed into the same folder by Spark, through a catalogue of the workers' folders (no
    # merge): a search finds the pages each worker fetched, with their ranks.
    out = tmp_path / "out"
    build_catalogue(out, workers)
    report = index_on_spark(spark, out, shards=2)
    assert report.indexed == sum(page.status == 200 for page in web_pages())  # not the 404
    save_doc_ranks(out)
    with SearchEngine(out, RANKINGS["blend"]) as engine:
        for worker in workers:
            with sqlite3.connect(worker / "crawl.db") as db:
                fetched = {url for (url,) in db.execute("SELECT url FROM pages WHERE status = 200")}
            host = next(iter(sorted(fetched))).split("/")[2]
            hits = engine.search(f"page site:{host}").hits
            assert hits and {hit.url for hit in hits} <= fetched, host
            assert all(hit.scores.pagerank > 0 for hit in hits)


def test_one_folder_keeps_the_crawl_db_ids_and_the_local_files(
    spark: SparkSession, tmp_path: Path
) -> None:
    folder = tiny_crawl(tmp_path / "spark")
    local = tiny_crawl(tmp_path / "local")
    # The same rounds from the same start, stopped by the same test: the same iterates (a
    # low damping and a loose tolerance keep the Spark rounds few).
    theirs_report = rank_crawl(local, damping=0.5, tolerance=1e-4)
    ours_report = rank_on_spark(spark, [folder], damping=0.5, tolerance=1e-4)
    assert ours_report.urls.iterations == theirs_report.urls.iterations
    assert ours_report.hosts.iterations == theirs_report.hosts.iterations
    for name in ("url_ranks", "url_edges", "host_ranks", "host_edges"):
        ours = pq.read_table(folder / "rank" / f"{name}.parquet")
        theirs = pq.read_table(local / "rank" / f"{name}.parquet")
        assert ours.schema == theirs.schema, name
        keys = [c for c in ours.column_names if c != "pagerank"]
        assert sorted(ours.select(keys).to_pylist(), key=str) == sorted(
            theirs.select(keys).to_pylist(), key=str
        ), name
        if "pagerank" in ours.column_names:
            assert sorted(ours.column("pagerank").to_pylist()) == pytest.approx(
                sorted(theirs.column("pagerank").to_pylist()), abs=1e-12
            )
