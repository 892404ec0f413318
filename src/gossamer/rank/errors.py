"""The rank stage's fault: a link graph that cannot be read, or ranks that cannot be saved.

A direct child of ``GossamerError``; the whole tree is drawn in :mod:`gossamer.errors`.
"""

from gossamer.errors import GossamerError

__all__ = ["RankError"]


class RankError(GossamerError):
    """PageRank cannot be computed, saved or loaded for a crawl folder."""
