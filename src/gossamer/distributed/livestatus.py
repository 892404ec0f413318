"""Each worker's full status in Redis, for the Crawl page of ``gossamer serve --frontier``.

Data flow: a worker's heartbeat (``distributed/worker.py``) -> **livestatus** -> the crawl's
``status`` hash in Redis (one field per worker: its status as a local crawl reports it, in
``monitor/status.py``'s shape, without the timeline) -> the web side's ``RedisFeed``, which
merges them as the ``--workers`` fleet merges its workers'. What is read back is data, not
code: a field that does not parse as a status object is left out.

A host is not one worker's in a shared crawl: it goes to whichever worker leases it next, so
adding the workers' host counts counts a host once per worker that visited it. The names are
therefore gathered crawl-wide, in two sets beside the statuses: ``P domains`` (hosts with a
page stored) and ``P hosts`` (every host a worker has recorded anything of); the merged status
counts those sets once. A worker sends its names only when its own count has grown since its
last status, so a steady crawl sends none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis

from gossamer.monitor.status import LoopFigures, crawl_status
from gossamer.stats import CrawlStats

__all__ = ["parse_statuses", "publish_status", "read_statuses", "worker_status"]

# The host names a status carries to publish_status, which takes them out before storing it.
_NAMES = "_host_names"


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
    status[_NAMES] = (
        [host for host, entry in stats.hosts.items() if entry.pages],
        list(stats.hosts),
    )
    return status


def _counts(raw: bytes | str | None) -> tuple[int, int]:
    """(domains, known hosts) of a worker's last stored status; (-1, -1) if none."""
    found = parse_statuses({"": raw}).get("") if raw is not None else None
    if found is None:
        return -1, -1
    return int(found["totals"].get("domains", -1)), int(found.get("hosts", {}).get("known", -1))


async def publish_status(redis: Redis, prefix: str, worker: str, status: dict[str, Any]) -> None:
    """Store ``status`` as ``worker``'s; its host names join the crawl-wide sets when its
    counts grew since the last one."""
    with_pages, known = status.pop(_NAMES, ([], []))
    before = _counts(await redis.hget(prefix + "status", worker))
    async with redis.pipeline(transaction=False) as pipe:
        if with_pages and len(with_pages) > before[0]:
            pipe.sadd(prefix + "domains", *with_pages)
        if known and len(known) > before[1]:
            pipe.sadd(prefix + "hosts", *known)
        pipe.hset(prefix + "status", worker, json.dumps(status, separators=(",", ":")))
        await pipe.execute()


def parse_statuses(raw: Mapping[str, bytes | str | None]) -> dict[str, dict[str, Any]]:
    """The statuses of ``raw`` (worker -> JSON) that parse as one, by worker name, in name
    order."""
    found: dict[str, dict[str, Any]] = {}
    for worker, text in sorted(raw.items()):
        if text is None:
            continue
        try:
            status = json.loads(text)
        except ValueError:
            continue
        if isinstance(status, dict) and isinstance(status.get("totals"), dict):
            found[worker] = status
    return found


async def read_statuses(redis: Redis, prefix: str) -> dict[str, dict[str, Any]]:
    """Every worker's last status, by worker name, in name order."""
    raw: dict[bytes | str, bytes | str] = await redis.hgetall(prefix + "status")
    return parse_statuses({_name(worker): text for worker, text in raw.items()})


def _name(worker: bytes | str) -> str:
    return worker.decode(errors="replace") if isinstance(worker, bytes) else worker
