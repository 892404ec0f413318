"""The page-target credit of workers that are gone, back to the crawl.

Data flow: a worker finds no credit left and none of its own (``rounds.py``) -> **reclaim**:
the workers whose heartbeat is older than their lease TTL and who still hold credit (``G
granted``) -> their leases reaped in every partition (from then on a completion of theirs is
refused) -> the pages the partitions say each stored (``P stored``) -> ``lua_crawl.RECLAIM``: what
it was given less what it stored goes back to ``G credit``.

Without this, a worker killed while it held credit would leave the crawl short of its target
for good; with it, the target is still stored exactly: a page the gone worker stored is never
counted twice, and one it did not store is fetched by someone else.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

from gossamer.distributed import lua_crawl
from gossamer.distributed.batch import text

if TYPE_CHECKING:
    from gossamer.distributed.frontier import RedisFrontier

__all__ = ["reclaim_gone"]


async def reclaim_gone(front: RedisFrontier) -> int:
    """Reclaim the credit of every gone worker; the credit returned."""
    granted = {
        text(k): int(v) for k, v in (await front.redis.hgetall(front.prefix + "granted")).items()
    }
    holders = [w for w, n in granted.items() if n > 0 and w != front.worker]
    if not holders:
        return 0
    beats = {
        text(k): float(v) for k, v in (await front.redis.hgetall(front.prefix + "beats")).items()
    }
    figures = await front.redis.hmget(front.prefix + "workers", holders)
    now = await front.now()
    gone = []
    for worker, raw in zip(holders, figures, strict=True):
        ttl = front.ttl
        with contextlib.suppress(ValueError, KeyError, TypeError):
            ttl = float(json.loads(raw)["lease_ttl"]) if raw is not None else ttl
        if now - beats.get(worker, 0.0) > ttl:
            gone.append(worker)
    if not gone:
        return 0
    while (await front.reap())[1]:  # their leases expired with their heartbeats
        pass
    returned = 0
    for worker in gone:
        stored = 0
        for part in range(front.parts):
            raw = await front.redis.hget(front.part_prefix(part) + "stored", worker)
            stored += int(raw or 0)
        args = [front.prefix, "", worker, str(stored)]
        (back,) = await front.run([(lua_crawl.RECLAIM, front.prefix + "granted", args)])
        returned += int(back)
    return returned
