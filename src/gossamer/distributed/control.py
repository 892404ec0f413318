"""Remote control of a shared crawl and the per-worker figures, for ``gossamer ctl``.

Data flow: ``gossamer ctl pause|resume|stop`` -> **control** -> Redis ``P control`` -> the
LEASE script (a paused or stopped crawl hands out no job). Workers' heartbeats write their
figures (``P workers``) and time (``P beats``); :func:`status` reads them back, checked, since
what is in Redis is data, never code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from redis.asyncio import Redis

from gossamer.distributed.errors import SharedFrontierError

__all__ = ["STATES", "CrawlStatus", "WorkerFigures", "set_state", "status"]

STATES = ("running", "paused", "stopped")
_FIGURES = ("pages", "errors", "hosts")


@dataclass(frozen=True, slots=True)
class WorkerFigures:
    worker: str
    pages: int
    errors: int
    hosts: int  # hosts leased at the heartbeat
    beat: float  # frontier-clock time of the last heartbeat


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    state: str
    queued_hosts: int  # hosts in the ready schedule
    leased_hosts: int
    workers: tuple[WorkerFigures, ...]


def _key(name: str, part: str) -> str:
    return f"gossamer:{name}:{part}"


async def set_state(redis: Redis, name: str, state: str) -> None:
    """Pause, resume (``running``) or stop the crawl ``name``."""
    if state not in STATES:
        raise ValueError(f"unknown crawl state {state!r}")
    if not await redis.exists(_key(name, "settings")):
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    await redis.hset(_key(name, "control"), "state", state)


def _figures(worker: str, raw: bytes, beat: bytes | None) -> WorkerFigures:
    try:
        data = json.loads(raw)
        valid = isinstance(data, dict) and all(
            isinstance(data.get(k), int) and not isinstance(data.get(k), bool) for k in _FIGURES
        )
        when = float(beat) if beat is not None else 0.0
    except ValueError as exc:
        raise SharedFrontierError(f"worker {worker!r} left unreadable figures: {exc}") from exc
    if not valid:
        raise SharedFrontierError(f"worker {worker!r} left malformed figures in Redis")
    return WorkerFigures(worker, data["pages"], data["errors"], data["hosts"], when)


async def status(redis: Redis, name: str) -> CrawlStatus:
    """The crawl's state, schedule sizes and every worker's last figures, in one round-trip."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hget(_key(name, "control"), "state")
        pipe.zcard(_key(name, "ready"))
        pipe.zcard(_key(name, "leases"))
        pipe.hgetall(_key(name, "workers"))
        pipe.hgetall(_key(name, "beats"))
        state, ready, leases, workers, beats = await pipe.execute()
    if state is None:
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    figures = tuple(
        sorted(
            (_figures(w.decode(), raw, beats.get(w)) for w, raw in workers.items()),
            key=lambda f: f.worker,
        )
    )
    return CrawlStatus(state.decode(), int(ready), int(leases), figures)
