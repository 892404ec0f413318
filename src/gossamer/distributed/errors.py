"""Faults of the Redis-backed shared frontier: Redis unreachable, or data in Redis unusable.

Data flow: Redis -> **distributed** -> the crawl engine. A lost lease is not a fault (it is a
value, :class:`~gossamer.distributed.frontier.Lost`); these are.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis.exceptions import RedisClusterException, RedisError

from gossamer.errors import GossamerError

__all__ = ["RACY_FAULTS", "REDIS_FAULTS", "SharedFrontierError", "client_race", "redis_errors"]

# What the client raises when Redis cannot do a step: its own errors, and the cluster
# client's (no node reachable, slots not covered), which are not RedisError.
REDIS_FAULTS: tuple[type[Exception], ...] = (RedisError, RedisClusterException)
# The same, with the race of ``client_race`` (the caller checks it is that race).
RACY_FAULTS: tuple[type[Exception], ...] = (*REDIS_FAULTS, AttributeError)


class SharedFrontierError(GossamerError):
    """Redis cannot be reached, or what it holds for the crawl is not Gossamer's data."""


def client_race(exc: BaseException) -> bool:
    """A redis-py cluster client's own race while it recovers from a node gone: a call on a
    connection another task just closed fails with ``AttributeError`` inside redis-py
    (redis/redis-py#4217) instead of a connection error. Only an error raised in redis-py's
    own frames counts, so a bug of ours is never taken for an outage."""
    if not isinstance(exc, AttributeError):
        return False
    frame = exc.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and "/redis/" in frame.tb_frame.f_code.co_filename


@contextlib.contextmanager
def redis_errors(what: str) -> Iterator[None]:
    """Redis's own errors (connection lost, refused command), and the cluster client's race,
    as one of ours: "Redis could not ``what``"."""
    try:
        yield
    except REDIS_FAULTS as exc:
        raise SharedFrontierError(f"Redis could not {what}: {exc}") from exc
    except AttributeError as exc:
        if not client_race(exc):
            raise
        raise SharedFrontierError(f"Redis could not {what}: a connection was reset") from exc
