"""What happens to a fetch result: store it, parse it, and feed new URLs back to the frontier.

The pipeline is the only place that turns a :class:`FetchResult` into WARC records, metadata
rows, statistics and frontier entries, so the crawl loop itself stays about scheduling.
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Callable

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.engine.partition import Part
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.fetch.fetcher import media_type
from gossamer.frontier import Admission, Backlog, Frontier, Job
from gossamer.frontier.frontier import WINDOW
from gossamer.parse import parse_html
from gossamer.robots import RobotsRules, parse_robots, product_token
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcLocation, WarcStore, page_row
from gossamer.urls import canonical_link, host_of, origin_of, path_query_of
from gossamer.urls.traps import strip_session_ids, trap_reason

log = logging.getLogger(__name__)

HTML_TYPES = ("text/html", "application/xhtml+xml")
PARSE_LIMIT = 4 * 1024 * 1024  # bytes of a page handed to the HTML parser
LOCAL_FAULT_PAUSE = 1.0  # seconds a host waits after a fault of this machine, not of the host
# Transport faults that mean "no server here", as opposed to a slow or failing one.
UNCONNECTABLE = frozenset(
    {"dns", "connection_refused", "connect_timeout", "blocked_address", "tls", "bad_url"}
)


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def build_frontier(
    politeness: PolitenessConfig,
    stats: CrawlStats,
    *,
    backlog: Backlog | None = None,
    window: int = WINDOW,
) -> Frontier:
    """A frontier with the crawl's politeness settings (live crawl, resume and recover)."""
    return Frontier(
        delay=politeness.delay,
        max_per_host=politeness.max_per_host,
        crawl_delay_cap=politeness.crawl_delay_cap,
        robots_ttl=politeness.robots_ttl,
        robots_retry_delay=politeness.robots_retry_delay,
        robots_retries=politeness.robots_retries,
        stats=stats,
        clock=time.monotonic,
        backlog=backlog,
        window=window,
    )


class DatabaseBacklog:
    """The frontier's disk side: spilled jobs live in the ``urls`` table of ``crawl.db``.

    A spilled job loses its seed fallbacks and redirect hop count; both matter only for the
    few URLs that never leave the memory window (seeds and fresh redirect targets).
    """

    def __init__(self, db: MetadataDB) -> None:
        self._db = db

    def load(self, host: str, after: int, limit: int) -> list[tuple[int, Job]]:
        return [
            (row_id, Job(url=url, host=host, depth=depth, referrer=referrer))
            for row_id, url, depth, referrer in self._db.backlog(host, after, limit)
        ]


class Pipeline:
    """Handles the outcome of every job; owns the stores for the crawl's lifetime."""

    def __init__(
        self,
        config: CrawlConfig,
        *,
        frontier: Frontier,
        stats: CrawlStats,
        warc: WarcStore | None,
        cdxj: CdxjWriter,
        db: MetadataDB,
        part: Part | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._frontier = frontier
        self._stats = stats
        self._warc = warc
        self._cdxj = cdxj
        self._db = db
        self._part = part
        self._clock = clock
        self._product = product_token(config.fetch.user_agent)

    # -- new URLs -------------------------------------------------------------------------
    def admit(
        self,
        url: str,
        depth: int,
        referrer: str | None,
        *,
        hops: int = 0,
        fallbacks: tuple[str, ...] = (),
    ) -> bool:
        """Apply the scope rules and queue ``url`` if it is new; True if it was queued."""
        scope = self._config.scope
        host = host_of(url)
        if scope.strip_session_ids:
            # Before dedup: a fresh session id in every link would make every URL new.
            stripped = strip_session_ids(url)
            if stripped != url:
                self._stats.record_error("trap_session_id", host)
                url = stripped
        trap = trap_reason(
            url,
            max_length=scope.max_url_length,
            max_depth=scope.max_path_depth,
            max_repeats=scope.max_path_repeats,
        )
        if trap is not None:
            self._stats.skipped_other += 1
            self._stats.record_error(trap, host)
            return False
        if scope.max_depth is not None and depth > scope.max_depth:
            self._stats.skipped_other += 1
            return False
        if self._part is not None and not self._part.mine(url):
            # Another worker owns this host: it deduplicates and records the URL.
            self._part.forward(url, depth, referrer)
            return False
        job = Job(
            url=url, host=host, depth=depth, referrer=referrer, hops=hops, fallbacks=fallbacks
        )
        admission = self._frontier.add(job, host_budget=scope.max_pages_per_host)
        if admission is Admission.DUPLICATE:
            return False
        if admission is Admission.OVER_BUDGET:
            self._stats.skipped_other += 1
            self._stats.record_error("trap_host_budget", host)
            return False
        self._stats.discovered += 1
        self._db.add_discovered(
            [(url, host, depth, referrer)], spilled=admission is Admission.SPILLED
        )
        return True

    # -- results --------------------------------------------------------------------------
    def _archive(self, job: Job, result: FetchResult, purpose: str) -> WarcLocation | None:
        """Write the exchange to the WARC files (with the fields ``recover`` needs)."""
        if not result.status or result.skipped_body:
            return None
        assert self._warc is not None, "a replay-only pipeline cannot archive live fetches"
        fields = {
            "gossamer-purpose": purpose,
            "gossamer-host": job.host,
            "gossamer-depth": str(job.depth),
            "fetchTimeMs": str(round(result.elapsed * 1000)),
        }
        if job.referrer:
            fields["via"] = job.referrer
        location = self._warc.write(result, fields)
        self._cdxj.add(result, location)
        return location

    def _count(self, job: Job, result: FetchResult) -> None:
        log.debug(
            "fetched url=%s status=%s error=%s elapsed=%.3f",
            result.url,
            result.status,
            result.error or "-",
            result.elapsed,
        )
        stats = self._stats
        stats.requests += 1
        host = stats.host(job.host)
        host.time_spent += result.elapsed
        if result.status:
            stats.responses += 1
            stats.statuses[result.status] += 1
            stats.bytes += len(result.body)
            stats.fetch_time += result.elapsed
            host.bytes += len(result.body)
        if result.error:
            stats.record_error(result.error, job.host)
        elif result.status >= 400:
            stats.record_error(f"http_{result.status}", job.host)

    def record_robots(self, job: Job, hop: FetchResult, location: WarcLocation | None) -> None:
        """Count and record one robots.txt exchange (live or replayed from the WARC files).

        A final answer that gives rules (2xx) or allows all (4xx) is also kept for the origin
        asked, so a resumed crawl reuses it while it is valid instead of fetching it again.
        """
        self._count(job, hop)
        self._stats.robots_requests += 1
        if _lasting(hop) and not hop.is_redirect:
            body = hop.content if 200 <= hop.status < 300 else b""
            self._db.add_robots(origin_of(job.url), hop.status, body, hop.started_at)
        self._db.add_page(
            page_row(
                hop,
                location,
                depth=job.depth,
                referrer=job.referrer,
                host=job.host,
                purpose="robots",
            )
        )
        self._db.end_exchange()

    def knows_robots(self, url: str) -> bool:
        """Whether ``url`` is a robots.txt whose answer is known and valid (not to be fetched)."""
        return (
            path_query_of(url) == "/robots.txt"
            and self._frontier.robots_rules(origin_of(url)) is not None
        )

    def robots(self, job: Job, hops: list[FetchResult]) -> None:
        """Store every hop of a robots.txt fetch and install the rules RFC 9309 implies."""
        for hop in hops:
            if hop.error not in LOCAL_FAULTS:
                self.record_robots(job, hop, self._archive(job, hop, "robots"))
        final = hops[-1]
        origin = origin_of(job.url)
        host = self._stats.host(job.host)
        if final.error in LOCAL_FAULTS:
            # This machine ran out of something; the host said nothing. Ask again later, and
            # never give the origin up for it.
            self._stats.record_error(final.error)
            self._frontier.robots_unavailable(origin, keep=True)
            host.robots_status = f"deferred ({final.error})"
            self._frontier.done(job, success=True)
            return
        if final.is_redirect and self._reuse_robots(origin, final):
            self._frontier.done(job, success=True)
            return
        if not _lasting(final):
            # Unreachable (RFC 9309 2.3.1.4): assume everything is disallowed, try again later.
            # 429 is treated like 5xx: the server asks us to slow down, not to ignore it.
            # A 2xx body that cannot be decoded tells us nothing, so it is treated the same.
            # A host that cannot be connected to at all is given up at once; seeds then fall
            # back to their next form (https -> http).
            status = final.status or final.error
            dropped = self._frontier.robots_unavailable(
                origin, give_up=final.error in UNCONNECTABLE
            )
            if dropped is None:
                host.robots_status = f"deferred (robots.txt {status})"
            else:
                host.robots_status = f"given up ({status})"
                for lost in dropped:
                    self._fall_back(lost)
            self._frontier.done(job, success=False)
            return
        rules = self.robots_answer(final.status, final.content, job.host)
        if final.is_redirect:  # more hops than RFC 9309 asks us to follow: allow all
            self._db.add_robots(origin, final.status, b"", final.started_at)
        self._frontier.set_robots(origin, rules)
        landed = origin_of(final.url)
        if landed != origin and path_query_of(final.url) == "/robots.txt":
            # The redirect ended on another origin's robots.txt: that is its answer too, so
            # it is never fetched a second time while these rules are valid.
            self._frontier.set_robots(landed, rules)
        self._frontier.done(job, success=True)

    def restore_robots(self, keep: Callable[[str], bool] = lambda origin: True) -> int:
        """Resume: install every kept robots.txt answer that is still valid; how many."""
        ttl = self._config.politeness.robots_ttl
        now = self._clock()
        restored = 0
        for origin, status, body, fetched_at in self._db.robots_answers():
            left = fetched_at + ttl - now
            if left <= 0 or not keep(origin):
                continue
            rules = self.robots_answer(status, body, host_of(origin))
            self._frontier.set_robots(origin, rules, ttl=left)
            restored += 1
        return restored

    def _reuse_robots(self, origin: str, final: FetchResult) -> bool:
        """A redirect to a robots.txt already known: its rules are this origin's too."""
        location = final.header("Location")
        target = canonical_link(location, final.url) if location else None
        rules = self._frontier.robots_rules(origin_of(target)) if target else None
        if rules is None:
            return False
        self._frontier.set_robots(origin, rules)
        return True

    def robots_answer(self, status: int, content: bytes, host: str) -> RobotsRules:
        """The rules a lasting robots.txt answer (2xx, or 4xx/too many redirects) implies."""
        entry = self._stats.host(host)
        if 200 <= status < 300:
            rules = parse_robots(content, self._product)
            entry.robots_status = "rules"
            if rules.crawl_delay is not None:
                entry.robots_status = f"rules, crawl-delay {rules.crawl_delay:g}"
            if rules.sitemaps:
                self._stats.sitemaps.setdefault(host, list(rules.sitemaps))
            return rules
        # 4xx, or a redirect chain longer than five hops: treat as unavailable, allow all.
        entry.robots_status = f"allow-all ({status})"
        return RobotsRules.allow_all()

    def record_page(self, job: Job, result: FetchResult, location: WarcLocation | None) -> bool:
        """Count and record one page exchange and admit what it leads to (links, redirect).

        This is the part of handling a result that does not depend on the live crawl, so
        ``recover`` and resume replay WARC records through it. True when it was a stored page.
        """
        try:
            return self._record_page(job, result, location)
        finally:
            self._db.end_exchange()

    def _record_page(self, job: Job, result: FetchResult, location: WarcLocation | None) -> bool:
        self._count(job, result)
        self._db.add_page(
            page_row(result, location, depth=job.depth, referrer=job.referrer, host=job.host)
        )
        status = result.status
        if status == 0:
            self._fall_back(job)
            return False
        if result.is_redirect:
            self._redirect(job, result)
            return False
        if not (200 <= status < 300) or result.error or result.skipped_body:
            return False
        stats = self._stats
        stats.pages += 1
        stats.host(job.host).pages += 1
        stats.hourly[int((self._clock() - stats.started + stats.elapsed_before) // 3600)] += 1
        if media_type(result.content_type) in HTML_TYPES:
            self._links(job, result)
        return True

    def page(self, job: Job, result: FetchResult) -> bool:
        """Handle a live page fetch: archive, record, then tell the frontier how it went."""
        if result.error in LOCAL_FAULTS:
            self._local_fault(job, result)
            return False
        is_page = self.record_page(job, result, self._archive(job, result, "page"))
        status = result.status
        politeness = self._config.politeness
        if status in (429, 503):
            wait = retry_after(result.header("Retry-After"), self._clock())
            backoff = wait if wait is not None else self._error_backoff(job)
            if job.retries < politeness.max_retries:
                self._frontier.retry(_again(job))
            self._frontier.done(job, success=False, backoff=min(backoff, politeness.max_backoff))
        elif status == 0 or status >= 500:
            self._frontier.done(job, success=False, backoff=self._error_backoff(job))
        else:
            self._frontier.done(job, success=True)
        return is_page

    def _local_fault(self, job: Job, result: FetchResult) -> None:
        """This machine ran out of file handles, memory or ports: not the host's doing. The
        URL gets no row (so a resume retries it) and goes back in the queue a few times."""
        self._stats.record_error(result.error or "local_fault")
        if job.retries < self._config.politeness.max_retries:
            self._frontier.retry(_again(job))
        self._frontier.done(job, success=True, backoff=LOCAL_FAULT_PAUSE)

    def _fall_back(self, job: Job) -> None:
        """A URL that could not be reached: queue its next form (a seed's https -> http)."""
        if job.fallbacks:
            self.admit(job.fallbacks[0], job.depth, job.referrer, fallbacks=job.fallbacks[1:])

    def _redirect(self, job: Job, result: FetchResult) -> None:
        self._stats.redirects += 1
        location = result.header("Location")
        target = canonical_link(location, result.url) if location else None
        if target is None:
            self._stats.record_error("bad_redirect", job.host)
            return
        if job.hops + 1 > self._config.fetch.max_redirects:
            self._stats.record_error("redirect_chain", job.host)
            return
        self._db.add_links(result.url, [target])
        # A redirect is not a link hop: the target keeps the depth of the URL that moved.
        self.admit(target, job.depth, result.url, hops=job.hops + 1, fallbacks=job.fallbacks)

    def _links(self, job: Job, result: FetchResult) -> None:
        # The parse tree costs ~24x the bytes parsed: links are taken from the first
        # PARSE_LIMIT bytes only, which bounds memory per page (the WARC keeps the whole body).
        parsed = parse_html(result.content[:PARSE_LIMIT], result.url, result.content_type)
        follow = not (parsed.nofollow and self._config.politeness.respect_nofollow)
        targets = [link.url for link in parsed.links]
        if targets:
            self._db.add_links(result.url, targets)
        if not follow:
            return
        depth = job.depth + 1
        for link in parsed.links:
            if link.nofollow and self._config.politeness.respect_nofollow:
                continue
            self.admit(link.url, depth, result.url)

    def _error_backoff(self, job: Job) -> float:
        """Exponential backoff after consecutive faults of one host, capped."""
        host = self._frontier.host(job.host)
        base = max(host.delay, 1.0)
        return float(
            min(base * 2 ** min(host.errors_in_row, 16), self._config.politeness.max_backoff)
        )


def _lasting(answer: FetchResult) -> bool:
    """Whether a robots.txt answer stands until its rules expire (2xx, 3xx left, 4xx but 429),
    as opposed to one that means "unavailable, ask again later" (RFC 9309 2.3.1)."""
    status = answer.status
    if status == 0 or status >= 500 or status == 429:
        return False
    return answer.error not in ("bad_encoding", "decompression_bomb")


def _again(job: Job) -> Job:
    return Job(
        url=job.url,
        host=job.host,
        depth=job.depth,
        referrer=job.referrer,
        retries=job.retries + 1,
        hops=job.hops,
        fallbacks=job.fallbacks,
    )
