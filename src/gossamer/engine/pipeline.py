"""What happens to a live fetch result: archive it, record it, and tell the frontier.

Data flow: fetch -> **pipeline** -> store (WARC, CDXJ), then the recorder (statistics,
``crawl.db``, links to admission), then the frontier (politeness: how the host behaved). The
crawl loop itself stays about scheduling. Each concern has its own module: admission (scope
and traps), the recorder (also what replay uses, with no archive), ``gossamer.robots.status``
(what a robots.txt answer implies) and ``gossamer.frontier.backoff`` (retries and waits).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from gossamer.config import CrawlConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.exchange import store_page, store_robots
from gossamer.crawling.recorder import Recorder, note_robots
from gossamer.engine.partition import Part
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.frontier import Backoff, Frontier, Job, Outcome
from gossamer.robots import UNCONNECTABLE, lasting, lasting_answer, product_token
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore
from gossamer.urls import canonical_link, origin_of, path_query_of

__all__ = ["Pipeline"]

log = logging.getLogger(__name__)


class Pipeline:
    """Handles the outcome of every live job; writes to the stores the crawler owns."""

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
        self._clock = clock
        self._product = product_token(config.fetch.user_agent)
        self._admitter = Admitter(config.scope, frontier=frontier, stats=stats, db=db, part=part)
        # Seeds and the URLs other workers found enter the way links do.
        self.admit = self._admitter.admit
        self._recorder = Recorder(
            admitter=self._admitter,
            stats=stats,
            db=db,
            product=self._product,
            respect_nofollow=politeness.respect_nofollow,
            max_redirects=config.fetch.max_redirects,
            sitemaps=config.scope.sitemaps,
            clock=clock,
        )
        self._backoff = Backoff(
            max_retries=politeness.max_retries, max_backoff=politeness.max_backoff
        )

    # -- pages ----------------------------------------------------------------------------
    def page(self, job: Job, result: FetchResult) -> bool:
        """Handle a live page fetch: archive, record, then tell the frontier how it went."""
        if result.error in LOCAL_FAULTS:
            # This machine ran out of file handles, memory or ports: not the host's doing.
            # The URL gets no row (so a resume retries it) and goes back in the queue.
            self._stats.record_error(result.error or "local_fault")
            self._tell(job, self._backoff.after_local_fault(job.retries))
            return False
        is_page = store_page(
            self._recorder, self._warc, self._cdxj, job, result, stats=self._stats, db=self._db
        )
        host = self._frontier.host(job.host)
        self._tell(job, self._backoff.after_response(result, host, job.retries, self._clock()))
        return is_page

    def is_sitemap(self, job: Job) -> bool:
        """Whether a page job fetches a sitemap (whose body is read whatever its type)."""
        return self._recorder.purpose(job) == "sitemap"

    def _tell(self, job: Job, outcome: Outcome) -> None:
        if outcome.retry:
            self._frontier.retry(job.again())
        self._frontier.done(job, success=outcome.success, backoff=outcome.backoff)

    # -- robots.txt -----------------------------------------------------------------------
    def knows_robots(self, url: str) -> bool:
        """Whether ``url`` is a robots.txt whose answer is known and valid (not to be fetched)."""
        return (
            path_query_of(url) == "/robots.txt"
            and self._frontier.robots_rules(origin_of(url)) is not None
        )

    def robots(self, job: Job, hops: list[FetchResult]) -> None:
        """Store every hop of a robots.txt fetch and install the rules RFC 9309 implies."""
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
        origin = origin_of(job.url)
        if final.error in LOCAL_FAULTS:
            # This machine ran out of something; the host said nothing. Ask again later, and
            # never give the origin up for it.
            self._stats.record_error(final.error)
            self._frontier.robots_unavailable(origin, keep=True)
            self._stats.host(job.host).robots_status = f"deferred ({final.error})"
            self._frontier.done(job, success=True)
            return
        if final.is_redirect and self._reuse_robots(origin, final):
            self._frontier.done(job, success=True)
            return
        if not lasting(final.status, final.error):
            self._robots_unavailable(job, origin, final)
            return
        if answer is None:  # more hops than RFC 9309 asks us to follow
            answer = lasting_answer(final.status, final.content, self._product)
        note_robots(self._stats, job.host, answer)
        if final.is_redirect:  # more hops than RFC 9309 asks us to follow: allow all
            self._db.add_robots(origin, final.status, b"", final.started_at)
        self._frontier.set_robots(origin, answer.rules)
        landed = origin_of(final.url)
        if landed != origin and path_query_of(final.url) == "/robots.txt":
            # The redirect ended on another origin's robots.txt: that is its answer too, so
            # it is never fetched a second time while these rules are valid.
            self._frontier.set_robots(landed, answer.rules)
        self._frontier.done(job, success=True)

    def _robots_unavailable(self, job: Job, origin: str, final: FetchResult) -> None:
        """Unreachable (RFC 9309 2.3.1.4): assume everything is disallowed, ask again later;
        an origin that cannot be connected to at all is given up at once, and its seeds
        fall back to their next form (https -> http)."""
        status = final.error or final.status  # a 200 cut short says why: bad_encoding
        dropped = self._frontier.robots_unavailable(origin, give_up=final.error in UNCONNECTABLE)
        host = self._stats.host(job.host)
        if dropped is None:
            host.robots_status = f"deferred (robots.txt {status})"
        else:
            host.robots_status = f"given up ({status})"
            for lost in dropped:
                self._admitter.fall_back(lost)
        self._frontier.done(job, success=False)

    def _reuse_robots(self, origin: str, final: FetchResult) -> bool:
        """A redirect to a robots.txt already known: its rules are this origin's too."""
        location = final.header("Location")
        target = canonical_link(location, final.url) if location else None
        rules = self._frontier.robots_rules(origin_of(target)) if target else None
        if rules is None:
            return False
        self._frontier.set_robots(origin, rules)
        return True
