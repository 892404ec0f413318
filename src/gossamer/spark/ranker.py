"""Spark engine, driver of ``gossamer rank DIR... --engine spark``: PageRank per URL and per
host computed by Spark, saved as the local engine saves it.

Data flow: crawl folders -> spark.linkgraph -> spark.pagerank (URLs, then hosts) -> the
driver -> ``rank.export.write_ranks`` -> ``OUT/rank`` (the five files of docs/DATA.md). The
ranks are gathered on the driver and written by the local engine's writer, so a search,
``doc_ranks`` and any Parquet reader see the same files whichever engine computed them;
``summary.json`` adds the engine, the master and the folders. With several folders (the
workers of a shared crawl) the ranks go to OUT, the folder the search will read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gossamer.rank.defaults import DAMPING, TOLERANCE
from gossamer.rank.export import RANK_DIR, write_ranks
from gossamer.rank.graph import HostGraph, UrlGraph
from gossamer.rank.pagerank import PageRankResult
from gossamer.rank.ranker import RankReport, level_report, only_run
from gossamer.spark.linkgraph import read_link_graph
from gossamer.spark.pagerank import SparkPageRank, spark_pagerank

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["rank_on_spark"]


def _column(frame: Any, name: str) -> npt.NDArray[np.int64]:
    return np.asarray(frame.column(name).to_numpy(zero_copy_only=False), dtype=np.int64)


def _sorted_table(frame: DataFrame) -> Any:
    """A DataFrame gathered on the driver as a pyarrow table, in ``id`` order."""
    return frame.orderBy("id").toArrow()


def _result(run: SparkPageRank, scores: npt.NDArray[np.float64]) -> PageRankResult:
    return PageRankResult(
        scores=scores,
        iterations=run.iterations,
        residual=run.residual,
        converged=run.converged,
        damping=run.damping,
        tolerance=run.tolerance,
    )


def _renumbered(url_rows: Any, edges: Any) -> tuple[Any, Any, npt.NDArray[np.int64]]:
    """The URL table in URL order with ids 1..n, and the edges in those ids."""
    import pyarrow as pa  # noqa: PLC0415 - the rank extra, as rank/export.py

    order = np.argsort(np.array(url_rows.column("url").to_pylist(), dtype=object), kind="stable")
    by_url = url_rows.take(pa.array(order))
    drawn = _column(by_url, "id")
    ids = np.arange(1, len(drawn) + 1, dtype=np.int64)
    sorter = np.argsort(drawn)
    renumber = ids[sorter]  # renumber[i]: the new id of the i-th smallest drawn id
    drawn_sorted = drawn[sorter]

    def new_ids(column: str) -> Any:
        return pa.array(renumber[np.searchsorted(drawn_sorted, _column(edges, column))])

    by_url = by_url.set_column(by_url.schema.get_field_index("id"), "id", pa.array(ids))
    edges = pa.table({"src": new_ids("src"), "dst": new_ids("dst")})
    return by_url, edges, ids


def rank_on_spark(
    spark: SparkSession,
    folders: Sequence[Path],
    *,
    out: Path | None = None,
    damping: float = DAMPING,
    tolerance: float = TOLERANCE,
    top: int = 5,
) -> RankReport:
    """Compute URL and host PageRank of ``folders`` on ``spark`` and save them in
    ``OUT/rank`` (``out`` defaults to the one folder; several folders need it)."""
    if out is None:
        if len(folders) != 1:
            raise ValueError("several crawl folders need an output folder")
        out = folders[0]
    target = out / RANK_DIR
    with only_run(out, target):
        return _rank(spark, folders, target, damping=damping, tolerance=tolerance, top=top)


def _rank(
    spark: SparkSession,
    folders: Sequence[Path],
    target: Path,
    *,
    damping: float,
    tolerance: float,
    top: int,
) -> RankReport:
    started = time.perf_counter()
    graph = read_link_graph(spark, folders)
    url_run = spark_pagerank(graph.nodes, graph.edges, damping=damping, tolerance=tolerance)
    url_rows = _sorted_table(graph.nodes.join(url_run.ranks, "id"))
    url_seconds = time.perf_counter() - started
    started = time.perf_counter()
    host_run = spark_pagerank(graph.hosts, graph.host_edges, damping=damping, tolerance=tolerance)
    host_rows = _sorted_table(graph.hosts.join(host_run.ranks, "id"))
    host_seconds = time.perf_counter() - started
    edges = graph.edges.toArrow()
    host_edges = graph.host_edges.toArrow()

    ids = _column(url_rows, "id")
    urls: list[str] = url_rows.column("url").to_pylist()
    if len(folders) > 1:  # Spark's numbers, unique but not dense: 1, 2, ... in URL order
        url_rows, edges, ids = _renumbered(url_rows, edges)
        urls = url_rows.column("url").to_pylist()
    host_ids = _column(host_rows, "id")
    hosts: list[str] = host_rows.column("host").to_pylist()
    host_number = {name: i for i, name in enumerate(hosts)}
    url_graph = UrlGraph(
        ids=ids,
        urls=urls,
        src=np.searchsorted(ids, _column(edges, "src")).astype(np.int64),
        dst=np.searchsorted(ids, _column(edges, "dst")).astype(np.int64),
    )
    host_graph = HostGraph(
        hosts=hosts,
        host_of=np.array(
            [host_number[h] for h in url_rows.column("host").to_pylist()], dtype=np.int64
        ),
        src=np.searchsorted(host_ids, _column(host_edges, "src")).astype(np.int64),
        dst=np.searchsorted(host_ids, _column(host_edges, "dst")).astype(np.int64),
        links=_column(host_edges, "links"),
    )
    url_scores = np.asarray(url_rows.column("pagerank").to_numpy(), dtype=np.float64)
    host_scores = np.asarray(host_rows.column("pagerank").to_numpy(), dtype=np.float64)
    url_result, host_result = _result(url_run, url_scores), _result(host_run, host_scores)
    url_level = level_report(urls, url_run.edges, url_result, url_seconds, top)
    host_level = level_report(hosts, host_run.edges, host_result, host_seconds, top)
    summary = {
        "damping": damping,
        "tolerance": tolerance,
        "norm": "L1",
        "engine": "spark",
        "master": spark.sparkContext.master,
        "folders": [str(folder) for folder in folders],
        "url": url_level.as_json(),
        "host": host_level.as_json(),
    }
    write_ranks(
        target,
        graph=url_graph,
        url_result=url_result,
        hosts=host_graph,
        host_result=host_result,
        summary=summary,
    )
    return RankReport(url_level, host_level, damping, tolerance, target)
