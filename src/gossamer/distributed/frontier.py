"""The shared frontier in Redis: what each worker asks for, and tells, about the crawl.

Data flow: seeds and links -> **RedisFrontier.add / complete** -> Redis -> **lease** -> the
worker's fetcher -> **complete** -> ... Many workers on many machines share one crawl: each
call is one Redis round-trip (a Lua script from :mod:`gossamer.distributed.lua`), atomic
against every other worker.

Key layout, all under ``gossamer:{NAME}:`` (``P``)::

    P settings          string  the crawl's settings, JSON (settings.py)
    P politeness        hash    delay, crawl_delay_cap, max_backoff, max_retries, per_host,
                                target (the page target, 0: none)
    P q:HOST            list    the host's queued jobs (codec.py JSON), oldest first
    P ready             zset    host -> next-allowed time; unleased hosts with queued work
    P host:HOST         hash    delay, next, errors (frontier.politeness.HostTiming; delay
                                once its robots.txt was read), site (its [[site]] tables'
                                delay, if they set one), fetched, admitted
    P lease:HOST        hash    worker, token, job (in flight), expires, reserved (a page)
    P pages / reserved  string  pages stored crawl-wide / page leases not yet completed
    P leases            zset    host -> lease expiry, for the reaper
    P held:WORKER       set     the hosts a worker holds, for its heartbeat
    P tokens            string  the fencing-token counter
    P seen:SHARD        set     64-bit fingerprints as integers (compact intsets)
    P robots:ORIGIN     string  robots.txt cache, JSON, with a TTL
    P control           hash    state: running | paused | stopped
    P workers / beats   hash    worker -> figures JSON / last heartbeat time

The clock is Redis ``TIME`` unless a ``clock`` is injected (tests): one clock for every machine,
so a delay holds across workers whatever their own clocks say.

A host's ``[[site]]`` tables (``sites``: :class:`~gossamer.sites.SiteRules`, the crawl's once
its settings are known) travel with each URL of the host that is queued: its URL budget and its
delay, which Redis keeps for the host. A host is leased to one worker at a time, so a shared
crawl asks a host at most one request at once, whatever ``max_per_host`` allows.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from gossamer.config import CrawlConfig
from gossamer.distributed import lua, settings
from gossamer.distributed.codec import decode_job, encode_job, seen_member
from gossamer.distributed.errors import SharedFrontierError
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, HostTiming, Outcome
from gossamer.sites import SiteRules
from gossamer.urls import host_of

__all__ = [
    "Deferred",
    "Finished",
    "Halted",
    "Idle",
    "Lease",
    "Leased",
    "Lost",
    "RedisFrontier",
    "Wait",
]

LEASE_TTL = 30.0  # seconds a lease lives without a heartbeat
REAP_LIMIT = 32  # expired leases returned per lease call (the rest on the next calls)
ADD_BATCH = 500  # URLs per ADD script call, so no single script holds Redis for long


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to fetch ``job`` from ``host`` now; ``token`` fences a stale completion."""

    host: str
    token: str
    job: Job


@dataclass(frozen=True, slots=True)
class Leased:
    lease: Lease


@dataclass(frozen=True, slots=True)
class Wait:
    """No host is ready before ``until`` (frontier clock)."""

    until: float


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing ready, but other workers hold leases: their links may bring work."""


@dataclass(frozen=True, slots=True)
class Finished:
    """No queued job and no lease anywhere: the crawl has run dry."""


@dataclass(frozen=True, slots=True)
class Deferred:
    """Nothing left but hosts waiting to retry an unavailable robots.txt, past their grace:
    the crawl ends, leaving these origins to its next run; ``why`` each robots.txt was
    unavailable (its status or error kind; empty if not known)."""

    why: tuple[tuple[str, str], ...]  # (origin, why), by origin

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(origin for origin, _ in self.why)


@dataclass(frozen=True, slots=True)
class Halted:
    """The crawl is paused or stopped (``state``)."""

    state: str


@dataclass(frozen=True, slots=True)
class Lost:
    """The lease had expired and was reaped (or taken over): the completion was refused."""


@dataclass(frozen=True, slots=True)
class Done:
    """The completion was recorded; the host may be asked again from ``next_time``."""

    next_time: float
    queued: int  # new links queued
    pages: int = 0  # pages stored crawl-wide, after this one (when it was counted)


LeaseAnswer = Leased | Wait | Idle | Finished | Deferred | Halted


@contextlib.contextmanager
def _wrapped(what: str) -> Iterator[None]:
    """Redis's own errors (connection lost, refused command) as one of ours."""
    try:
        yield
    except RedisError as exc:
        raise SharedFrontierError(f"Redis could not {what}: {exc}") from exc


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisFrontier:
    """One worker's handle on the crawl ``name`` in Redis."""

    def __init__(
        self,
        redis: Redis,
        name: str,
        worker: str,
        *,
        ttl: float = LEASE_TTL,
        clock: Callable[[], float] | None = None,
        sites: SiteRules | None = None,
    ) -> None:
        self.redis = redis
        # The crawl's [[site]] rules; set by ``create``, or by a joiner once it has read the
        # crawl's settings. None: every host keeps the crawl's delay and budget.
        self.sites = sites
        self.prefix = f"gossamer:{name}:"
        self.worker = worker
        self.ttl = ttl
        self._clock = clock
        self._lease = redis.register_script(lua.LEASE)
        self._complete = redis.register_script(lua.COMPLETE)
        self._renew = redis.register_script(lua.RENEW)
        self._reap = redis.register_script(lua.REAP)
        self._add = redis.register_script(lua.ADD)
        self._create = redis.register_script(lua.CREATE)
        self._crawl_delay = redis.register_script(lua.CRAWL_DELAY)
        self._retry_deferred = redis.register_script(lua.RETRY_DEFERRED)
        self._requeue = redis.register_script(lua.REQUEUE)

    def _now(self) -> str:
        return "" if self._clock is None else repr(self._clock())

    async def _run(self, script: Any, args: Sequence[str | float | int]) -> Any:
        with _wrapped("run a frontier step"):
            return await script(args=[self.prefix, self._now(), *args])

    async def create(self, config: CrawlConfig) -> bool:
        """Store the crawl's settings unless a crawl of this name exists; True if created.
        One script, so a creator that dies half-way leaves nothing half-made."""
        fields = settings.politeness_fields(config)
        self.sites = SiteRules.of(config)
        # LEASE reserves pages of the target, so a shared crawl stores exactly max_pages.
        fields["target"] = str(config.max_pages or 0)
        args = [self.prefix, settings.to_json(config)]
        args += [item for pair in fields.items() for item in pair]
        with _wrapped("create the crawl"):
            return bool(await self._create(args=args))

    async def stored_settings(self) -> bytes | str | None:
        with _wrapped("read the crawl's settings"):
            raw: bytes | str | None = await self.redis.get(self.prefix + "settings")
        return raw

    async def add(self, jobs: Iterable[Job]) -> int:
        """Queue the jobs whose URL was never seen; the number queued (per-host budget kept)."""
        queued = 0
        batch: list[str] = []
        for job in jobs:
            batch += _admission(job, self.sites)
            if len(batch) >= 6 * ADD_BATCH:
                queued += int(await self._run(self._add, batch))
                batch = []
        if batch:
            queued += int(await self._run(self._add, batch))
        return queued

    async def requeue(self, marker: str, jobs: Sequence[Job]) -> int | None:
        """Queue a recrawl's revisits of one folder's pages, the seen-set aside, unless that
        folder's were queued for the recrawl already (``marker``); the number queued, None
        when they were."""
        args: list[str] = [marker]
        for job in jobs:
            args += [job.host or host_of(job.url), encode_job(job)]
        queued = int(await self._run(self._requeue, args))
        return None if queued < 0 else queued

    async def recrawl(self) -> tuple[float, str] | None:
        """The recrawl the shared crawl is in: its start and mode ("all", "due"), if any."""
        with _wrapped("read the crawl's recrawl"):
            raw = await self.redis.hmget(self.prefix + "recrawl", "since", "mode")
        if raw[0] is None or raw[1] is None:
            return None
        return float(_text(raw[0])), _text(raw[1])

    async def begin_recrawl(self, since: float, mode: str) -> None:
        """Start a recrawl of the shared crawl: every worker queues its folder's pages."""
        with _wrapped("start a recrawl"):
            await self.redis.hset(
                self.prefix + "recrawl", mapping={"since": repr(since), "mode": mode}
            )
            # The pages to revisit are stored already: the crawl's page target would stop
            # the recrawl before its first request (as a lone recrawl lifts it too).
            await self.redis.hset(self.prefix + "politeness", "target", "0")

    async def lease(self) -> LeaseAnswer:
        """Lease the earliest ready host to this worker and take its next job (and, under a
        page target, one page of it: ``Halted("target")`` once the target is stored, ``Idle``
        while the pages stored and reserved by other leases reach it)."""
        reply = await self._run(self._lease, [self.worker, repr(self.ttl), REAP_LIMIT])
        kind = _text(reply[0])
        if kind == "job":
            host = _text(reply[1])
            job = decode_job(reply[3], host)
            return Leased(Lease(host=host, token=_text(reply[2]), job=job))
        if kind == "wait":
            return Wait(float(reply[1]))
        if kind == "idle":
            return Idle()
        if kind == "finished":
            return Finished()
        if kind == "deferred":
            found = (_text(entry).partition("\t") for entry in reply[1:])
            return Deferred(tuple(sorted((origin, why) for origin, _, why in found)))
        return Halted(kind)

    async def complete(
        self,
        lease: Lease,
        *,
        outcome: Outcome | str = "ok",
        retry_after: float | None = None,
        retry: Job | None = None,
        links: Iterable[Job] = (),
        count_page: bool = False,
        deferred: str = "",
    ) -> Done | Lost:
        """Record the fetch of ``lease.job``; the host's timing moves as
        :func:`gossamer.frontier.politeness.after` says for ``outcome``: a politeness
        ``Outcome``, or its answer's name (``ok``, ``fault``, ``slow``, ``local``,
        ``unavailable``) with ``retry_after`` as its wait (Retry-After; the seconds to the next
        robots.txt attempt). ``retry`` is queued again; ``links`` go through the seen-set;
        ``count_page`` adds one to the crawl's stored pages (``P pages``), else the lease's
        page reservation goes back to the target. ``deferred``: the origin whose robots.txt was
        unavailable (outcome ``unavailable``) and why, as ``origin TAB why``, for the list the
        crawl leaves to its next run.
        Refused (Lost) under a stale token."""
        if isinstance(outcome, str):
            try:
                outcome = Outcome(Answer(outcome), retry_after)
            except ValueError:
                raise ValueError(f"unknown outcome {outcome!r}") from None
        args: list[str] = [
            lease.host,
            lease.token,
            outcome.answer.value,
            "" if outcome.wait is None else repr(float(outcome.wait)),
            "" if retry is None else encode_job(retry),
            "1" if count_page else "0",
            deferred,
        ]
        for job in links:
            args += _admission(job, self.sites)
        reply = await self._run(self._complete, args)
        if _text(reply[0]) == "lost":
            return Lost()
        return Done(next_time=float(reply[1]), queued=int(reply[2]), pages=int(reply[3]))

    async def heartbeat(
        self, figures: Mapping[str, int | float], tokens: Iterable[str] | None = None
    ) -> set[str]:
        """Renew this worker's leases and store its figures; the hosts it still holds.

        With ``tokens``, only the leases of those tokens are renewed: a lease granted by a
        LEASE whose answer never arrived (the connection dropped) is not kept alive by the
        heartbeat, so it expires and its job goes back to the schedule."""
        figures = {**figures, "hosts": len(await self.held())}
        payload = json.dumps(figures, sort_keys=True)
        args = [self.worker, repr(self.ttl), payload]
        if tokens is not None:
            args += ["1", *tokens]
        held = await self._run(self._renew, args)
        return {_text(host) for host in held}

    async def held(self) -> set[bytes | str]:
        with _wrapped("list the leases held"):
            members: set[bytes | str] = await self.redis.smembers(
                self.prefix + "held:" + self.worker
            )
        return members

    async def reap(self, limit: int = 1000) -> tuple[list[str], int]:
        """Return expired leases to the schedule: (hosts reaped, in-flight jobs requeued)."""
        reply = await self._run(self._reap, [limit])
        return [_text(host) for host in reply[:-1]], int(reply[-1])

    async def retry_deferred(self) -> int:
        """A new run of the crawl: the robots.txt files the last run deferred are asked again
        at once; the number of hosts."""
        return int(await self._run(self._retry_deferred, []))

    async def pages(self) -> int:
        """Pages stored crawl-wide (every worker's)."""
        with _wrapped("read the crawl's pages"):
            raw = await self.redis.get(self.prefix + "pages")
        return int(raw or 0)

    async def set_crawl_delay(self, host: str, seconds: float | None) -> float:
        """Record ``host``'s robots.txt Crawl-delay (None: its robots.txt names none), capped
        by the crawl's cap; the host's delay from now on."""
        value = "" if seconds is None else repr(float(seconds))
        return float(await self._run(self._crawl_delay, [host, value]))

    async def timing(self, host: str) -> HostTiming:
        """The host's politeness state, as :mod:`gossamer.frontier.politeness` keeps it."""
        with _wrapped("read a host's timing"):
            got = await self.redis.hmget(
                self.prefix + "host:" + host, "delay", "next", "errors", "site"
            )
            base = await self.redis.hget(self.prefix + "politeness", "delay")
        delay, nxt, errors, site = (None if v is None else _text(v) for v in got)
        return HostTiming(
            float(delay if delay is not None else site if site is not None else base or 0.0),
            float(nxt or 0.0),
            int(errors or 0),
        )

    async def host_state(self, host: str) -> dict[str, float]:
        with _wrapped("read a host's state"):
            raw: dict[bytes | str, bytes | str] = await self.redis.hgetall(
                self.prefix + "host:" + host
            )
        return {_text(k): float(v) for k, v in raw.items()}

    async def queued(self, host: str) -> list[Job]:
        with _wrapped("read a host's queue"):
            raw: list[bytes | str] = await self.redis.lrange(self.prefix + "q:" + host, 0, -1)
        return [decode_job(item, host) for item in raw]


def _admission(job: Job, sites: SiteRules | None) -> list[str]:
    """The six ADD/COMPLETE arguments of one URL: shard, fingerprint, host, job JSON, and the
    URL budget and delay of its host's [[site]] tables ('' where the crawl's apply)."""
    shard, member = seen_member(job.url)
    host = job.host or host_of(job.url)
    budget = delay = ""
    if sites:
        rule = sites.for_host(host)
        if rule.matched:
            budget = str(rule.max_pages or 0)
            delay = repr(rule.delay)
    return [shard, member, host, encode_job(job), budget, delay]
