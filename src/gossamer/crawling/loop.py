"""The crawl loop, the same in every way of running a crawl.

Data flow: **seam.lease** -> fetch (robots.txt or page, inside the URL's fault boundary:
``crawling/exchange.py``) -> the store side (WARC, CDXJ, ``crawl.db``, statistics, links to
admission) -> which answer it was and whether the URL is tried again -> **seam.page_done /
robots_done**. One process runs ``concurrency`` of these loops on its seam
(``engine/seam.py``), so does each ``--workers`` process on its share, and each worker of a
shared crawl on Redis (``distributed/seam.py``). The study's threaded engine keeps its own
loops (its six frontiers are the point of the study) but the same exchange, politeness rule
and verdict.

Which answer a page fetch was and whether its URL is asked again are ``frontier/backoff``'s
(``answer_of``, ``retried``: 429 and 503 after Retry-After, a fault of this machine after a
short pause that is not held against the host, up to ``max_retries`` times); what the host's
timing becomes is the politeness rule's, applied by each seam.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol, TypeVar

from gossamer.crawling.exchange import INTERNAL_ERROR, fetched, fetched_robots
from gossamer.crawling.seam import PageDone, Seam, Ticket
from gossamer.errors import StoreError
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.fetch.fetcher import Fetcher
from gossamer.frontier import Job
from gossamer.frontier.backoff import answer_of, retried
from gossamer.frontier.politeness import Answer, Outcome
from gossamer.robots import RobotsRules
from gossamer.stats import CrawlStats

if TYPE_CHECKING:
    from gossamer.plugins.hooks import Verdict
    from gossamer.render.renderer import Renderer

__all__ = ["CrawlLoop", "HooksThread", "Store", "page_done"]

log = logging.getLogger(__name__)

_LOCAL = Outcome(Answer.LOCAL)
T = TypeVar("T")


class Store(Protocol):
    """The store side of a crawler process (``engine/pipeline.py``, ``crawling/recording.py``)."""

    def store(self, job: Job, result: FetchResult, verdict: Verdict | None = None) -> bool:
        """Archive and record a page exchange (its links to admission); True if stored."""
        ...

    def plugin_work(self, job: Job, result: FetchResult) -> Callable[[], Verdict] | None:
        """The crawl's hooks' work on a page, to be run off the event loop; None: none."""
        ...

    def robots(self, job: Job, hops: list[FetchResult]) -> tuple[RobotsRules, FetchResult]:
        """Archive and record a robots.txt fetch: the rules it leaves, and its final hop."""
        ...

    def resource(self, job: Job, result: FetchResult) -> None:
        """Archive and record a request a rendered page made (``gossamer.render``)."""
        ...


def page_done(job: Job, result: FetchResult, stored: bool, max_retries: int) -> PageDone:
    """Which answer a page fetch was, and whether its URL is asked again."""
    answer = _LOCAL if result.error in LOCAL_FAULTS else answer_of(result, time.time())
    return PageDone(answer, retried(answer, job.retries, max_retries), stored)


class CrawlLoop:
    """lease -> fetch -> record -> complete, until the seam has no more work for it."""

    def __init__(
        self,
        seam: Seam,
        store: Store,
        stats: CrawlStats,
        *,
        max_retries: int,
        is_sitemap: Callable[[Job], bool],
        on_fault: Callable[[StoreError], None],
        renderer: Renderer | None = None,
    ) -> None:
        self._seam = seam
        self._store = store
        self._stats = stats
        self._max_retries = max_retries
        self._is_sitemap = is_sitemap
        self._on_fault = on_fault
        self._hooks_thread = HooksThread()
        self._renderer = renderer

    def close(self) -> None:
        """End the plugins' thread (after every ``run`` of this loop has returned)."""
        self._hooks_thread.close()

    async def aclose(self) -> None:
        """End the browser, if pages were rendered, and the plugins' thread."""
        renderer, self._renderer = self._renderer, None
        if renderer is not None:
            if renderer.refused:
                why = ", ".join(f"{k}: {n}" for k, n in sorted(renderer.refused.items()))
                log.info("requests of rendered pages refused: %s", why)
            await renderer.close()
        self.close()

    async def run(self, fetcher: Fetcher) -> None:
        seam = self._seam
        while (ticket := await seam.lease()) is not None:
            try:
                if ticket.job.robots:
                    await self._robots(ticket, fetcher)
                else:
                    await self._page(ticket, fetcher)
            except StoreError as exc:  # a full disk or a lost folder: the crawl's end
                await seam.release(ticket)
                self._on_fault(exc)
            except Exception:  # past the exchange's own boundary: still one URL's outcome
                log.error("internal error handling %s", ticket.job.url, exc_info=True)
                self._stats.record_error(INTERNAL_ERROR, ticket.job.host)
                await seam.release(ticket)

    async def _robots(self, ticket: Ticket, fetcher: Fetcher) -> None:
        job, seam = ticket.job, self._seam
        async with seam.fetching():
            fetch = fetcher.fetch_robots(job.url, known=seam.knows_robots)
            hops = await fetched_robots(job.url, fetch)
        await self.robots_fetched(ticket, hops)

    async def robots_fetched(self, ticket: Ticket, hops: list[FetchResult]) -> None:
        """Record a robots.txt fetch and give its ticket back."""
        job, seam = ticket.job, self._seam
        rules, final = self._store.robots(job, hops)
        if final.error in LOCAL_FAULTS:  # this machine's fault: asked again, never given up
            self._stats.record_error(final.error)
        await seam.robots_done(ticket, rules, final)

    async def _page(self, ticket: Ticket, fetcher: Fetcher) -> None:
        job = ticket.job
        async with self._seam.fetching():
            fetch = fetcher.fetch(
                job.url,
                any_type=self._is_sitemap(job),
                conditions=job.revisit.conditions if job.revisit else (),
            )
            result = await fetched(job.url, fetch)
            renderer = self._renderer
            if renderer is not None and not self._is_sitemap(job) and renderer.wanted(job, result):
                # Still holding the host's slot: the page's own requests are this host's.
                result = await renderer.render(
                    job,
                    result,
                    rules=self._seam.rules_for(job.url),
                    fetcher=fetcher,
                    keep=lambda sub: self._store.resource(_resource_job(job, sub), sub),
                )
        await self.page_fetched(ticket, result)

    async def page_fetched(self, ticket: Ticket, result: FetchResult) -> None:
        """Record a page fetch and give its ticket back."""
        job = ticket.job
        if result.error in LOCAL_FAULTS:
            # This machine ran out of file handles, memory or ports: not the host's doing.
            # The URL gets no row (so a resume retries it) and goes back in the queue.
            self._stats.record_error(result.error or "local_fault")
            stored = False
        else:
            work = self._store.plugin_work(job, result)
            # Plugins run on a thread of their own, one page at a time, while the event loop
            # goes on; their answer is applied when the page is recorded, on the loop.
            verdict = None if work is None else await self._hooks_thread.run(work)
            stored = self._store.store(job, result, verdict)
        await self._seam.page_done(ticket, page_done(job, result, stored, self._max_retries))


def _resource_job(page: Job, result: FetchResult) -> Job:
    """How a rendered page's request is recorded: its page's host and depth, the page as
    its referrer."""
    return Job(url=result.url, host=page.host, depth=page.depth, referrer=page.url)


class HooksThread:
    """One thread for the crawl's plugin hooks, started with the first page that has any:
    hooks never hold up the event loop, and a plugin's code never runs twice at once."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    async def run(self, work: Callable[[], T]) -> T:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="gossamer-hooks")
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
