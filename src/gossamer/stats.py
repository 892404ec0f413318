"""Crawl counters: one object that the progress display, the reports and the dashboard read.

The engine is the only writer; everything runs on the event loop thread, so plain integer
updates need no lock. ``snapshot()`` returns a plain dict for reports and JSON; ``copy()``
gives a reader on another thread (the periodic reports) counters that hold still.

Besides the recorder's counters, the crawl loop adds what it alone sees: each response's time
(a fixed-bucket ``Histogram``), the stored pages that are HTML or PDF, the most fetches it had
under way at once (``max_in_flight``), and a ``Timeline`` sampled by its one-second tick
(both in :mod:`gossamer.monitor.series`, bounded whatever the crawl's length).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace

from gossamer.monitor.series import Histogram, Timeline

HTML_MEDIA = ("text/html", "application/xhtml+xml")
PDF_MEDIA = "application/pdf"


@dataclass(slots=True)
class HostStats:
    """What the per-domain registry reports for one host."""

    pages: int = 0
    bytes: int = 0
    time_spent: float = 0.0  # seconds of fetch time
    errors: int = 0
    robots_status: str = "unknown"  # "allow-all", "rules", "disallow-all (5xx)", ...
    fetches: int = 0  # responses timed by this run of the crawl loop (for the slowest hosts)
    fetch_seconds: float = 0.0  # their time


@dataclass(slots=True)
class CrawlStats:
    """Counters for a whole crawl. ``started`` is wall-clock seconds since the epoch."""

    started: float = field(default_factory=time.time)
    concurrency: int = 0
    pages: int = 0  # responses stored with a 2xx status
    requests: int = 0  # HTTP exchanges attempted, robots.txt included
    responses: int = 0  # exchanges that produced an HTTP status
    bytes: int = 0  # body bytes received
    fetch_time: float = 0.0  # sum of per-request elapsed seconds
    robots_requests: int = 0
    discovered: int = 0  # distinct canonical URLs ever queued
    redirects: int = 0
    skipped_robots: int = 0  # URLs refused by robots.txt
    skipped_other: int = 0  # URLs refused by scope rules (depth, scheme, length)
    # Of those, the ones the user's scope rules refused, by rule ("domain", "exclude", ...:
    # crawling/scope.py); not errors of their hosts.
    skipped_scope: Counter[str] = field(default_factory=Counter)
    # Pages in a language --languages does not name, by language: their links not followed
    # (and, with --skip-other-languages, the pages not stored).
    other_languages: Counter[str] = field(default_factory=Counter)
    # Links whose session id was stripped before dedup: the cleaned URL is crawled, so this is
    # a normalisation, not an error.
    session_ids_stripped: int = 0
    # A recrawl's answers (crawling/recrawl.py: new, not_modified, unchanged, changed, gone,
    # failed; due; bytes_saved by 304s), recounted from crawl.db on resume
    recrawl: Counter[str] = field(default_factory=Counter)
    # Pages by how a browser rendered them (rendered, unsettled, failed) and those that looked
    # script-built but were not rendered ("hint"): crawl.db's pages.render, recounted on resume
    render: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    hosts: dict[str, HostStats] = field(default_factory=dict)
    hourly: Counter[int] = field(default_factory=Counter)  # hour index -> pages
    elapsed_before: float = 0.0  # duration carried over from earlier runs of a resumed crawl
    sitemaps: dict[str, list[str]] = field(default_factory=dict)  # host -> robots.txt Sitemaps
    # Origins whose robots.txt stayed unavailable when nothing else was left: not crawled in
    # this run, left to a resume.
    deferred: list[str] = field(default_factory=list)
    html_pages: int = 0  # stored pages that are HTML
    pdf_pages: int = 0  # stored pages that are PDF
    max_in_flight: int = 0  # most fetches under way at once: the concurrency reached
    latency: Histogram = field(default_factory=Histogram)  # response times (seconds)
    timeline: Timeline = field(default_factory=Timeline)  # cumulative figures over time

    def host(self, name: str) -> HostStats:
        entry = self.hosts.get(name)
        if entry is None:
            entry = self.hosts[name] = HostStats()
        return entry

    def copy(self) -> CrawlStats:
        """An independent copy, taken on the loop thread, for a reader on another thread."""
        return replace(
            self,
            errors=Counter(self.errors),
            skipped_scope=Counter(self.skipped_scope),
            other_languages=Counter(self.other_languages),
            recrawl=Counter(self.recrawl),
            render=Counter(self.render),
            statuses=Counter(self.statuses),
            hosts={
                name: HostStats(
                    h.pages,
                    h.bytes,
                    h.time_spent,
                    h.errors,
                    h.robots_status,
                    h.fetches,
                    h.fetch_seconds,
                )
                for name, h in self.hosts.items()
            },
            hourly=Counter(self.hourly),
            sitemaps={host: list(urls) for host, urls in self.sitemaps.items()},
            deferred=list(self.deferred),
            latency=self.latency.copy(),
            timeline=self.timeline.copy(),
        )

    def duration(self, now: float | None = None) -> float:
        return self.elapsed_before + ((now if now is not None else time.time()) - self.started)

    def skip_scope(self, rule: str) -> None:
        """A URL the scope rule ``rule`` refused."""
        self.skipped_other += 1
        self.skipped_scope[rule] += 1

    def carry_scope(self, snapshot: dict[str, object]) -> None:
        """Add a saved snapshot's refusals by scope rule and pages by other language (an
        earlier run's, or a worker's) to these counters."""
        for key, counter in (
            ("skipped_scope", self.skipped_scope),
            ("other_languages", self.other_languages),
        ):
            saved = snapshot.get(key)
            for name, count in (saved if isinstance(saved, dict) else {}).items():
                if isinstance(count, int) and not isinstance(count, bool):
                    counter[str(name)] += count

    def record_error(self, kind: str, host: str | None = None) -> None:
        self.errors[kind] += 1
        if host is not None:
            self.host(host).errors += 1

    def record_response(self, host: str, seconds: float) -> None:
        """A response (any HTTP status) took ``seconds``: the histogram and the host's timing."""
        self.latency.observe(seconds)
        entry = self.host(host)
        entry.fetches += 1
        entry.fetch_seconds += seconds

    def record_stored(self, content_type: str) -> None:
        """A stored page: counted as HTML or PDF by its media type."""
        media = content_type.partition(";")[0].strip().lower()
        if media in HTML_MEDIA:
            self.html_pages += 1
        elif media == PDF_MEDIA:
            self.pdf_pages += 1

    def sample(self, now: float | None = None) -> None:
        """Add the current figures to the timeline (the crawl's tick calls this)."""
        self.timeline.sample(
            self.duration(now),
            (self.pages, sum(self.errors.values()), self.requests, self.bytes),
        )

    def snapshot(self, now: float | None = None) -> dict[str, object]:
        duration = self.duration(now)
        return {
            "pages": self.pages,
            "requests": self.requests,
            "responses": self.responses,
            "bytes": self.bytes,
            "robots_requests": self.robots_requests,
            "discovered": self.discovered,
            "redirects": self.redirects,
            "skipped_robots": self.skipped_robots,
            "skipped_other": self.skipped_other,
            "skipped_scope": dict(self.skipped_scope),
            "other_languages": dict(self.other_languages),
            "session_ids_stripped": self.session_ids_stripped,
            "recrawl": dict(self.recrawl),
            "render": dict(self.render),
            "errors": dict(self.errors),
            "error_total": sum(self.errors.values()),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "avg_request_seconds": self.fetch_time / self.responses if self.responses else 0.0,
            "pages_per_second": self.pages / duration if duration > 0 else 0.0,
            "domains": sum(1 for h in self.hosts.values() if h.pages),
            "duration_seconds": duration,
            "concurrency": self.concurrency,
            "hourly": {str(k): v for k, v in sorted(self.hourly.items())},
            "deferred": list(self.deferred),
            "html_pages": self.html_pages,
            "pdf_pages": self.pdf_pages,
            "max_in_flight": self.max_in_flight,
            "fetch_seconds": self.latency.to_json(),
        }
