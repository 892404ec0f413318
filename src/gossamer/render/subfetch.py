"""A rendered page's own requests, fetched by the crawl under the crawl's rules.

Data flow: Chromium asks for a sub-resource (``session``'s route) -> **subfetch** (which are
allowed; the host's delay between them) -> ``Fetcher.fetch`` (SSRF guard, size caps,
timeouts, as every fetch) -> archived and recorded as a ``resource`` exchange -> the answer
goes back to the browser. Refused requests never leave the machine and are counted by why:

* ``blocked``: a kind the site's ``block`` names (images, media, fonts by default);
* ``offsite``: another origin than the page's. A host's politeness slot belongs to the
  frontier that owns the host (one process, one ``--workers`` share, one Redis lease), and a
  page holds only its own host's slot, so another host's resources cannot be asked for
  politely from here;
* ``robots``: the origin's robots.txt disallows it (or its rules are not known here);
* ``over_limit``: past ``[render] max_requests`` for the page;
* ``method``: not a GET (a crawler asks, it never posts).

Requests to the page's origin are made one at a time, ``delay`` apart, starting ``delay``
after the page's own fetch ended: the page's ticket holds the host's slot all along, so the
frontier's next request to the host comes ``delay`` after the last of them. A resource asked
again (a script every page loads) is answered from this process's cache, not fetched again.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from gossamer.crawling.exchange import fetched
from gossamer.fetch import FetchResult
from gossamer.fetch.fetcher import Fetcher
from gossamer.robots import RobotsRules
from gossamer.urls import origin_of, path_query_of

__all__ = ["PageLimits", "ResourceCache", "SubFetches"]

_CACHE_BYTES = 32 * 1024 * 1024


class ResourceCache:
    """Answers of sub-resources this process fetched, by URL, least recently used out first
    past a byte budget (only whole 2xx answers are kept)."""

    def __init__(self, budget: int = _CACHE_BYTES) -> None:
        self._items: OrderedDict[str, FetchResult] = OrderedDict()
        self._budget = budget
        self._size = 0

    def get(self, url: str) -> FetchResult | None:
        found = self._items.get(url)
        if found is not None:
            self._items.move_to_end(url)
        return found

    def put(self, result: FetchResult) -> None:
        if not 200 <= result.status < 300 or result.error or result.truncated:
            return
        size = len(result.content)
        if size > self._budget // 8 or result.url in self._items:
            return
        self._items[result.url] = result
        self._size += size
        while self._size > self._budget:
            _, old = self._items.popitem(last=False)
            self._size -= len(old.content)


@dataclass(frozen=True, slots=True)
class PageLimits:
    delay: float  # seconds between two requests to the page's host
    max_requests: int
    blocked: frozenset[str]


class SubFetches:
    """The requests of one rendered page."""

    def __init__(
        self,
        page: FetchResult,
        rules: RobotsRules | None,
        limits: PageLimits,
        *,
        fetcher: Fetcher,
        keep: Callable[[FetchResult], None],
        cache: ResourceCache,
        refused: Counter[str],
    ) -> None:
        self._origin = origin_of(page.url)
        self._rules = rules
        self._limits = limits
        self._fetcher = fetcher
        self._keep = keep
        self._cache = cache
        self._refused = refused
        self._lock = asyncio.Lock()
        # wall clock, as FetchResult.started_at: no request before the page's delay is over
        self._next = page.started_at + page.elapsed + limits.delay
        self.fetched = 0
        self._tasks: set[asyncio.Task[object]] = set()
        self._closed = False

    def refusal(self, url: str, kind: str, method: str) -> str | None:
        """Why the browser's request is not fetched, or None."""
        if method != "GET":
            return "method"
        if kind in self._limits.blocked:
            return "blocked"
        if not url.startswith(("http://", "https://")) or origin_of(url) != self._origin:
            return "offsite"
        rules = self._rules
        if rules is None or not rules.is_allowed(path_query_of(url)):
            return "robots"
        return None

    async def fetch(self, url: str, kind: str, method: str = "GET") -> FetchResult | None:
        """The answer to give the browser; None: refused (counted), the request fails.
        After :meth:`close`, every request is refused."""
        task = asyncio.current_task()
        if self._closed or task is None:
            return None
        self._tasks.add(task)
        try:
            return await self._fetch(url, kind, method)
        finally:
            self._tasks.discard(task)

    async def close(self) -> None:
        """End the page's requests still under way (a page that never settled): the host's
        slot goes back to the frontier next, so none of them may outlive the page."""
        self._closed = True
        tasks = [task for task in self._tasks if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _fetch(self, url: str, kind: str, method: str) -> FetchResult | None:
        why = self.refusal(url, kind, method)
        if why is not None:
            self._refused[why] += 1
            return None
        cached = self._cache.get(url)
        if cached is not None:
            return cached
        async with self._lock:  # one request to the host at a time, delay apart
            cached = self._cache.get(url)
            if cached is not None:
                return cached
            if self.fetched >= self._limits.max_requests:
                self._refused["over_limit"] += 1
                return None
            wait = self._next - time.time()
            if wait > 0:
                await asyncio.sleep(wait)  # the host's delay, as the frontier would wait
            self.fetched += 1
            try:
                result = await fetched(url, self._fetcher.fetch(url, any_type=True))
            finally:
                self._next = time.time() + self._limits.delay
            self._keep(result)
            self._cache.put(result)
            return result
