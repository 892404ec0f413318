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
from redis.exceptions import RedisError

from gossamer.distributed import control
from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.livestatus import read_statuses
from gossamer.distributed.seeding import add_seed_list
from gossamer.engine.steering import MAX_SEEDS_TEXT, TICK
from gossamer.monitor.series import Timeline
from gossamer.monitor.status import merge_statuses, merge_totals
from gossamer.seeds import parse_seeds
from gossamer.web.feed import NOTHING, Versioned

__all__ = ["RedisFeed"]

log = logging.getLogger(__name__)

_COMMANDS = {"pause": "paused", "resume": "running", "stop": "stopped"}


class RedisFeed(Versioned):
    """Follows the shared crawl ``name``; the same interface as ``feed.CrawlFeed``."""

    def __init__(self, redis: Redis, name: str) -> None:
        super().__init__()
        self._redis = redis
        self._name = name
        self._prefix = f"gossamer:{name}:"
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
                return {"ok": True, "state": _COMMANDS[cmd]}
            if cmd == "add-seeds":
                return await self._add_seeds(command.get("text"))
        except (RedisError, SharedFrontierError) as exc:
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
            shared = await control.status(self._redis, self._name)
            parts = await read_statuses(self._redis, self._prefix)
        except (RedisError, SharedFrontierError, OSError) as exc:
            log.info("no shared crawl to follow: %s", exc)
            return dict(NOTHING)
        return self._merged(shared, parts)

    def _merged(
        self, shared: control.CrawlStatus, parts: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        ended = bool(parts) and all(p.get("state") == "ended" for p in parts.values())
        state = {"running": "running", "paused": "paused", "stopped": "stopping"}[shared.state]
        if ended or (shared.state == "stopped" and not shared.leased_hosts):
            state = "ended"
        if self._started is None:
            self._started = time.time() - max(
                (float(p["totals"].get("duration_seconds", 0.0)) for p in parts.values()),
                default=0.0,
            )
        elapsed = time.time() - self._started
        by_index = dict(enumerate(parts.values()))
        if parts:
            totals = merge_totals([p["totals"] for p in parts.values()], elapsed)
            self.timeline.sample(
                elapsed,
                (totals["pages"], totals["error_total"], totals["requests"], totals["bytes"]),
            )
        first = next(iter(parts.values()), {})
        targets = first.get("targets", {})
        status = merge_statuses(
            by_index,
            state=state,
            reason="stopped" if shared.state == "stopped" else "",
            elapsed=elapsed,
            timeline=self.timeline,
            targets=(targets.get("pages"), targets.get("seconds")),
        )
        beats = {figures.worker: figures.beat for figures in shared.workers}
        for row, name in zip(status["workers"], parts, strict=False):
            age = shared.now - beats.get(name, shared.now)
            row |= {"name": name, "heartbeat": time.time() - age}
        status["queue"] = shared.queued_urls
        status["hosts"] = status["hosts"] | {
            "active": shared.queued_hosts + shared.leased_hosts,
            "visiting": shared.leased_hosts,
            "waiting": shared.queued_hosts,
        }
        return status
