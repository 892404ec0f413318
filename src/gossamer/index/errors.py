"""The index stage's fault: a crawl folder, WARC record or index that cannot be used.

A direct child of ``GossamerError``; the whole tree is drawn in :mod:`gossamer.errors`.
"""

from gossamer.errors import GossamerError

__all__ = ["IndexingError"]


class IndexingError(GossamerError):
    """The crawl cannot be indexed, or the index cannot be opened."""
