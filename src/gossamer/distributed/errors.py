"""Faults of the Redis-backed shared frontier: Redis unreachable, or data in Redis unusable.

Data flow: Redis -> **distributed** -> the crawl engine. A lost lease is not a fault (it is a
value, :class:`~gossamer.distributed.frontier.Lost`); these are.
"""

from __future__ import annotations

from gossamer.errors import GossamerError

__all__ = ["SharedFrontierError"]


class SharedFrontierError(GossamerError):
    """Redis cannot be reached, or what it holds for the crawl is not Gossamer's data."""
