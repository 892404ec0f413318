"""Web UI, the feed of a crawl shared through Redis (``gossamer serve DIR --frontier URL``).

Data flow: every worker's heartbeat writes its status to Redis (``distributed/livestatus.py``)
-> **redisfeed** (once a second while a browser or a scrape wants it) -> the Crawl page's
server-sent events and ``/metrics``, exactly as ``feed.CrawlFeed`` serves a local crawl; and
pause, resume, stop and added seeds from the page -> the crawl's control state and queues in
Redis (what ``gossamer ctl`` does).

The workers are merged as the ``--workers`` fleet merges its processes
(``monitor/status.merge_statuses``); the queue and the hosts come from the shared schedule,
each worker's heartbeat age from Redis's clock. The crawl "ends" when it is stopped or every
worker has said its last word. Redis unreachable or no such crawl: the page says "not
running", and the next browser connection asks again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from redis.asyncio import Redis

from gossamer.distributed import control
from gossamer.distributed.errors import REDIS_FAULTS, SharedFrontierError
from gossamer.distributed.frontier import LEASE_TTL
from gossamer.distributed.keys import crawl_prefix
from gossamer.distributed.seeding import add_seed_list
from gossamer.engine.steering import MAX_SEEDS_TEXT, TICK
from gossamer.monitor.series import Timeline
from gossamer.monitor.status import merge_statuses, merge_totals
from gossamer.seeds import parse_seeds
from gossamer.web.feed import NOTHING, Versioned

__all__ = ["RedisFeed"]

log = logging.getLogger(__name__)

_COMMANDS = {"pause": "paused", "resume": "running", "stop": "stopped"}
_FAULTS: tuple[type[Exception], ...] = (*REDIS_FAULTS, SharedFrontierError)
_READ_FAULTS: tuple[type[Exception], ...] = (*_FAULTS, OSError)


class RedisFeed(Versioned):
    """Follows the shared crawl ``name``; the same interface as ``feed.CrawlFeed``."""

    def __init__(self, redis: Redis, name: str, *, ttl: float = LEASE_TTL) -> None:
        """``ttl``: the workers' lease TTL, past which a silent worker is shown as gone."""
        super().__init__()
        self._redis = redis
        self._name = name
        self._ttl = ttl
        self._prefix = crawl_prefix(name)
        self.timeline = Timeline()
        self._started: float | None = None

    async def refresh(self) -> None:
        """Follow the crawl, if Redis has it and it is not followed yet."""
        if self.live or self.closed:
            return
        status = await self._read()
        await self._set(status)
        if status.get("source") == "live" and status.get("state") != "ended":
            self._task = asyncio.create_task(self._follow())

    async def command(self, command: dict[str, Any]) -> dict[str, Any]:
        cmd = command.get("cmd")
        try:
            if cmd in _COMMANDS:
                await control.set_state(self._redis, self._name, _COMMANDS[cmd])
                reply: dict[str, Any] = {"ok": True, "state": _COMMANDS[cmd]}
                if cmd == "resume":
                    shared = await control.status(self._redis, self._name, ttl=self._ttl)
                    if not shared.alive:
                        reply["warning"] = (
                            "no worker is alive to crawl it: start one with gossamer worker "
                            f"--frontier URL --name {self._name} --out DIR"
                        )
                return reply
            if cmd == "add-seeds":
                return await self._add_seeds(command.get("text"))
        except _FAULTS as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": False, "error": f"unknown command {cmd!r}"}

    async def close(self) -> None:
        await self._stop_following()
        await self._redis.aclose()

    async def _add_seeds(self, text: object) -> dict[str, Any]:
        if not isinstance(text, str) or len(text) > MAX_SEEDS_TEXT:
            return {"ok": False, "error": f"seeds must be text of at most {MAX_SEEDS_TEXT}"}
        seeds = parse_seeds(text)
        new = await add_seed_list(self._redis, self._name, seeds)
        urls = [seed.urls[0] for seed in seeds.seeds]
        problems = [f"line {p.line}: {p.reason}: {p.text}" for p in seeds.problems]
        return {"ok": True, "queued": urls, "known": len(urls) - new, "problems": problems}

    async def _follow(self) -> None:
        """Read the crawl once a tick until it ends (or the feed closes)."""
        while not self.closed:
            await asyncio.sleep(TICK)
            status = await self._read()
            await self._set(status)
            if status.get("state") in ("ended", "not running"):
                return

    async def _read(self) -> dict[str, Any]:
        try:
            shared = await control.status(self._redis, self._name, ttl=self._ttl)
        except _READ_FAULTS as exc:
            log.info("no shared crawl to follow: %s", exc)
            return dict(NOTHING)
        return self._merged(shared, dict(shared.parts or {}))

    def _merged(
        self, shared: control.CrawlStatus, parts: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """One status from one snapshot of Redis: the workers' own statuses for their
        counters, the leases and heartbeats for what each is doing now, and every total that
        a row shows the sum of its rows."""
        said = {w.worker: w.state for w in shared.workers}
        ended = any(s == control.ENDED for s in said.values()) and all(
            s != control.WORKING for s in said.values()
        )
        state = {"running": "running", "paused": "paused", "stopped": "stopping"}[shared.state]
        if ended or (shared.state == "stopped" and not shared.leased_hosts):
            state = "ended"
        if self._started is None:
            self._started = time.time() - max(
                (float(p["totals"].get("duration_seconds", 0.0)) for p in parts.values()),
                default=0.0,
            )
        elapsed = time.time() - self._started
        if parts:
            totals = merge_totals([p["totals"] for p in parts.values()], elapsed)
            self.timeline.sample(
                elapsed,
                (totals["pages"], totals["error_total"], totals["requests"], totals["bytes"]),
            )
        first = next(iter(parts.values()), {})
        targets = first.get("targets", {})
        status = merge_statuses(
            dict(enumerate(parts.values())),
            state=state,
            reason="stopped" if shared.state == "stopped" else "",
            elapsed=elapsed,
            timeline=self.timeline,
            targets=(targets.get("pages"), targets.get("seconds")),
        )
        rows = [_row(figures, parts.get(figures.worker), shared.now) for figures in shared.workers]
        status["workers"] = rows
        status["in_flight"] = sum(row["in_flight"] for row in rows)
        status["concurrency"] = sum(
            int(parts.get(w.worker, {}).get("concurrency") or 0)
            for w in shared.workers
            if w.state == control.WORKING
        )
        status["totals"]["domains"] = shared.domains  # a host visited by two workers is one
        status["queue"] = shared.queued_urls
        status["hosts"] = status["hosts"] | {
            "active": shared.queued_hosts + shared.leased_hosts + shared.takeover_hosts,
            "visiting": shared.leased_hosts,
            "waiting": shared.queued_hosts + shared.takeover_hosts,
            "takeover": shared.takeover_hosts,
            "known": shared.known_hosts,
        }
        return status


def _row(figures: control.WorkerFigures, part: dict[str, Any] | None, now: float) -> dict[str, Any]:
    """A worker's row: its counters as it last said them (its status's one row), what it
    holds now from the leases, and ``gone`` when its heartbeat is older than the lease TTL."""
    rows = (part or {}).get("workers") or [{}]
    said: dict[str, Any] = {"pages": figures.pages, "errors": figures.errors} | rows[0]
    if figures.state == control.WORKING:
        state = str(said.get("state", "starting"))
    else:
        state = figures.state
    return said | {
        "name": figures.worker,
        "state": state,
        "leased_hosts": figures.hosts,
        "in_flight": figures.hosts,  # one fetch under way per lease
        "takeover_hosts": figures.takeover,
        "heartbeat": time.time() - (figures.age(now) or 0.0),
    }
