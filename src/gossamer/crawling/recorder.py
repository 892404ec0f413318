"""Recording an exchange: counters, ``crawl.db`` rows, and the URLs a page leads to.

Data flow: a fetch result (live, from the pipeline) or an archived record (replayed from the
WARC files by resume and recover) -> **recorder** -> statistics, ``pages`` / ``links`` /
``robots`` rows, and the links and redirect target handed to admission. Nothing here archives
or tells the frontier how a host behaved: that is the live pipeline's part, so replaying a
WARC file records exactly what the live crawl recorded, without fetching or writing WARC.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gossamer.config import RecrawlConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.language import LanguageRule
from gossamer.crawling.revisits import Revisits
from gossamer.crawling.sitemaps import Sitemaps
from gossamer.fetch import FetchResult
from gossamer.fetch.fetcher import media_type
from gossamer.frontier import Job
from gossamer.parse import ParsedPage, decode_html, parse_html
from gossamer.plugins.api import Link, Page
from gossamer.robots import RobotsAnswer, lasting, lasting_answer
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB, WarcLocation, page_row
from gossamer.store.revisits import Original
from gossamer.store.warc import DOM_TYPE
from gossamer.urls import canonical_link, origin_of
from gossamer.urls.canonical import CanonicalLinks

if TYPE_CHECKING:
    from gossamer.plugins.hooks import CrawlHooks, Verdict

__all__ = [
    "ASKED_ON_A_GUESS",
    "HINT",
    "HTML_TYPES",
    "PARSE_LIMIT",
    "Recorder",
    "note_robots",
    "stored_html",
]

log = logging.getLogger(__name__)

HTML_TYPES = ("text/html", "application/xhtml+xml")
HINT = "hint"  # pages.render of a page that looked script-built and was not rendered
# Requests made on a guess (a sitemap, a rendered page's own): a 404 or 410 is not an error.
ASKED_ON_A_GUESS = ("sitemap", "resource")
PARSE_LIMIT = 4 * 1024 * 1024  # bytes of a page handed to the HTML parser


def note_robots(stats: CrawlStats, host: str, answer: RobotsAnswer) -> None:
    """Show a lasting robots.txt answer in the per-domain report (and its sitemaps)."""
    stats.host(host).robots_status = answer.status
    if answer.rules.sitemaps:
        stats.sitemaps.setdefault(host, list(answer.rules.sitemaps))


class Recorder:
    """Counts and records exchanges; admits what a page leads to."""

    def __init__(
        self,
        *,
        admitter: Admitter,
        stats: CrawlStats,
        db: MetadataDB,
        product: str | Callable[[str], str] = "*",
        respect_nofollow: bool = False,
        max_redirects: int = 10,
        sitemaps: bool = True,
        clock: Callable[[], float] = time.time,
        recrawl: RecrawlConfig | None = None,
        max_retries: int = 3,
    ) -> None:
        self._admitter = admitter
        self._stats = stats
        self._db = db
        self._product = product
        self._respect_nofollow = respect_nofollow
        self._max_redirects = max_redirects
        self._clock = clock
        self._sitemaps = Sitemaps(admitter=admitter, stats=stats, db=db, enabled=sitemaps)
        # Each page's recrawl schedule, and what a revisit's answer changes (issue 31).
        self._revisits = Revisits(db, stats, recrawl or RecrawlConfig(), max_retries)
        self._links_met = CanonicalLinks()  # links met on earlier pages, in canonical form
        # The scope's [[extract]] rules and plugins (issue 33), run on every HTML page this
        # recorder records, live or replayed: so every engine runs them, by construction.
        self._hooks = _hooks_of(admitter, stats, db)
        # --languages (issue 30): the links of pages in other languages are not followed.
        languages = admitter.scope.languages
        self._language = (
            LanguageRule(frozenset(languages), not admitter.scope.skip_other_languages)
            if languages
            else None
        )

    def _product_of(self, url: str) -> str:
        """The product token robots.txt rules are matched against for ``url``'s site: one
        for every site, or each site's own (``SiteRules.product_for``)."""
        return self._product if isinstance(self._product, str) else self._product(url)

    def stored_copy(self, job: Job, result: FetchResult) -> tuple[Original, str] | None:
        """The stored copy a 304 confirms, for its revisit record (``Revisits.stored_copy``)."""
        return self._revisits.stored_copy(job, result)

    def purpose(self, job: Job) -> str:
        """How a page job's exchange is archived and recorded: "page" or "sitemap"."""
        return self._sitemaps.purpose(job.url)

    def screened(self, job: Job, result: FetchResult) -> FetchResult:
        """``result`` as it is to be archived: with ``--skip-other-languages``, an HTML page
        in another language is counted and marked as a body not kept (no WARC record, no
        stored page), as a media type not kept is."""
        rule = self._language
        if (
            rule is None
            or rule.store_others
            or not (200 <= result.status < 300)
            or result.error
            or result.skipped_body
            or media_type(result.content_type) not in HTML_TYPES
            or self._sitemaps.purpose(job.url) != "page"
        ):
            return result
        lang = rule.other_language(result.content[:PARSE_LIMIT], result.content_type)
        if lang is None:
            return result
        self._stats.other_languages[lang] += 1
        return replace(result, skipped_body=True)

    def record_robots(
        self, job: Job, hop: FetchResult, location: WarcLocation | None
    ) -> RobotsAnswer | None:
        """Count and record one robots.txt exchange; the answer it gives, if it is final.

        A final answer that gives rules (2xx) or allows all (4xx) is also kept for the origin
        asked, so a resumed crawl reuses it while it is valid instead of fetching it again,
        and names the origin's sitemaps (in the same transaction, so neither is kept alone).
        """
        self._count(job, hop, "robots")
        self._stats.robots_requests += 1
        answer = None
        if lasting(hop.status, hop.error) and not hop.is_redirect:
            body = hop.content if 200 <= hop.status < 300 else b""
            self._db.add_robots(origin_of(job.url), hop.status, body, hop.started_at)
            answer = lasting_answer(hop.status, body, self._product_of(job.url))
            self._sitemaps.from_robots(job, answer.rules.sitemaps)
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
        return answer

    def record_page(
        self,
        job: Job,
        result: FetchResult,
        location: WarcLocation | None,
        verdict: Verdict | None = None,
    ) -> bool:
        """Count and record one page exchange and admit what it leads to (links, redirect).

        True when it was a stored page.
        """
        try:
            return self._record_page(job, result, location, verdict)
        finally:
            self._db.end_exchange()

    def _record_page(
        self,
        job: Job,
        result: FetchResult,
        location: WarcLocation | None,
        verdict: Verdict | None,
    ) -> bool:
        purpose = self._sitemaps.purpose(job.url)
        self._count(job, result, purpose)
        row = page_row(
            result, location, depth=job.depth, referrer=job.referrer, host=job.host, purpose=purpose
        )
        change = self._revisits.judge(job, result, row) if purpose == "page" else None
        if change is not None and change.keeps_row:
            return False  # the stored copy holds (or the page is asked again): nothing new
        parsed = self._parsed(result) if purpose == "page" else None
        if parsed is not None and (result.render or parsed.script_built):
            state = result.render or HINT
            row = replace(row, render=state)
            self._stats.render[state] += 1
        self._db.add_page(row)
        if change is not None and change.revisit:
            self._db.unlink(result.url)  # a new version's links replace the old ones
        status = result.status
        if status == 0:
            self._admitter.fall_back(job)
            return False
        if result.is_redirect:
            self._redirect(job, result)
            return False
        if purpose == "sitemap":
            # A sitemap cut at the size limit still gives the URLs before the cut.
            if 200 <= status < 300 and result.error in ("", "too_large"):
                self._sitemaps.read(job, result)
            return False
        if not (200 <= status < 300) or result.error or result.skipped_body:
            return False
        stats = self._stats
        if change is None or not change.revisit:  # a page's new version is not a new page
            stats.pages += 1
            stats.host(job.host).pages += 1
            stats.hourly[int((self._clock() - stats.started + stats.elapsed_before) // 3600)] += 1
        if parsed is not None:
            # The parse also gives the page's title and noindex; crawl.db has no column for
            # them yet (the index reads them again from the WARC record).
            self._links(job, result, parsed, follow=self._follows(result), verdict=verdict)
        return True

    def _parsed(self, result: FetchResult) -> ParsedPage | None:
        """A stored HTML page parsed for its links (a rendered page: its DOM); else None."""
        if not stored_html(result):
            return None
        # The parse tree costs ~24x the bytes parsed: links are taken from the first
        # PARSE_LIMIT bytes only, which bounds memory per page (the WARC keeps the whole body).
        return parse_html(
            _parse_bytes(result), result.url, _parse_type(result), links=self._links_met
        )

    def record_resource(self, job: Job, result: FetchResult, location: WarcLocation | None) -> None:
        """Count and record one request a rendered page made (``purpose`` "resource"): a
        request like any, neither a page nor a source of links."""
        try:
            self._count(job, result, "resource")
            self._db.add_page(
                page_row(
                    result, location, depth=job.depth, referrer=job.referrer, host=job.host,
                    purpose="resource",
                )
            )  # fmt: skip
        finally:
            self._db.end_exchange()

    def _follows(self, result: FetchResult) -> bool:
        """Whether the links of a stored HTML page are followed: not those of a page in a
        language --languages leaves out (counted by language)."""
        rule = self._language
        if rule is None:
            return True
        lang = rule.other_language(result.content[:PARSE_LIMIT], result.content_type)
        if lang is None:
            return True
        self._stats.other_languages[lang] += 1
        return False

    def _count(self, job: Job, result: FetchResult, purpose: str) -> None:
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
        elif result.status >= 400 and not (
            purpose in ASKED_ON_A_GUESS and result.status in (404, 410)
        ):
            # (Most hosts have no /sitemap.xml, nor the /favicon.ico a browser asks for;
            # asking for them is no fault of theirs.)
            stats.record_error(f"http_{result.status}", job.host)

    def _redirect(self, job: Job, result: FetchResult) -> None:
        self._stats.redirects += 1
        location = result.header("Location")
        target = canonical_link(location, result.url) if location else None
        if target is None:
            self._stats.record_error("bad_redirect", job.host)
            return
        if job.hops + 1 > self._max_redirects:
            self._stats.record_error("redirect_chain", job.host)
            return
        self._db.add_links(result.url, [target])
        self._sitemaps.moved(job.url, target)
        # A redirect is not a link hop: the target keeps the depth of the URL that moved.
        self._admitter.admit(
            target, job.depth, result.url, hops=job.hops + 1, fallbacks=job.fallbacks
        )

    def _links(
        self,
        job: Job,
        result: FetchResult,
        parsed: ParsedPage,
        *,
        follow: bool = True,
        verdict: Verdict | None = None,
    ) -> ParsedPage:
        if parsed.depth_capped:
            # Over the parse's cost bound: links are those read before the nesting went too
            # deep. Counted beside the errors (the page is stored as it came).
            self._stats.record_error("parse_capped", job.host)
            log.info("%s: nested past the parse's depth bound, read in part", result.url)
        targets = [link.url for link in parsed.links]
        if targets:
            self._db.add_links(result.url, targets)
        depth = job.depth + 1
        hooks = self._hooks
        drop: frozenset[str] = frozenset()
        if hooks is not None:
            # Before admission: the links a plugin drops are never queued, and the URLs it
            # adds are queued in this exchange, so the crawl's end still sees all its work.
            if verdict is None:  # not judged ahead, off the event loop: judged here
                verdict = hooks.judge(
                    self._page(job, result, targets), self._hooked(parsed, result.url, job)
                )
            hooks.apply(verdict, result.url, job.host)
            drop = verdict.drop
            for url in verdict.admit if follow else ():
                target = canonical_link(url, result.url)
                if target is not None:
                    self._admitter.admit(target, depth, result.url)
        if not follow or (parsed.nofollow and self._respect_nofollow):
            # (A page in another language: its links are kept in crawl.db, not followed.)
            return parsed
        for link in parsed.links:
            if link.nofollow and self._respect_nofollow:
                continue
            if link.url in drop:
                continue
            self._admitter.admit(link.url, depth, result.url)
        return parsed

    def plugin_work(self, job: Job, result: FetchResult) -> Callable[[], Verdict] | None:
        """The hooks' work on a page about to be recorded, to be run on another thread than
        the event loop's (``crawling/loop.py``) and handed to :meth:`record_page`; None when
        the crawl has no hooks or the page is not one they see (a stored HTML page)."""
        hooks = self._hooks
        if (
            hooks is None
            or not 200 <= result.status < 300
            or result.error
            or result.skipped_body
            or media_type(result.content_type) not in HTML_TYPES
            or self._sitemaps.purpose(job.url) == "sitemap"
        ):
            return None

        def work() -> Verdict:
            parsed = parse_html(_parse_bytes(result), result.url, _parse_type(result))
            page = self._page(job, result, [link.url for link in parsed.links])
            return hooks.judge(page, self._hooked(parsed, result.url, job))

        return work

    def _hooked(self, parsed: ParsedPage, page_url: str, job: Job) -> list[Link]:
        """The links the link hooks are asked about: those the crawl would follow."""
        if parsed.nofollow and self._respect_nofollow:
            return []
        depth = job.depth + 1
        return [
            Link(link.url, page_url, depth)
            for link in parsed.links
            if not (link.nofollow and self._respect_nofollow)
        ]

    @staticmethod
    def _page(job: Job, result: FetchResult, targets: list[str]) -> Page:
        html, _ = decode_html(_parse_bytes(result), _parse_type(result))
        return Page(result.url, result.status, result.content_type, html, tuple(targets),
                    job.depth)  # fmt: skip


def stored_html(result: FetchResult) -> bool:
    """Whether ``result`` is an HTML page whose body was kept: one parsed for links (and,
    for a rendered host, one the browser may render)."""
    return (
        200 <= result.status < 300
        and not result.error
        and not result.skipped_body
        and media_type(result.content_type) in HTML_TYPES
    )


def _parse_bytes(result: FetchResult) -> bytes:
    """What a page's links are read from: its rendered DOM if it has one, else its body."""
    source = result.rendered if result.rendered is not None else result.content
    return source[:PARSE_LIMIT]


def _parse_type(result: FetchResult) -> str:
    return DOM_TYPE if result.rendered is not None else result.content_type


def _hooks_of(admitter: Admitter, stats: CrawlStats, db: MetadataDB) -> CrawlHooks | None:
    scope = admitter.scope
    if not scope.extract and not scope.plugins:
        return None
    from gossamer.plugins.hooks import crawl_hooks  # noqa: PLC0415 (only a crawl that has some)

    return crawl_hooks(scope, db.path.parent, stats)
