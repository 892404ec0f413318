"""Rank: PageRank over the crawl's link graph, per URL and per host.

Data flow: store -> index -> **rank** -> search -> web. ``rank_crawl`` loads the graph
from ``crawl.db`` (``graph``), runs ``pagerank`` at both levels and writes Parquet files
to ``DIR/rank`` (``export``), which the search side reads back with ``load_ranks``.

The names below are loaded on first use, so that reading ranks (every search) imports
neither numpy nor the graph code and scipy, which only computing them needs. The solver
itself is ``gossamer.rank.pagerank.pagerank``: a lazy name cannot share its module's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

if TYPE_CHECKING:
    from gossamer.rank.defaults import DAMPING, TOLERANCE
    from gossamer.rank.errors import RankError
    from gossamer.rank.export import RANK_DIR, Ranks, load_ranks
    from gossamer.rank.graph import HostGraph, UrlGraph, host_graph, host_name, load_url_graph
    from gossamer.rank.pagerank import PageRankResult
    from gossamer.rank.ranker import LevelReport, RankReport, rank_crawl

_HOMES = {
    "DAMPING": "defaults",
    "TOLERANCE": "defaults",
    "PageRankResult": "pagerank",
    "RankError": "errors",
    "RANK_DIR": "export",
    "Ranks": "export",
    "load_ranks": "export",
    "HostGraph": "graph",
    "UrlGraph": "graph",
    "host_graph": "graph",
    "host_name": "graph",
    "load_url_graph": "graph",
    "LevelReport": "ranker",
    "RankReport": "ranker",
    "rank_crawl": "ranker",
}

__all__ = [
    "DAMPING",
    "RANK_DIR",
    "TOLERANCE",
    "HostGraph",
    "LevelReport",
    "PageRankResult",
    "RankError",
    "RankReport",
    "Ranks",
    "UrlGraph",
    "host_graph",
    "host_name",
    "load_ranks",
    "load_url_graph",
    "rank_crawl",
]


__getattr__ = exports(__name__, _HOMES)
