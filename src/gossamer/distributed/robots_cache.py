"""robots.txt answers shared by every worker of a crawl, cached in Redis with a TTL.

Data flow: a worker fetches an origin's robots.txt -> **robots_cache.put** -> Redis ->
**robots_cache.get** on any worker -> :func:`gossamer.robots.parse_robots`. The body is stored,
not the parsed rules: each worker parses it with its own parser (nothing in Redis is run as
code), and an unusable entry is treated as absent, so the file is fetched again.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from redis.asyncio import Redis

__all__ = ["RobotsEntry", "get", "key", "put"]


@dataclass(frozen=True, slots=True)
class RobotsEntry:
    status: int  # HTTP status of the robots.txt answer (0: given up as unreachable)
    body: bytes


def key(prefix: str, origin: str) -> str:
    """``prefix``: the partition of the origin's host (``keys.part_prefix``)."""
    return f"{prefix}robots:{origin}"


async def put(redis: Redis, prefix: str, origin: str, entry: RobotsEntry, ttl: float) -> None:
    payload = {"s": entry.status, "b": base64.b64encode(entry.body).decode("ascii")}
    await redis.set(key(prefix, origin), json.dumps(payload), px=max(1, int(ttl * 1000)))


async def get(redis: Redis, prefix: str, origin: str) -> RobotsEntry | None:
    raw = await redis.get(key(prefix, origin))
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        status, body = data["s"], base64.b64decode(data["b"], validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None
    if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= 999:
        return None
    return RobotsEntry(status, body)
