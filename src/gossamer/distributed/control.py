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
    elapsed: float = 0.0  # seconds the worker had run at that heartbeat

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    state: str
    queued_hosts: int  # hosts in the ready schedule
    leased_hosts: int
    workers: tuple[WorkerFigures, ...]
    queued_urls: int = 0  # URLs waiting in the hosts' queues
    now: float = 0.0  # Redis's clock when read, for the heartbeats' age
    pages: int = 0  # pages stored crawl-wide (counted when the crawl has a page target)


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
        elapsed = float(data.get("elapsed", 0.0)) if isinstance(data, dict) else 0.0
    except (ValueError, TypeError) as exc:
        raise SharedFrontierError(f"worker {worker!r} left unreadable figures: {exc}") from exc
    if not valid:
        raise SharedFrontierError(f"worker {worker!r} left malformed figures in Redis")
    return WorkerFigures(worker, data["pages"], data["errors"], data["hosts"], when, elapsed)


async def _queued_urls(redis: Redis, name: str, hosts: list[bytes]) -> int:
    """The URLs queued for ``hosts``, a pipeline of LLEN per thousand hosts."""
    total = 0
    for start in range(0, len(hosts), 1000):
        async with redis.pipeline(transaction=False) as pipe:
            for host in hosts[start : start + 1000]:
                pipe.llen(_key(name, "q:" + host.decode()))
            total += sum(int(n) for n in await pipe.execute())
    return total


async def status(redis: Redis, name: str) -> CrawlStatus:
    """The crawl's state, schedule sizes, queued URLs and every worker's last figures."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hget(_key(name, "control"), "state")
        pipe.zrange(_key(name, "ready"), 0, -1)
        pipe.zrange(_key(name, "leases"), 0, -1)
        pipe.hgetall(_key(name, "workers"))
        pipe.hgetall(_key(name, "beats"))
        pipe.time()
        pipe.get(_key(name, "pages"))
        state, ready, leases, workers, beats, now, pages = await pipe.execute()
    if state is None:
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    figures = tuple(
        sorted(
            (_figures(w.decode(), raw, beats.get(w)) for w, raw in workers.items()),
            key=lambda f: f.worker,
        )
    )
    queued = await _queued_urls(redis, name, list(ready) + list(leases))
    clock = float(now[0]) + now[1] / 1e6
    return CrawlStatus(
        state.decode(), len(ready), len(leases), figures, queued, clock, int(pages or 0)
    )
