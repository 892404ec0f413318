"""Rank stage, driver: ``gossamer rank DIR`` computes PageRank per URL and per host.

Data flow: crawl.db -> graph -> pagerank (twice) -> export to ``DIR/rank``.

One run at a time per folder (``DIR/rank/.gossamer-rank.lock``, released by the kernel even
after ``kill -9``); under it, the temporary files of a run killed before its renames are
deleted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer.lockfile import PidLock
from gossamer.rank.defaults import DAMPING, TOLERANCE
from gossamer.rank.errors import RankError
from gossamer.rank.export import RANK_DIR, write_ranks
from gossamer.rank.graph import host_graph, load_url_graph
from gossamer.rank.pagerank import PageRankResult, pagerank
from gossamer.store.tempfiles import remove_leftovers

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["LOCK_NAME", "LevelReport", "RankReport", "rank_crawl"]

LOCK_NAME = ".gossamer-rank.lock"  # in DIR/rank, beside the Parquet files


@dataclass(frozen=True, slots=True)
class LevelReport:
    """How PageRank went at one level (URLs or hosts)."""

    nodes: int
    edges: int
    iterations: int
    residual: float
    converged: bool
    seconds: float
    top: tuple[tuple[str, float], ...]  # the best nodes with their score x nodes

    def as_json(self) -> dict[str, object]:
        """The level as ``summary.json`` holds it (both engines write it so)."""
        return {
            "nodes": self.nodes,
            "edges": self.edges,
            "iterations": self.iterations,
            "residual": self.residual,
            "converged": self.converged,
            "seconds": round(self.seconds, 4),
        }

    def line(self, name: str) -> str:
        state = "converged" if self.converged else "NOT converged"
        return (
            f"{name}: {self.nodes} nodes, {self.edges} edges, {self.iterations} iterations,"
            f" {state} (L1 change {self.residual:.2e}), {self.seconds:.2f} s"
        )


@dataclass(frozen=True, slots=True)
class RankReport:
    urls: LevelReport
    hosts: LevelReport
    damping: float
    tolerance: float
    out: Path

    def summary(self) -> str:
        lines = [
            f"PageRank, damping {self.damping}, tolerance {self.tolerance:g} (L1)",
            self.urls.line("URL level "),
            self.hosts.line("host level"),
            "top hosts (score x number of hosts):",
            *(f"  {score:8.3f}  {name}" for name, score in self.hosts.top),
            "top URLs (score x number of URLs):",
            *(f"  {score:8.3f}  {name}" for name, score in self.urls.top),
            f"written to {self.out}",
        ]
        return "\n".join(lines)


def _top_scores(
    names: list[str], scores: npt.NDArray[np.float64], count: int
) -> tuple[tuple[str, float], ...]:
    """The ``count`` best names with their scores times the number of names (1 = average),
    as the report shows them."""
    order = scores.argsort()[::-1][:count]
    n = len(names)
    return tuple((names[i], float(scores[i]) * n) for i in order)


def level_report(
    names: list[str], edges: int, result: PageRankResult, seconds: float, top: int
) -> LevelReport:
    """How one level's run went, with its ``top`` best names (both engines report with it)."""
    return LevelReport(
        nodes=len(names),
        edges=edges,
        iterations=result.iterations,
        residual=result.residual,
        converged=result.converged,
        seconds=seconds,
        top=_top_scores(names, result.scores, top),
    )


@contextmanager
def only_run(crawl_dir: Path, out: Path) -> Iterator[None]:
    """Hold the rank folder's lock while its files are written (both engines use it)."""
    lock = PidLock(out / LOCK_NAME)
    try:
        holder = lock.acquire()
    except OSError as exc:
        raise RankError(f"cannot write the ranks of {crawl_dir}: {exc.strerror or exc}") from exc
    if holder is not None:
        raise RankError(
            f"the ranks of {crawl_dir} are being computed by another process (pid {holder});"
            " wait for it to finish"
        )
    try:
        remove_leftovers(out)
        yield
    finally:
        lock.release()


def rank_crawl(
    crawl_dir: Path,
    *,
    damping: float = DAMPING,
    tolerance: float = TOLERANCE,
    top: int = 5,
) -> RankReport:
    """Compute and save URL and host PageRank for a crawl folder."""
    if not (crawl_dir / "crawl.db").is_file():  # before the lock makes DIR/rank anywhere
        raise RankError(f"{crawl_dir} has no crawl.db; is it a crawl folder?")
    out = crawl_dir / RANK_DIR
    with only_run(crawl_dir, out):
        return _rank(crawl_dir, out, damping, tolerance, top)


def _rank(crawl_dir: Path, out: Path, damping: float, tolerance: float, top: int) -> RankReport:
    started = time.perf_counter()
    graph = load_url_graph(crawl_dir / "crawl.db")
    url_result = pagerank(graph.src, graph.dst, graph.nodes, damping=damping, tolerance=tolerance)
    url_seconds = time.perf_counter() - started
    started = time.perf_counter()
    hosts = host_graph(graph)
    host_result = pagerank(hosts.src, hosts.dst, hosts.nodes, damping=damping, tolerance=tolerance)
    host_seconds = time.perf_counter() - started
    urls = level_report(graph.urls, len(graph.src), url_result, url_seconds, top)
    host_level = level_report(hosts.hosts, len(hosts.src), host_result, host_seconds, top)
    summary = {
        "damping": damping,
        "tolerance": tolerance,
        "norm": "L1",
        "url": urls.as_json(),
        "host": host_level.as_json(),
    }
    write_ranks(
        out,
        graph=graph,
        url_result=url_result,
        hosts=hosts,
        host_result=host_result,
        summary=summary,
    )
    return RankReport(urls, host_level, damping, tolerance, out)
