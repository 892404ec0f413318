"""Spark engine, input: the link graph of one or more crawl folders as DataFrames.

Data flow: crawl.db of each folder -> **spark.linkgraph** -> spark.pagerank (twice: URLs and
hosts). Each folder is read by one Spark task, with the local engine's own reader
(``rank.graph.load_url_graph``: every ``urls`` row a node, self-links dropped, a gone page's
links dropped), so the graph is the one the local ``gossamer rank`` builds. The folders of
a crawl shared through Redis (one per worker) are read together without a ``merge``: a
URL is one node whichever folders list it, a link one edge whichever folders hold it.

Node ids: with one folder, ``urls.id`` of its crawl.db, so the Parquet files join back to
it as the local engine's do; with several, as no one crawl.db numbers them all, unique
numbers drawn by Spark, which the driver replaces by the URL's place in URL order (from 1)
when it saves the ranks. Hosts get numbers drawn by Spark too (the files name hosts). The
host graph has one edge per ordered pair of different hosts with a link between them,
``links`` counting the URL links behind it, as ``rank.graph.host_graph`` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer.rank.errors import RankError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["SparkLinkGraph", "read_link_graph"]

_ROWS = "kind string, a string, b string, id long"


@dataclass(frozen=True, slots=True, eq=False)
class SparkLinkGraph:
    nodes: DataFrame  # id, url, host
    edges: DataFrame  # src, dst (node ids)
    hosts: DataFrame  # id, host
    host_edges: DataFrame  # src, dst (host ids), links


def _folder_rows(folder: str) -> Iterator[tuple[str, str, str | None, int | None]]:
    """One folder's nodes ``("node", url, host, id)`` and edges ``("edge", src, dst, None)``,
    read on an executor."""
    from gossamer.rank.graph import host_name, load_url_graph  # noqa: PLC0415

    graph = load_url_graph(Path(folder) / "crawl.db")
    for node_id, url in zip(graph.ids.tolist(), graph.urls, strict=True):
        yield ("node", url, host_name(url), node_id)
    urls = graph.urls
    for src, dst in zip(graph.src.tolist(), graph.dst.tolist(), strict=True):
        yield ("edge", urls[src], urls[dst], None)


def read_link_graph(spark: SparkSession, folders: Sequence[Path]) -> SparkLinkGraph:
    """The link graph of ``folders`` (each with a crawl.db), read by Spark tasks."""
    from pyspark.sql import functions as F  # noqa: PLC0415, N812 - Spark's own convention

    for folder in folders:
        if not (folder / "crawl.db").is_file():
            raise RankError(f"{folder} has no crawl.db; is it a crawl folder?")
    names = [str(folder.resolve()) for folder in folders]
    rows = spark.createDataFrame(
        spark.sparkContext.parallelize(names, len(names)).flatMap(_folder_rows), _ROWS
    ).localCheckpoint()
    listed = rows.filter("kind = 'node'")
    if len(folders) == 1:
        nodes = listed.select(F.col("id"), F.col("a").alias("url"), F.col("b").alias("host"))
    else:
        # Unique, not dense: the driver numbers the URLs in URL order when it saves them.
        nodes = (
            listed.groupBy(F.col("a").alias("url"))
            .agg(F.first("b").alias("host"))
            .withColumn("id", F.monotonically_increasing_id())
        )
    nodes = nodes.localCheckpoint()  # the ids are drawn once
    ids = nodes.select("id", "url")
    edges = (
        rows.filter("kind = 'edge'")
        .select(F.col("a").alias("src_url"), F.col("b").alias("dst_url"))
        .distinct()
        .join(ids.withColumnsRenamed({"id": "src", "url": "src_url"}), "src_url")
        .join(ids.withColumnsRenamed({"id": "dst", "url": "dst_url"}), "dst_url")
        .select("src", "dst")
        .localCheckpoint()
    )
    hosts = (
        nodes.select("host").distinct().withColumn("id", F.monotonically_increasing_id())
    ).localCheckpoint()
    host_of = nodes.join(hosts.withColumnRenamed("id", "hid"), "host").select("id", "hid")
    host_edges = (
        edges.join(host_of.withColumnsRenamed({"id": "src", "hid": "hsrc"}), "src")
        .join(host_of.withColumnsRenamed({"id": "dst", "hid": "hdst"}), "dst")
        .filter("hsrc != hdst")
        .groupBy(F.col("hsrc").alias("src"), F.col("hdst").alias("dst"))
        .agg(F.count(F.lit(1)).alias("links"))
        .localCheckpoint()
    )
    return SparkLinkGraph(nodes, edges, hosts, host_edges)
