"""The store side of a crawler process outside the async engine: the threaded engine's and a
distributed worker's.

Data flow: fetch result -> **recording** -> WARC files and CDXJ (``crawling.exchange``, inside
each URL's fault boundary),
``crawl.db`` and the statistics (``crawling.recorder``), and the page's links -> admission ->
the caller's queue (the threaded engine's outbox, a distributed worker's link buffer). The
politeness side stays with the caller: robots.txt answers become rules here, and the caller
decides what a host waits.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from gossamer.config import CrawlConfig
from gossamer.crawling.admission import Admitter, Queue
from gossamer.crawling.exchange import store_page, store_resource, store_robots
from gossamer.crawling.limits import page_room
from gossamer.crawling.recorder import Recorder, note_robots
from gossamer.errors import StoreError
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier import Job
from gossamer.frontier.backoff import Backoff, Outcome
from gossamer.frontier.hosts import HostState
from gossamer.robots import RobotsRules, lasting, lasting_answer
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from gossamer.urls import origin_of

if TYPE_CHECKING:
    from gossamer.plugins.hooks import Verdict

__all__ = ["Recording", "robots_rules_of"]

log = logging.getLogger(__name__)


class Recording:
    """The store side of one crawler process: WARC, CDXJ, ``crawl.db`` and the statistics.

    Not thread-safe: the threaded engine calls it under its store lock, a distributed worker
    from its one event loop."""

    def __init__(self, config: CrawlConfig, stats: CrawlStats, db: MetadataDB, queue: Queue):
        out = config.out
        self.stats = stats
        self.db = db
        self.warc = WarcStore(out / "warc", prefix="gossamer", max_file_bytes=config.warc_max_bytes)
        self.cdxj = CdxjWriter(out / "index.cdxj")
        sites = SiteRules.of(config)
        # url -> the product token its site's robots.txt is matched against
        self.product = sites.product_for
        self.admitter = Admitter(config.scope, frontier=queue, stats=stats, db=db, sites=sites)
        self.recorder = Recorder(
            admitter=self.admitter,
            stats=stats,
            db=db,
            product=self.product,
            respect_nofollow=config.politeness.respect_nofollow,
            max_redirects=config.fetch.max_redirects,
            sitemaps=config.scope.sitemaps,
            recrawl=config.recrawl,
            max_retries=config.politeness.max_retries,
        )
        self.backoff = Backoff(
            max_retries=config.politeness.max_retries,
            max_backoff=config.politeness.max_backoff,
        )
        # A host's politeness state, for the backoff policy of ``page`` (set by the engine).
        self.host_state: Callable[[str], HostState] | None = None
        self.target = config.max_pages
        self.in_flight_pages = 0
        # Origins whose robots.txt was unavailable (not this machine's fault): the threaded
        # engine crawls none of their pages in this run and lists them as deferred.
        self.unavailable: set[str] = set()

    def page(self, job: Job, result: FetchResult) -> Outcome:
        if result.error in LOCAL_FAULTS:
            self.stats.record_error(result.error or "local_fault")
            return self.backoff.after_local_fault(job.retries)
        self.store(job, result)
        assert self.host_state is not None
        return self.backoff.after_response(
            result, self.host_state(job.host), job.retries, time.time()
        )

    def store(self, job: Job, result: FetchResult, verdict: Verdict | None = None) -> bool:
        """Archive and record a fetched page (its links go to the admitter); True if stored.
        ``verdict``: the crawl's hooks' answer for it, worked out ahead (:meth:`plugin_work`)."""
        if result.status:  # the report's response times and HTML/PDF counts, as the async engine
            self.stats.record_response(job.host, result.elapsed)
        stored = store_page(
            self.recorder,
            self.warc,
            self.cdxj,
            job,
            result,
            stats=self.stats,
            db=self.db,
            verdict=verdict,
        )
        if stored:
            self.stats.record_stored(result.content_type)
        return stored

    def resource(self, job: Job, result: FetchResult) -> None:
        """Archive and record a request a rendered page made (``gossamer.render``)."""
        if result.status:
            self.stats.record_response(job.host, result.elapsed)
        store_resource(
            self.recorder, self.warc, self.cdxj, job, result, stats=self.stats, db=self.db
        )

    def plugin_work(self, job: Job, result: FetchResult) -> Callable[[], Verdict] | None:
        """The hooks' work on this page, to run off the event loop (``Recorder.plugin_work``)."""
        return self.recorder.plugin_work(job, result)

    def robots(self, job: Job, hops: list[FetchResult]) -> tuple[RobotsRules, FetchResult]:
        """The rules a robots.txt fetch leaves, and its final hop as judged (marked
        ``internal_error`` if handling a hop failed)."""
        for hop in hops:
            if hop.status:
                self.stats.record_response(job.host, hop.elapsed)
        answer, final = store_robots(
            self.recorder,
            self.warc,
            self.cdxj,
            job,
            hops,
            stats=self.stats,
            db=self.db,
            skip=LOCAL_FAULTS,
        )
        rules = robots_rules_of(final, answer.rules if answer else None, self.product(job.url))
        if answer is not None:
            note_robots(self.stats, job.host, answer)
        else:
            status = final.error or final.status
            self.stats.host(job.host).robots_status = f"disallow-all (robots.txt {status})"
            if final.error not in LOCAL_FAULTS and not lasting(final.status, final.error):
                self.unavailable.add(origin_of(job.url))
        return rules, final

    def reserve_page(self) -> bool | None:
        """Room for one more page fetch under the target: True; None once it is reached;
        False while fetches in flight may still reach it (they can end in a 404)."""
        room = page_room(self.stats.pages, self.in_flight_pages, self.target)
        if room:
            self.in_flight_pages += 1
        return room

    def release_page(self) -> None:
        self.in_flight_pages -= 1

    def skipped_robots(self) -> None:
        self.stats.skipped_robots += 1

    def close(self) -> None:
        for step in (self.warc.close, self.cdxj.close, self.db.flush):
            try:
                step()
            except StoreError as exc:
                log.error("store fault while closing: %s", exc)


def robots_rules_of(
    final: FetchResult, answer_rules: RobotsRules | None, product: str
) -> RobotsRules:
    """The rules one robots.txt fetch leaves for its origin in this run (RFC 9309 2.3.1):
    a 2xx's rules, a 4xx's allow-all, and for an unavailable file (5xx, 429, unreachable)
    disallow-all, which the threaded engine keeps to the end of the run instead of retrying."""
    if not lasting(final.status, final.error) or final.error in LOCAL_FAULTS:
        return RobotsRules.disallow_all()
    if answer_rules is not None:
        return answer_rules
    return lasting_answer(final.status, final.content, product).rules
