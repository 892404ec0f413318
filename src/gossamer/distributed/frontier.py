"""The shared frontier in Redis: what each worker asks for, and tells, about the crawl.

Data flow: seeds and links -> **RedisFrontier** -> Redis -> leases -> the worker's fetcher ->
completions -> ... Many workers on many machines share one crawl. A worker's calls are
batches (``batch.StepCall``: completions, links and leases for one partition in one Lua
script, :mod:`gossamer.distributed.lua`), and one round of them is one pipeline: one client
round trip per Redis node, whatever the batch holds.

Where the keys live, and what each holds: ``keys.py``.

The clock is Redis ``TIME`` unless a ``clock`` is injected (tests): one clock for every
machine, so a delay holds across workers whatever their own clocks say.

A host's ``[[site]]`` tables (``sites``: :class:`~gossamer.sites.SiteRules`, the crawl's once
its settings are known) travel with each URL of the host that is queued: its URL budget and its
delay, which Redis keeps for the host. A host is leased to one worker at a time, so a shared
crawl asks a host at most one request at once, whatever ``max_per_host`` allows.

Besides the batches, single calls (``lease``, ``complete``, ``add``) serve tools and tests.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from redis.asyncio import Redis

from gossamer.config import CrawlConfig
from gossamer.distributed import lua, lua_crawl, settings
from gossamer.distributed.answers import (
    Credit,
    Deferred,
    Done,
    Finished,
    Halted,
    Idle,
    LeaseAnswer,
    Leased,
    Lost,
    Wait,
    summarise,
)
from gossamer.distributed.batch import (
    Completion,
    Lease,
    StepCall,
    StepReply,
    admission,
    parse_reply,
    text,
)
from gossamer.distributed.codec import decode_job, encode_job
from gossamer.distributed.connect import is_cluster
from gossamer.distributed.errors import redis_errors
from gossamer.distributed.keys import PARTS_PER_NODE, crawl_prefix, part_of, part_prefix
from gossamer.distributed.reclaim import reclaim_gone
from gossamer.distributed.scripts import Call, Scripts
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, HostTiming, Outcome
from gossamer.sites import SiteRules
from gossamer.urls import host_of

__all__ = [
    "Completion",
    "Credit",
    "Deferred",
    "Done",
    "Finished",
    "Halted",
    "Idle",
    "Lease",
    "Leased",
    "Lost",
    "RedisFrontier",
    "StepCall",
    "StepReply",
    "Wait",
]

LEASE_TTL = 30.0  # seconds a lease lives without a heartbeat
ADD_BATCH = 500  # URLs per step call, so no single script holds Redis for long


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
        parts: int | None = None,
    ) -> None:
        self.redis = redis
        # The crawl's [[site]] rules; set by ``create``, or by a joiner once it has read the
        # crawl's settings. None: every host keeps the crawl's delay and budget.
        self.sites = sites
        self.name = name
        self.prefix = crawl_prefix(name)
        self.worker = worker
        self.ttl = ttl
        self._clock = clock
        # The crawl's partitions: known from ``create`` or ``open`` (1 until then).
        self.parts = parts or 1
        self._scripts = Scripts(redis)
        self._turn = itertools.count()  # which partition a single lease asks first

    # -- plumbing ---------------------------------------------------------------------------
    def _now(self) -> str:
        return "" if self._clock is None else repr(self._clock())

    def part(self, host: str) -> int:
        return part_of(host, self.parts)

    def part_prefix(self, part: int) -> str:
        return part_prefix(self.name, part)

    async def run(self, calls: Sequence[Call]) -> list[Any]:
        """Run ``(script, key, args)`` calls in one pipeline (``scripts.py``)."""
        return await self._scripts.run(calls)

    def step_call(self, call: StepCall) -> tuple[str, str, list[str]]:
        prefix = self.part_prefix(call.part)
        return lua.STEP, prefix + "ready", call.args(prefix, self._now(), self.worker, self.ttl)

    def credit_call(self, take: int, give: int) -> tuple[str, str, list[str]]:
        args = [self.prefix, self._now(), self.worker, str(take), str(give)]
        return lua_crawl.CREDIT, self.prefix + "credit", args

    async def steps(self, calls: Sequence[StepCall]) -> list[StepReply]:
        replies = await self.run([self.step_call(call) for call in calls])
        return [parse_reply(call.part, reply) for call, reply in zip(calls, replies, strict=True)]

    @staticmethod
    def credit_of(reply: Sequence[Any]) -> Credit:
        return Credit(int(reply[0]), int(reply[1]), text(reply[2]), int(reply[3]))

    async def credit(self, take: int, give: int = 0) -> Credit:
        return self.credit_of((await self.run([self.credit_call(take, give)]))[0])

    # -- the crawl --------------------------------------------------------------------------
    async def create(self, config: CrawlConfig, parts: int | None = None) -> bool:
        """Store the crawl's settings unless a crawl of this name exists; True if created.
        ``parts``: the frontier's partitions (default: 1 on one Redis, ``PARTS_PER_NODE`` per
        master of a cluster). Then ``open``."""
        fields = settings.politeness_fields(config)
        self.sites = SiteRules.of(config)
        fields["target"] = str(config.max_pages or 0)
        if parts is None:
            parts = await self._masters() * PARTS_PER_NODE if is_cluster(self.redis) else 1
        fields["parts"] = str(max(1, parts))
        args = [self.prefix, settings.to_json(config)]
        args += [item for pair in fields.items() for item in pair]
        created = bool((await self.run([(lua_crawl.CREATE, self.prefix + "settings", args)]))[0])
        await self.open()
        return created

    async def _masters(self) -> int:
        with redis_errors("list the cluster's masters"):
            cluster: Any = self.redis
            await cluster.initialize()  # the nodes are known once it has asked one
            return len(cluster.get_primaries())

    async def open(self) -> None:
        """Learn the crawl's partitions and write each one's copy of the politeness values and
        the control state (idempotent: every worker that joins does it)."""
        with redis_errors("read the crawl's politeness"):
            fields = {
                text(k): text(v)
                for k, v in (await self.redis.hgetall(self.prefix + "politeness")).items()
            }
            state = await self.redis.hget(self.prefix + "control", "state")
        if not fields:
            return
        self.parts = max(1, int(fields.get("parts", "1")))
        fields["state"] = text(state) if state is not None else "running"
        flat = [item for pair in fields.items() for item in pair]
        calls = [
            (lua.CONF, self.part_prefix(k) + "conf", [self.part_prefix(k), *flat])
            for k in range(self.parts)
        ]
        await self.run(calls)

    async def stored_settings(self) -> bytes | str | None:
        with redis_errors("read the crawl's settings"):
            raw: bytes | str | None = await self.redis.get(self.prefix + "settings")
        return raw

    def links_by_part(self, jobs: Iterable[Job]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = defaultdict(list)
        for job in jobs:
            out[self.part(job.host or host_of(job.url))] += admission(job, self.sites)
        return out

    async def add(self, jobs: Iterable[Job]) -> int:
        """Queue the jobs whose URL was never seen; the number queued (per-host budget kept)."""
        calls = []
        for part, args in self.links_by_part(jobs).items():
            for start in range(0, len(args), 6 * ADD_BATCH):
                calls.append(StepCall(part, links=args[start : start + 6 * ADD_BATCH]))
        if not calls:
            return 0
        return sum(reply.queued for reply in await self.steps(calls))

    async def requeue(self, marker: str, jobs: Sequence[Job]) -> int | None:
        """Queue a recrawl's revisits of one folder's pages, the seen-set aside, unless that
        folder's were queued for the recrawl already (``marker``); the number queued, None
        when they were."""
        by_part: dict[int, list[str]] = defaultdict(list)
        for job in jobs:
            host = job.host or host_of(job.url)
            by_part[self.part(host)] += [host, encode_job(job)]
        calls = []
        for part in range(self.parts):
            prefix = self.part_prefix(part)
            calls.append(
                (lua.REQUEUE, prefix + "recrawled", [prefix, self._now(), marker, *by_part[part]])
            )
        answers = [int(n) for n in await self.run(calls)]
        return None if all(n < 0 for n in answers) else sum(n for n in answers if n > 0)

    async def recrawl(self) -> tuple[float, str] | None:
        """The recrawl the shared crawl is in: its start and mode ("all", "due"), if any."""
        with redis_errors("read the crawl's recrawl"):
            raw = await self.redis.hmget(self.prefix + "recrawl", "since", "mode")
        if raw[0] is None or raw[1] is None:
            return None
        return float(text(raw[0])), text(raw[1])

    async def begin_recrawl(self, since: float, mode: str) -> None:
        """Start a recrawl of the shared crawl: every worker queues its folder's pages."""
        with redis_errors("start a recrawl"):
            await self.redis.hset(
                self.prefix + "recrawl", mapping={"since": repr(since), "mode": mode}
            )
            # The pages to revisit are stored already: the crawl's page target would stop
            # the recrawl before its first request (as a lone recrawl lifts it too).
            await self.redis.hset(self.prefix + "politeness", "target", "0")

    # -- single calls, for tools and tests ---------------------------------------------------
    async def lease(self) -> LeaseAnswer:
        """Lease one host to this worker and take its next job: the partitions asked in turn.
        Under a page target the lease holds one page of it: ``Halted("target")`` once the
        target is stored, ``Idle`` while credit held by others may still store it."""
        credit = await self.credit(1)
        if credit.state in ("paused", "stopped"):
            return Halted(credit.state)
        reserve = credit.target > 0
        if reserve and credit.granted <= 0 and credit.left == 0 and await reclaim_gone(self):
            credit = await self.credit(1)
        if reserve and credit.granted <= 0:
            return Halted("target") if await self.pages() >= credit.target else Idle()
        first = next(self._turn) % self.parts
        replies = []
        for k in range(self.parts):
            call = StepCall((first + k) % self.parts, want=1, reserve=reserve)
            (reply,) = await self.steps([call])
            if reply.leases:
                return Leased(reply.leases[0])
            replies.append(reply)
        if reserve:
            await self.credit(0, give=credit.granted)
        return summarise(replies)

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
        """Record the fetch of ``lease.job`` (one completion; the worker's rounds batch
        them): ``outcome`` a politeness ``Outcome`` or its answer's name (``ok``, ``fault``,
        ``slow``, ``local``, ``unavailable``) with ``retry_after`` as its wait. ``links`` go
        through the seen-set first. A lease under a target gives its page back when no page
        was stored. Refused (Lost) under a stale token."""
        if isinstance(outcome, str):
            try:
                outcome = Outcome(Answer(outcome), retry_after)
            except ValueError:
                raise ValueError(f"unknown outcome {outcome!r}") from None
        part = self.part(lease.host)
        by_part = self.links_by_part(links)
        own = by_part.pop(part, [])
        queued = 0
        if by_part:  # the links first: the lease holds the work until they are queued
            queued += sum(
                r.queued
                for r in await self.steps([StepCall(p, links=a) for p, a in by_part.items()])
            )
        done = Completion(lease, outcome, retry, count_page, deferred)
        (reply,) = await self.steps([StepCall(part, completions=[done], links=own)])
        if reply.lost:
            return Lost()
        if not count_page:  # its page of the target, if it held one, goes back
            await self.credit(0, give=1 if await self._target() else 0)
        return Done(queued=queued + reply.queued, pages=await self.pages())

    async def heartbeat(
        self, figures: Mapping[str, int | float], leases: Mapping[str, str] | None = None
    ) -> set[str]:
        """Renew this worker's leases (``leases``: host -> token, those it knows it holds;
        a lease granted by a step whose answer never arrived is not named, so it expires and
        its job goes back to the schedule) and store its figures; the hosts it still holds."""
        leases = leases or {}
        figures = {**figures, "hosts": len(leases)}
        by_part: dict[int, list[str]] = defaultdict(list)
        for host, token in leases.items():
            by_part[self.part(host)] += [host, token]
        calls: list[tuple[str, str, Sequence[str | float | int]]] = []
        for part, pairs in by_part.items():
            prefix = self.part_prefix(part)
            calls.append(
                (
                    lua.RENEW,
                    prefix + "lease",
                    [prefix, self._now(), self.worker, repr(self.ttl), *pairs],
                )
            )
        held = await self.run(calls) if calls else []
        with redis_errors("store the worker's figures"):
            now = await self.now()
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(self.prefix + "workers", self.worker, json.dumps(figures, sort_keys=True))
                pipe.hset(self.prefix + "beats", self.worker, repr(now))
                await pipe.execute()
        return {text(host) for hosts in held for host in hosts}

    async def _target(self) -> int:
        with redis_errors("read the page target"):
            raw = await self.redis.hget(self.prefix + "politeness", "target")
        return int(raw or 0)

    async def now(self) -> float:
        """The frontier's clock: Redis ``TIME``, or the injected clock."""
        if self._clock is not None:
            return self._clock()
        seconds, micros = await self.redis.time()
        return float(seconds) + micros / 1e6

    async def reap(self) -> tuple[list[str], int]:
        """Return expired leases to the schedule in every partition: (hosts whose job went
        back, jobs requeued)."""
        before = {p: await self._leased(p) for p in range(self.parts)}
        await self.steps([StepCall(part) for part in range(self.parts)])
        hosts = [h for p in range(self.parts) for h in sorted(before[p] - await self._leased(p))]
        return hosts, len(hosts)

    async def _leased(self, part: int) -> set[str]:
        with redis_errors("read the leases"):
            return {text(h) for h in await self.redis.hkeys(self.part_prefix(part) + "lease")}

    async def retry_deferred(self) -> int:
        """A new run of the crawl: the robots.txt files the last run deferred are asked again
        at once; the number of hosts."""
        calls = [
            (
                lua.RETRY_DEFERRED,
                self.part_prefix(k) + "deferred",
                [self.part_prefix(k), self._now()],
            )
            for k in range(self.parts)
        ]
        return sum(int(n) for n in await self.run(calls))

    async def pages(self) -> int:
        """Pages stored crawl-wide (every worker's, every partition's)."""
        with redis_errors("read the crawl's pages"):
            async with self.redis.pipeline(transaction=False) as pipe:
                for part in range(self.parts):
                    pipe.get(self.part_prefix(part) + "pages")
                return sum(int(raw or 0) for raw in await pipe.execute())

    async def set_crawl_delay(self, host: str, seconds: float | None) -> float:
        """Record ``host``'s robots.txt Crawl-delay (None: its robots.txt names none), capped
        by the crawl's cap; the host's delay from now on."""
        prefix = self.part_prefix(self.part(host))
        value = "" if seconds is None else repr(float(seconds))
        (delay,) = await self.run(
            [(lua.CRAWL_DELAY, prefix + "host:" + host, [prefix, self._now(), host, value])]
        )
        return float(delay)

    def host_key(self, host: str) -> str:
        return self.part_prefix(self.part(host)) + "host:" + host

    async def timing(self, host: str) -> HostTiming:
        """The host's politeness state, as :mod:`gossamer.frontier.politeness` keeps it."""
        conf = self.part_prefix(self.part(host)) + "conf"
        with redis_errors("read a host's timing"):
            got = await self.redis.hmget(self.host_key(host), "delay", "next", "errors", "site")
            base = await self.redis.hget(conf, "delay")
        delay, nxt, errors, site = (None if v is None else text(v) for v in got)
        return HostTiming(
            float(delay if delay is not None else site if site is not None else base or 0.0),
            float(nxt or 0.0),
            int(errors or 0),
        )

    async def host_state(self, host: str) -> dict[str, float]:
        with redis_errors("read a host's state"):
            raw: dict[bytes | str, bytes | str] = await self.redis.hgetall(self.host_key(host))
        return {text(k): float(v) for k, v in raw.items()}

    async def queued(self, host: str) -> list[Job]:
        key = self.part_prefix(self.part(host)) + "q:" + host
        with redis_errors("read a host's queue"):
            raw: list[bytes | str] = await self.redis.lrange(key, 0, -1)
        return [decode_job(item, host) for item in raw]
