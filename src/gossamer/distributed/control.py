"""Remote control of a shared crawl and what it is doing now, for ``gossamer ctl``.

Data flow: ``gossamer ctl pause|resume|stop`` -> **control** -> Redis ``P control`` -> the
LEASE script (a paused or stopped crawl hands out no job). Workers' heartbeats write their
figures (``P workers``), time (``P beats``) and status (``P status``); :func:`status` reads
them back with the leases in one snapshot, checked, since what is in Redis is data, never code.

One snapshot is the point: the leases are read with the figures in one read-only script, so
each worker's leased hosts are counted from the leases themselves (not from its own word at
its last heartbeat, up to a second old, or much older for a dead worker) and the crawl's total
is the sum of the rows. A worker whose heartbeat is older than the lease TTL is ``gone``: its
leases can no longer be renewed, so its hosts wait for another worker's LEASE to take them
over (the reaper runs there), and they are counted as such, not as work under way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from redis.asyncio import Redis

from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import LEASE_TTL
from gossamer.distributed.keys import crawl_prefix, part_prefix
from gossamer.distributed.livestatus import parse_statuses

__all__ = ["STATES", "CrawlStatus", "WorkerFigures", "set_state", "status"]

STATES = ("running", "paused", "stopped")
WORKING, ENDED, GONE = "working", "ended", "gone"
_FIGURES = ("pages", "errors")

# Read-only: one atomic look at the crawl-wide keys. ARGV: G
# -> {state, TIME s, TIME us, domains, known hosts, then the workers, beats and status
#     hashes, each as its length and its flat pairs}
_SNAPSHOT = """
local G = ARGV[1]
local t = redis.call('TIME')
local out = {redis.call('HGET', G..'control', 'state') or '', t[1], t[2],
             redis.call('SCARD', G..'domains'), redis.call('SCARD', G..'hosts')}
for _, key in ipairs({'workers', 'beats', 'status'}) do
  local flat = redis.call('HGETALL', G..key)
  table.insert(out, #flat)
  for _, item in ipairs(flat) do table.insert(out, item) end
end
return out
"""

# Read-only: one atomic look at a partition. ARGV: P
# -> {ready host count, pages, lease count, (host, worker, expires)...}
_PART = """
local P = ARGV[1]
local out = {redis.call('ZCARD', P..'ready'), redis.call('GET', P..'pages') or '0'}
local leases = redis.call('ZRANGE', P..'leases', 0, -1, 'WITHSCORES')
table.insert(out, #leases / 2)
for i = 1, #leases, 2 do
  local raw = redis.call('HGET', P..'lease', leases[i]) or ''
  table.insert(out, leases[i])
  table.insert(out, string.match(raw, '^[^\t]*\t([^\t]*)') or '')
  table.insert(out, leases[i + 1])
end
return out
"""


@dataclass(frozen=True, slots=True)
class WorkerFigures:
    worker: str
    pages: int
    errors: int
    hosts: int  # hosts it holds a live lease on, counted from the leases
    beat: float | None  # frontier-clock time of the last heartbeat (None: not beaten yet)
    elapsed: float = 0.0  # seconds the worker had run at that heartbeat
    state: str = WORKING  # working, ended (said its last word) or gone (heartbeat too old)
    takeover: int = 0  # hosts whose lease it held and that wait for another worker

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.elapsed if self.elapsed > 0 else 0.0

    def age(self, now: float) -> float | None:
        return None if self.beat is None else max(0.0, now - self.beat)


@dataclass(frozen=True, slots=True)
class CrawlStatus:
    state: str
    queued_hosts: int  # hosts in the ready schedule
    leased_hosts: int  # hosts under a live lease: the sum of the workers' ``hosts``
    workers: tuple[WorkerFigures, ...]
    queued_urls: int = 0  # URLs waiting in the hosts' queues
    now: float = 0.0  # Redis's clock when read, for the heartbeats' age
    pages: int = 0  # pages stored crawl-wide (counted when the crawl has a page target)
    takeover_hosts: int = 0  # leased to a gone worker or expired: the sum of ``takeover``
    domains: int = 0  # hosts with a page stored, crawl-wide (livestatus's ``P domains``)
    known_hosts: int = 0  # hosts any worker recorded anything of (``P hosts``)
    parts: Mapping[str, dict[str, Any]] | None = None  # each worker's full status

    @property
    def alive(self) -> tuple[WorkerFigures, ...]:
        return tuple(w for w in self.workers if w.state == WORKING)


def _key(name: str, part: str) -> str:
    return crawl_prefix(name) + part


async def parts_of(redis: Redis, name: str) -> int:
    """The crawl's partitions (``keys.py``), as it was made with them."""
    return max(1, int(await redis.hget(_key(name, "politeness"), "parts") or 1))


async def set_state(redis: Redis, name: str, state: str) -> None:
    """Pause, resume (``running``) or stop the crawl ``name``: crawl-wide, and in each
    partition's copy, which its steps read."""
    if state not in STATES:
        raise ValueError(f"unknown crawl state {state!r}")
    if not await redis.exists(_key(name, "settings")):
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    await redis.hset(_key(name, "control"), "state", state)
    for part in range(await parts_of(redis, name)):
        await redis.hset(part_prefix(name, part) + "conf", "state", state)


def _text(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _figures(worker: str, raw: bytes | str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise SharedFrontierError(f"worker {worker!r} left unreadable figures: {exc}") from exc
    valid = isinstance(data, dict) and all(
        isinstance(data.get(k), int) and not isinstance(data.get(k), bool) for k in _FIGURES
    )
    if not valid:
        raise SharedFrontierError(f"worker {worker!r} left malformed figures in Redis")
    return data  # type: ignore[no-any-return]


def _number(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return default


def _state_of(
    figures: Mapping[str, Any], beat: float | None, part: Mapping[str, Any], now: float, ttl: float
) -> str:
    if part.get("state") == "ended":
        return ENDED
    # A worker that says its own lease TTL is judged by it; others by the reader's.
    own = _number(figures.get("lease_ttl"), ttl)
    if beat is not None and now - beat > own:
        return GONE
    return WORKING


def _pairs(flat: list[Any], start: int) -> tuple[dict[str, bytes | str], int]:
    count = int(flat[start])
    items = flat[start + 1 : start + 1 + count]
    return {_text(items[i]): items[i + 1] for i in range(0, count, 2)}, start + 1 + count


async def queued_urls(redis: Redis, name: str) -> int:
    """The URLs queued for the hosts in the schedule or under lease (LLEN per host,
    pipelined by the thousand); outside the snapshot, a count that is no row's sum."""
    total = 0
    for part in range(await parts_of(redis, name)):
        prefix = part_prefix(name, part)
        async with redis.pipeline(transaction=False) as pipe:
            pipe.zrange(prefix + "ready", 0, -1)
            pipe.zrange(prefix + "leases", 0, -1)
            ready, leases = await pipe.execute()
        hosts = list(ready) + list(leases)
        for start in range(0, len(hosts), 1000):
            async with redis.pipeline(transaction=False) as pipe:
                for host in hosts[start : start + 1000]:
                    pipe.llen(prefix + "q:" + _text(host))
                total += sum(int(n) for n in await pipe.execute())
    return total


async def status(redis: Redis, name: str, *, ttl: float = LEASE_TTL) -> CrawlStatus:
    """The crawl's state, schedule sizes, queued URLs, and every worker as its leases and
    heartbeat show it now; ``ttl`` is the workers' lease TTL (``--lease-ttl``)."""
    flat = await redis.eval(_SNAPSHOT, 1, _key(name, "control"), _key(name, ""))
    state = _text(flat[0])
    if not state:
        raise SharedFrontierError(f"there is no crawl named {name!r} in this Redis")
    now = float(flat[1]) + float(flat[2]) / 1e6
    ready = pages = 0
    leases: list[tuple[str, float]] = []
    for part in range(await parts_of(redis, name)):
        prefix = part_prefix(name, part)
        got = await redis.eval(_PART, 1, prefix + "ready", prefix)
        ready, pages = ready + int(got[0]), pages + int(got[1])
        count = int(got[2])
        leases += [(_text(got[i + 1]), float(got[i + 2])) for i in range(3, 3 + 3 * count, 3)]
    at = 5
    workers, at = _pairs(flat, at)
    beats, at = _pairs(flat, at)
    raw_parts, at = _pairs(flat, at)
    parts = parse_statuses(raw_parts)
    figures = {worker: _figures(worker, raw) for worker, raw in workers.items()}
    names = sorted(set(figures) | {worker for worker, _ in leases if worker})
    rows: dict[str, WorkerFigures] = {}
    for worker in names:
        data = figures.get(worker, {})
        beat = float(beats[worker]) if worker in beats else None
        rows[worker] = WorkerFigures(
            worker,
            int(data.get("pages", 0)),
            int(data.get("errors", 0)),
            0,
            beat,
            _number(data.get("elapsed"), 0.0),
            _state_of(data, beat, parts.get(worker, {}), now, ttl),
        )
    for worker, expires in leases:
        row = rows.get(worker)
        if row is None:  # a lease without its hash: nobody's, the reaper will clear it
            continue
        if row.state == WORKING and expires > now:
            rows[worker] = replace(row, hosts=row.hosts + 1)
        else:  # expired, or its worker can no longer renew it: the next LEASE reaps it
            rows[worker] = replace(row, takeover=row.takeover + 1)
    found = tuple(rows.values())
    return CrawlStatus(
        state=state,
        queued_hosts=ready,
        leased_hosts=sum(w.hosts for w in found),
        workers=found,
        queued_urls=await queued_urls(redis, name),
        now=now,
        pages=pages,
        takeover_hosts=sum(w.takeover for w in found),
        domains=int(flat[3]),
        known_hosts=int(flat[4]),
        parts=parts,
    )
