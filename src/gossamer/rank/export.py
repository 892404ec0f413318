"""Rank stage, output: the link graph and the ranks as Parquet files in ``DIR/rank``.

Data flow: pagerank -> **export** -> search (``load_ranks``) and any other tool that reads
Parquet (DuckDB, pandas, Spark). The graph is stored normalised, as ids plus a node table,
so it stays small and joins back to ``crawl.db`` (``urls.id``):

=====================  ==========================================================
``url_ranks.parquet``  id, url, host, pagerank, in_links, out_links
``url_edges.parquet``  src, dst (``urls.id``; self-links dropped)
``host_ranks.parquet`` host, pagerank, urls, in_hosts, out_hosts
``host_edges.parquet`` src, dst (host names), links (URL links behind the edge)
``summary.json``       iterations, residual, damping, tolerance, sizes, seconds
=====================  ==========================================================

PageRank is stored as computed (summing to 1 over the graph).

Every file is written beside its final name, synced, and renamed into place only once all
five are written (``store.tempfiles.replacing``): a ``rank`` killed mid-write leaves the
previous ranks whole, and a search reads them as before. ``url_ranks.parquet``, the file a
search looks for first, is renamed last. A file damaged some other way is refused with the
command that computes it again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gossamer import extras
from gossamer.rank.errors import RankError
from gossamer.store.tempfiles import Replacement, replacing

if TYPE_CHECKING:  # the search side reads ranks without the graph code and scipy
    import pyarrow as pa

    from gossamer.rank.graph import HostGraph, UrlGraph
    from gossamer.rank.pagerank import PageRankResult

__all__ = ["RANK_DIR", "Ranks", "load_ranks", "write_ranks"]

RANK_DIR = "rank"
URL_RANKS = "url_ranks.parquet"
URL_EDGES = "url_edges.parquet"
HOST_RANKS = "host_ranks.parquet"
HOST_EDGES = "host_edges.parquet"
SUMMARY = "summary.json"


@dataclass(frozen=True, slots=True)
class Ranks:
    """PageRank looked up by URL and by host, for the search side."""

    url_rank: dict[str, float]
    host_rank: dict[str, float]
    urls: int  # nodes of the URL graph, to turn a score into "times the average"
    hosts: int
    summary: dict[str, Any]

    def of_url(self, url: str) -> float:
        return self.url_rank.get(url, 0.0)

    def of_host(self, host: str) -> float:
        return self.host_rank.get(host, 0.0)


def _write(table: pa.Table, path: Path, replacement: Replacement) -> None:
    import pyarrow as pa  # noqa: PLC0415 - pyarrow only when ranks are written or read
    import pyarrow.parquet as pq  # noqa: PLC0415

    try:
        pq.write_table(table, replacement.beside(path), compression="zstd")
    except (OSError, pa.ArrowException) as exc:
        raise RankError(f"cannot write {path}: {exc}") from exc


def write_ranks(
    out: Path,
    *,
    graph: UrlGraph,
    url_result: PageRankResult,
    hosts: HostGraph,
    host_result: PageRankResult,
    summary: dict[str, Any],
) -> None:
    """Replace the ranks in ``out`` by these, all five files or none."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with replacing() as replacement:
            _write_all(
                out,
                replacement,
                graph=graph,
                url_result=url_result,
                hosts=hosts,
                host_result=host_result,
                summary=summary,
            )
    except OSError as exc:
        raise RankError(f"cannot write the ranks in {out}: {exc.strerror or exc}") from exc


def _write_all(
    out: Path,
    replacement: Replacement,
    *,
    graph: UrlGraph,
    url_result: PageRankResult,
    hosts: HostGraph,
    host_result: PageRankResult,
    summary: dict[str, Any],
) -> None:
    import numpy as np  # noqa: PLC0415 - as pyarrow: only where ranks are written or read
    import pyarrow as pa  # noqa: PLC0415

    n = graph.nodes
    replacement.beside(out / SUMMARY).write_text(
        json.dumps(summary, indent=2) + "\n", encoding="utf-8"
    )
    _write(
        pa.table({"src": graph.ids[graph.src], "dst": graph.ids[graph.dst]}),
        out / URL_EDGES,
        replacement,
    )
    h = hosts.nodes
    _write(
        pa.table(
            {
                "host": pa.array(hosts.hosts, type=pa.string()),
                "pagerank": host_result.scores,
                "urls": np.bincount(hosts.host_of, minlength=h),
                "in_hosts": np.bincount(hosts.dst, minlength=h),
                "out_hosts": np.bincount(hosts.src, minlength=h),
            }
        ),
        out / HOST_RANKS,
        replacement,
    )
    names = np.array(hosts.hosts, dtype=object)
    _write(
        pa.table(
            {
                "src": pa.array(names[hosts.src].tolist(), type=pa.string()),
                "dst": pa.array(names[hosts.dst].tolist(), type=pa.string()),
                "links": hosts.links,
            }
        ),
        out / HOST_EDGES,
        replacement,
    )
    _write(
        pa.table(
            {
                "id": graph.ids,
                "url": pa.array(graph.urls, type=pa.string()),
                "host": pa.array([hosts.hosts[h] for h in hosts.host_of], type=pa.string()),
                "pagerank": url_result.scores,
                "in_links": np.bincount(graph.dst, minlength=n),
                "out_links": np.bincount(graph.src, minlength=n),
            }
        ),
        out / URL_RANKS,  # last: its presence says the crawl is ranked
        replacement,
    )


def load_ranks(crawl_dir: Path) -> Ranks | None:
    """The ranks saved by ``gossamer rank``, or None when it has not run."""
    folder = crawl_dir / RANK_DIR
    if not (folder / URL_RANKS).is_file():
        return None
    extras.require(f"reading the ranks in {folder}", "parquet")
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    try:
        # ParquetFile reads a file without pyarrow's dataset layer (0.1 s of imports).
        urls = pq.ParquetFile(folder / URL_RANKS).read(columns=["url", "pagerank"])
        hosts = pq.ParquetFile(folder / HOST_RANKS).read(columns=["host", "pagerank"])
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise RankError(
            f"the ranks in {folder} are damaged ({exc}); run 'gossamer rank {crawl_dir}'"
            " to compute them again"
        ) from exc
    url_names, url_scores = _column_pairs(urls, "url")
    host_names, host_scores = _column_pairs(hosts, "host")
    return Ranks(
        url_rank=dict(zip(url_names, url_scores, strict=True)),
        host_rank=dict(zip(host_names, host_scores, strict=True)),
        urls=len(url_names),
        hosts=len(host_names),
        summary=summary,
    )


def _column_pairs(table: pa.Table, key: str) -> tuple[list[str], list[float]]:
    """The names and scores of a ranks table as Python lists, converted in C (a missing
    score is 0): a search opens the ranks of every URL, 143k on a 10k-page crawl."""
    import numpy as np  # noqa: PLC0415

    names = cast("list[str]", table.column(key).to_pylist())  # written by us, never null
    scores = table.column("pagerank").to_numpy(zero_copy_only=False)
    return names, np.nan_to_num(scores.astype(np.float64), nan=0.0).tolist()
