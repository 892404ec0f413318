"""Rank: PageRank over the crawl's link graph, per URL and per host.

Data flow: store -> index -> **rank** -> search -> web. ``rank_crawl`` loads the graph
from ``crawl.db`` (``graph``), runs ``pagerank`` at both levels and writes Parquet files
to ``DIR/rank`` (``export``), which the search side reads back with ``load_ranks``.

The names below, but ``pagerank``'s, are loaded on first use, so that reading ranks (every
search) does not import the graph code and scipy, which only computing them needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

# Eager, and cheap (numpy only): the function shares its module's name, which a lazy
# import would leave bound to the module.
from gossamer.rank.pagerank import DAMPING, TOLERANCE, PageRankResult, pagerank

if TYPE_CHECKING:
    from gossamer.rank.errors import RankError
    from gossamer.rank.export import RANK_DIR, Ranks, load_ranks
    from gossamer.rank.graph import HostGraph, UrlGraph, host_graph, host_name, load_url_graph
    from gossamer.rank.ranker import LevelReport, RankReport, rank_crawl

_HOMES = {
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
    "pagerank",
    "rank_crawl",
]


__getattr__ = exports(__name__, _HOMES)
