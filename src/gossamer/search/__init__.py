"""Search: ranked answers to queries over an indexed, ranked crawl folder.

Data flow: index -> rank -> **search** -> web. ``parse_query`` reads the user's syntax,
``compile`` turns it into tantivy queries, ``SearchEngine`` runs them and orders the
candidates (``ranking``: PageRank blend, title tiers, duplicate folding) into a
``SearchPage``; ``info`` gathers what the page-info view shows; ``ready`` refuses an index
a failed run left half-built; ``output`` formats results for a terminal or as JSON. The
subcommands that call these live in ``gossamer.cli.search``.
"""

from gossamer.search.engine import PER_PAGE, SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.info import PageInfo, page_info
from gossamer.search.query import ParsedQuery, QueryTerm, parse_query
from gossamer.search.ranking import RankingWeights
from gossamer.search.ready import require_complete_index
from gossamer.search.results import HitScores, SearchHit, SearchPage, Snippet

__all__ = [
    "PER_PAGE",
    "HitScores",
    "PageInfo",
    "ParsedQuery",
    "QueryTerm",
    "RankingWeights",
    "SearchEngine",
    "SearchError",
    "SearchHit",
    "SearchPage",
    "Snippet",
    "page_info",
    "parse_query",
    "require_complete_index",
]
