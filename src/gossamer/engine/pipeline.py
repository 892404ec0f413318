"""The store side of the in-process engine: what a live fetch result leaves behind.

Data flow: the crawl loop (``crawling/loop.py``) -> **pipeline** -> store (WARC, CDXJ), then
the recorder (statistics, ``crawl.db``, links to admission, which queues them in the frontier
or sends them to the worker owning their host). What the frontier learns of the host (timing,
retries, robots.txt rules) goes back through the seam (``engine/seam.py``). Each concern has
its own module: admission (scope and traps), the recorder (also what replay uses, with no
archive), ``gossamer.robots.status`` (what a robots.txt answer implies).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from gossamer.config import CrawlConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.exchange import store_page, store_resource, store_robots
from gossamer.crawling.recorder import Recorder, note_robots
from gossamer.engine.partition import Part
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier import Frontier, Job
from gossamer.robots import RobotsRules, lasting, lasting_answer
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from gossamer.urls import canonical_link, origin_of

if TYPE_CHECKING:
    from gossamer.plugins.hooks import Verdict

__all__ = ["Pipeline"]

log = logging.getLogger(__name__)


class Pipeline:
    """Archives and records every live exchange; writes to the stores the crawler owns."""

    def __init__(
        self,
        config: CrawlConfig,
        *,
        frontier: Frontier,
        stats: CrawlStats,
        warc: WarcStore,
        cdxj: CdxjWriter,
        db: MetadataDB,
        part: Part | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        politeness = config.politeness
        self._frontier = frontier
        self._stats = stats
        self._warc = warc
        self._cdxj = cdxj
        self._db = db
        sites = SiteRules.of(config)
        self._product = sites.product_for  # per site: a [[site]] table may name its own agent
        self.admitter = Admitter(
            config.scope, frontier=frontier, stats=stats, db=db, part=part, sites=sites
        )
        # Seeds and the URLs other workers found enter the way links do.
        self.admit = self.admitter.admit
        self._recorder = Recorder(
            admitter=self.admitter,
            stats=stats,
            db=db,
            product=self._product,
            respect_nofollow=politeness.respect_nofollow,
            max_redirects=config.fetch.max_redirects,
            sitemaps=config.scope.sitemaps,
            recrawl=config.recrawl,
            max_retries=config.politeness.max_retries,
            clock=clock,
        )

    # -- pages ----------------------------------------------------------------------------
    def store(self, job: Job, result: FetchResult, verdict: Verdict | None = None) -> bool:
        """Archive and record a page exchange; True if it was a stored page. ``verdict``: the
        crawl's hooks' answer for it, worked out ahead by :meth:`plugin_work`."""
        if result.status:
            self._stats.record_response(job.host, result.elapsed)
        stored = store_page(
            self._recorder,
            self._warc,
            self._cdxj,
            job,
            result,
            stats=self._stats,
            db=self._db,
            verdict=verdict,
        )
        if stored:
            self._stats.record_stored(result.content_type)
        return stored

    def resource(self, job: Job, result: FetchResult) -> None:
        """Archive and record a request a rendered page made (``gossamer.render``)."""
        if result.status:
            self._stats.record_response(job.host, result.elapsed)
        store_resource(
            self._recorder, self._warc, self._cdxj, job, result, stats=self._stats, db=self._db
        )

    def plugin_work(self, job: Job, result: FetchResult) -> Callable[[], Verdict] | None:
        """The hooks' work on this page, to run off the event loop (``Recorder.plugin_work``)."""
        return self._recorder.plugin_work(job, result)

    def is_sitemap(self, job: Job) -> bool:
        """Whether a page job fetches a sitemap (whose body is read whatever its type)."""
        return self._recorder.purpose(job) == "sitemap"

    # -- robots.txt -----------------------------------------------------------------------
    def robots(self, job: Job, hops: list[FetchResult]) -> tuple[RobotsRules, FetchResult]:
        """Store every hop of a robots.txt fetch: the rules RFC 9309 implies, and the final
        hop (disallow-all for an unavailable robots.txt, which the seam asks again)."""
        for hop in hops:
            if hop.status:
                self._stats.record_response(job.host, hop.elapsed)
        answer, final = store_robots(
            self._recorder,
            self._warc,
            self._cdxj,
            job,
            hops,
            stats=self._stats,
            db=self._db,
            skip=LOCAL_FAULTS,
        )
        if final.error in LOCAL_FAULTS or not lasting(final.status, final.error):
            return RobotsRules.disallow_all(), final
        if final.is_redirect:
            known = self._known_target(final)
            if known is not None:  # a redirect to a robots.txt already read: its rules
                return known, final
        if answer is None:  # more hops than RFC 9309 asks us to follow
            answer = lasting_answer(final.status, final.content, self._product(job.url))
        note_robots(self._stats, job.host, answer)
        if final.is_redirect:  # more hops than RFC 9309 asks us to follow: allow all
            self._db.add_robots(origin_of(job.url), final.status, b"", final.started_at)
        return answer.rules, final

    def _known_target(self, final: FetchResult) -> RobotsRules | None:
        location = final.header("Location")
        target = canonical_link(location, final.url) if location else None
        return self._frontier.robots_rules(origin_of(target)) if target else None
