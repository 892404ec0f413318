"""The search side's fault: a query or request that cannot be answered as given.

A direct child of ``GossamerError``; the whole tree is drawn in :mod:`gossamer.errors`.
"""

from gossamer.errors import GossamerError

__all__ = ["SearchError"]


class SearchError(GossamerError):
    """A search, page-info or cached-copy request is invalid or cannot be served."""
