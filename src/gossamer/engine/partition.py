"""Splitting one crawl across worker processes by host, as seed 002's dispatcher does.

Every host belongs to exactly one worker (a hash of its name), so robots.txt, politeness and
the seen-set stay local to that worker. A link to a host owned elsewhere is buffered and sent
up to the coordinator, which forwards it to the owner; because every cross-worker batch passes
through the coordinator, it can tell exactly when the whole crawl has run dry (every worker
idle and every forwarded batch processed), with no guessing about messages in flight.

Messages, all plain tuples (they cross process boundaries):

    worker -> coordinator   ("urls", dest, [(url, depth, referrer), ...])
                            ("idle", worker, batches_processed, grants_seen, pages_given_back)
                            ("ask", worker, grants_seen, full)
                            ("done", worker, stats_snapshot)
    coordinator -> worker   ("urls", [(url, depth, referrer), ...])
                            ("seeds", [(url, other forms...), ...])  added live
                            ("grant", pages)
                            ("stop", reason)

With a page target, a worker stores only the pages it has been granted (``engine/budget.py``):
it asks for more before it runs out, and gives back what it holds when it runs dry.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from typing import Any

from gossamer.crawling.limits import page_room
from gossamer.urls import host_of

Discovery = tuple[str, int, str | None]  # url, depth, referrer
FLUSH_AT = 256  # URLs buffered for one destination before a batch is sent


def owner(url: str, workers: int) -> int:
    """The worker that owns ``url``: a stable hash of its host name, the politeness key, so
    every scheme and port of one host (and the https and http forms of a seed) share a worker."""
    return host_owner(host_of(url), workers)


@functools.lru_cache(maxsize=65_536)
def host_owner(host: str, workers: int) -> int:
    """The worker that owns host name ``host``."""
    return int.from_bytes(hashlib.blake2b(host.encode(), digest_size=4).digest(), "big") % workers


@dataclass(slots=True)
class Part:
    """One worker's place in a partitioned crawl, and its channels to the coordinator."""

    index: int
    count: int
    up: Queue[Any]
    inbox: Queue[Any]
    processed: int = 0
    allowance: int | None = None  # pages this worker may store in this run; None: no target
    base: int = 0  # pages it had stored before this run (a resume)
    grants: int = 0  # grants received (the first comes with the worker's arguments)
    _last_grant: int = 0
    _asked: bool = False
    _said_full: bool = False
    _outgoing: dict[int, list[Discovery]] = field(default_factory=dict)
    _idle_reported: bool = False

    def __post_init__(self) -> None:
        if self.allowance is not None:
            self.grants = 1
            self._last_grant = self.allowance

    def limit(self) -> int | None:
        """The pages this worker may have stored in all, counting those of earlier runs."""
        return None if self.allowance is None else self.base + self.allowance

    def want(self, stored: int, dispatched: int) -> bool:
        """Ask for more pages when few are left to dispatch; whether any may be dispatched."""
        limit = self.limit()
        if limit is None:
            return True
        headroom = limit - stored - dispatched
        full = page_room(stored, dispatched, limit) is None and dispatched == 0
        if (headroom <= self._last_grant // 2 and not self._asked) or (
            full and not self._said_full
        ):
            self.up.put(("ask", self.index, self.grants, full))
            self._asked, self._said_full = True, full
        return bool(page_room(stored, dispatched, limit))

    def granted(self, pages: int) -> None:
        """The coordinator granted ``pages`` more."""
        self.allowance = (self.allowance or 0) + pages
        self.grants += 1
        self._last_grant = pages
        self._asked = self._said_full = False
        self._idle_reported = False  # idle again, it gives them back

    def mine(self, url: str) -> bool:
        return owner(url, self.count) == self.index

    def mine_host(self, host: str) -> bool:
        return host_owner(host, self.count) == self.index

    def forward(self, url: str, depth: int, referrer: str | None) -> None:
        dest = owner(url, self.count)
        batch = self._outgoing.setdefault(dest, [])
        batch.append((url, depth, referrer))
        if len(batch) >= FLUSH_AT:
            self.up.put(("urls", dest, batch))
            self._outgoing[dest] = []
        self._idle_reported = False

    def flush(self) -> None:
        for dest, batch in self._outgoing.items():
            if batch:
                self.up.put(("urls", dest, batch))
        self._outgoing.clear()

    def report_idle(self, stored: int) -> None:
        """Tell the coordinator this worker has nothing left (once per idle spell), and give
        back the pages it holds and has not used (``stored``: its pages so far)."""
        if self._idle_reported:
            return
        self.flush()
        unused = 0
        limit = self.limit()
        if limit is not None and self.allowance is not None:
            unused = max(0, limit - stored)
            self.allowance -= unused
            self._asked = self._said_full = False
        self.up.put(("idle", self.index, self.processed, self.grants, unused))
        self._idle_reported = True

    def busy(self) -> None:
        self._idle_reported = False

    def listen(
        self,
        loop: asyncio.AbstractEventLoop,
        on_urls: Callable[[list[Discovery]], None],
        on_grant: Callable[[int], None],
        on_stop: Callable[[str], None],
        on_seeds: Callable[[list[tuple[str, ...]]], None],
    ) -> threading.Thread:
        """Read the inbox on a thread and hand each message to the event loop."""

        def run() -> None:
            while True:
                message = self.inbox.get()
                if message[0] == "close":  # this worker's own sentinel: nothing to tell
                    return
                if message[0] == "urls":
                    loop.call_soon_threadsafe(on_urls, message[1])
                elif message[0] == "seeds":
                    loop.call_soon_threadsafe(on_seeds, message[1])
                elif message[0] == "grant":
                    loop.call_soon_threadsafe(on_grant, message[1])
                else:
                    loop.call_soon_threadsafe(on_stop, message[1])
                    return

        thread = threading.Thread(target=run, name=f"inbox-{self.index}")
        thread.start()
        return thread

    def close_inbox(self, thread: threading.Thread) -> None:
        """End the inbox reader and wait for it: if the coordinator's "stop" has not come
        (the crawl ended on a fault of its own), this worker's own sentinel ends it."""
        if thread.is_alive():
            self.inbox.put(("close", ""))
        thread.join()
