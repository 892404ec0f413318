"""What the dashboard tests share: a crawl of the test web on a thread, and a subscriber to
its control channel whose statuses arrive on a queue (so a test waits for a status, never
for time to pass)."""

from __future__ import annotations

import asyncio
import dataclasses
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gossamer.engine import Crawler, CrawlOutcome
from gossamer.engine.control import ControlServer
from gossamer.monitor.channel import ask, connect, decode, encode, socket_path
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, WebSpec

from .conftest import local_config

LIMIT = 60.0  # seconds any wait may take before the test fails
# Slow enough to be watched: three hosts of 300 pages, 50 ms between two requests to a host.
SLOW = WebSpec(
    seed=7,
    hosts=3,
    pages_per_host=300,
    seed_hosts=3,
    special_hosts=False,
    crawl_delay_hosts=False,
)
# Another server, whose fourth host no page of the first web links to: a seed added live.
ELSEWHERE = WebSpec(
    seed=8, hosts=4, pages_per_host=3, seed_hosts=1, special_hosts=False, crawl_delay_hosts=False
)
ADDED_HOST = "site-003.web.test"


def control_ready(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An event set once a control socket of this process listens (for a fixture)."""
    ready = threading.Event()
    real = ControlServer.__aenter__

    async def entered(self: ControlServer) -> ControlServer:
        server = await real(self)
        ready.set()
        return server

    monkeypatch.setattr(ControlServer, "__aenter__", entered)
    return ready


class ThreadedCrawl:
    """``Crawler.run`` on a thread of its own; ``join`` gives the outcome (or its fault)."""

    def __init__(self, site: ThreadedTestWeb, tmp: Path, **changes: object) -> None:
        seeds = tmp / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
        self.out = tmp / "out"
        config = local_config(seeds, self.out, concurrency=4, **changes)
        politeness = dataclasses.replace(config.politeness, delay=0.05)
        self.config = dataclasses.replace(config, politeness=politeness)
        self._crawler = Crawler(self.config, parse_seeds(seeds.read_text(encoding="utf-8")))
        self._result: list[CrawlOutcome | BaseException] = []
        self._thread = threading.Thread(target=self._run, name="test-crawl")

    def _run(self) -> None:
        try:
            self._result.append(asyncio.run(self._crawler.run()))
        except BaseException as exc:  # handed to the test's thread by join()
            self._result.append(exc)

    def start(self) -> ThreadedCrawl:
        self._thread.start()
        return self

    def join(self) -> CrawlOutcome:
        self._thread.join(LIMIT)
        assert not self._thread.is_alive(), "the crawl did not end"
        [result] = self._result
        if isinstance(result, BaseException):
            raise result
        return result


class Watcher:
    """A subscriber to the control socket at ``path``, on a thread; ``until`` waits for a
    status that passes a check."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.statuses: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.last: dict[str, Any] = {}
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)
        self._thread.start()

    async def _main(self) -> None:
        reader, writer = await connect(self.path)
        writer.write(encode({"cmd": "subscribe"}))
        try:
            while line := await reader.readline():
                message = decode(line)
                if isinstance(message.get("status"), dict):
                    self.statuses.put(message["status"])
        finally:
            writer.close()
            self.statuses.put(None)

    def until(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            status = self.statuses.get(timeout=LIMIT)
            assert status is not None, f"the channel closed first; last status {self.last}"
            self.last = status
            if check(status):
                return status

    def next(self, count: int) -> dict[str, Any]:
        """The ``count``-th status from now (``count`` seconds of crawl, at least)."""
        for _ in range(count):
            self.until(lambda _: True)
        return self.last

    def ended(self) -> dict[str, Any]:
        """The crawl's last status, once its channel has closed after it."""
        final = self.until(lambda s: s["state"] == "ended")
        assert self.statuses.get(timeout=LIMIT) is None
        self._thread.join(LIMIT)
        return final

    def command(self, **message: object) -> dict[str, Any]:
        return asyncio.run(ask(self.path, message))


def watch(out: Path, ready: threading.Event) -> Watcher:
    assert ready.wait(LIMIT), "no control socket"
    return Watcher(socket_path(out))


def requests_to(site: ThreadedTestWeb) -> int:
    return len(site.audit.records())


def hosts_of(status: dict[str, Any]) -> Iterator[str]:
    for row in status.get("busiest", []):
        yield str(row["host"])
