"""Each worker's full status in Redis, for the Crawl page of ``gossamer serve --frontier``.

Data flow: a worker's heartbeat (``distributed/worker.py``) -> **livestatus** -> the crawl's
``status`` hash in Redis (one field per worker: its status as a local crawl reports it, in
``monitor/status.py``'s shape, without the timeline) -> the web side's ``RedisFeed``, which
merges them as the ``--workers`` fleet merges its workers'. What is read back is data, not
code: a field that does not parse as a status object is left out.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis

from gossamer.monitor.status import LoopFigures, crawl_status
from gossamer.stats import CrawlStats

__all__ = ["publish_status", "read_statuses", "worker_status"]


def worker_status(
    stats: CrawlStats,
    *,
    worker: str,
    state: str,
    reason: str,
    leased: int,
    concurrency: int,
    targets: tuple[int | None, float | None],
) -> dict[str, Any]:
    """One worker's status: what a local crawl reports, its hosts being its leases."""
    figures = LoopFigures(
        state=state,
        reason=reason,
        in_flight=leased,
        queue=0,  # the queues are the crawl's, in Redis: the feed counts them once
        hosts_active=leased,
        hosts_visiting=leased,
        hosts_deferred=0,
        concurrency=concurrency,
        max_pages=targets[0],
        time_limit=targets[1],
    )
    status = crawl_status(stats, figures, lambda _: None, worker=worker)
    del status["timeline"]  # the feed samples the crawl's own from the merged totals
    return status


async def publish_status(redis: Redis, prefix: str, worker: str, status: dict[str, Any]) -> None:
    await redis.hset(prefix + "status", worker, json.dumps(status, separators=(",", ":")))


async def read_statuses(redis: Redis, prefix: str) -> dict[str, dict[str, Any]]:
    """Every worker's last status, by worker name, in name order."""
    raw: dict[bytes | str, bytes | str] = await redis.hgetall(prefix + "status")
    found: dict[str, dict[str, Any]] = {}
    for worker, text in sorted(raw.items(), key=lambda item: str(item[0])):
        try:
            status = json.loads(text)
        except ValueError:
            continue
        if isinstance(status, dict) and isinstance(status.get("totals"), dict):
            name = worker.decode(errors="replace") if isinstance(worker, bytes) else worker
            found[name] = status
    return found
