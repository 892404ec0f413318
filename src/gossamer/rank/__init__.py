"""Rank: PageRank over the crawl's link graph, per URL and per host.

Data flow: store -> index -> **rank** -> search -> web. ``rank_crawl`` loads the graph
from ``crawl.db`` (``graph``), runs ``pagerank`` at both levels and writes Parquet files
to ``DIR/rank`` (``export``), which the search side reads back with ``load_ranks``.
"""

from gossamer.rank.errors import RankError
from gossamer.rank.export import RANK_DIR, Ranks, load_ranks
from gossamer.rank.graph import HostGraph, UrlGraph, host_graph, host_name, load_url_graph
from gossamer.rank.pagerank import DAMPING, TOLERANCE, PageRankResult, pagerank
from gossamer.rank.ranker import LevelReport, RankReport, rank_crawl

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
