"""Search: ranked answers to queries over an indexed, ranked crawl folder.

Data flow: index -> rank -> **search** -> web. ``parse_query`` reads the user's syntax,
``compile`` turns it into tantivy queries, ``SearchEngine`` runs them and orders the
candidates (``ranking``: field weights, anchor text, proximity, a PageRank prior, duplicate
folding; presets ``bm25`` and ``blend``) into a ``SearchPage``; ``info`` gathers what the
page-info view shows; ``ready`` refuses an index a failed run left half-built; ``output``
formats results for a terminal or as JSON. The subcommands that call these live in
``gossamer.cli.search``.

The names below are loaded on first use, so a command imports only the modules it calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

if TYPE_CHECKING:
    from gossamer.search.engine import PER_PAGE, SearchEngine
    from gossamer.search.errors import SearchError
    from gossamer.search.info import PageInfo, page_info
    from gossamer.search.query import ParsedQuery, QueryTerm, parse_query
    from gossamer.search.ranking import RANKINGS, RankingWeights
    from gossamer.search.ready import require_complete_index
    from gossamer.search.results import HitScores, SearchHit, SearchPage, Snippet

_HOMES = {
    "PER_PAGE": "engine",
    "SearchEngine": "engine",
    "SearchError": "errors",
    "PageInfo": "info",
    "page_info": "info",
    "ParsedQuery": "query",
    "QueryTerm": "query",
    "parse_query": "query",
    "RANKINGS": "ranking",
    "RankingWeights": "ranking",
    "require_complete_index": "ready",
    "HitScores": "results",
    "SearchHit": "results",
    "SearchPage": "results",
    "Snippet": "results",
}

__all__ = [
    "PER_PAGE",
    "RANKINGS",
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


__getattr__ = exports(__name__, _HOMES)
