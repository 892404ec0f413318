"""Sitemaps as a source of URLs, beside links.

Data flow: a lasting robots.txt answer (live or replayed) -> :meth:`Sitemaps.from_robots`
names its origin's sitemaps (its ``Sitemap:`` lines, or ``/sitemap.xml`` when it has none)
-> admission, like any link (robots.txt, scope, politeness and dedup all apply) -> fetched
by the crawl loop as an ordinary job -> the recorder hands a 2xx sitemap to
:meth:`Sitemaps.read` -> its URLs go to admission (an index's sitemaps come back here).

Which URLs are sitemaps is kept in ``crawl.db`` (``sitemaps``), not in the job: a job spilled
to disk or restored on resume is a bare URL, and the recorder asks :meth:`purpose` for it.
A sitemap may list URLs of its own host, or of the host whose robots.txt named it (a
"cross-submit", as the sitemaps.org protocol allows); other URLs are counted and left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gossamer.crawling.admission import Admitter
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.parse.sitemap import parse_sitemap
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.urls import canonical_link, host_of, origin_of

__all__ = ["MAX_LEVEL", "MAX_SITEMAPS_PER_HOST", "Sitemaps"]

# An index may list 50,000 sitemaps of 50,000 URLs each: far past any host's URL budget.
MAX_SITEMAPS_PER_HOST = 500
# Indexes do not nest by the protocol; one level of nesting is tolerated, no more.
MAX_LEVEL = 2


@dataclass(frozen=True, slots=True)
class _Known:
    owner: str  # the host whose URLs this sitemap may list besides its own
    level: int  # 0: from robots.txt or guessed; n: listed by an index of level n - 1


class Sitemaps:
    """The sitemaps of a crawl: which URLs are sitemaps, and what each one listed."""

    def __init__(
        self, *, admitter: Admitter, stats: CrawlStats, db: MetadataDB, enabled: bool = True
    ) -> None:
        self._admitter = admitter
        self._stats = stats
        self._db = db
        self._enabled = enabled
        self._known: dict[str, _Known] = {}
        self._per_host: Counter[str] = Counter()
        if enabled:
            for url, owner, level in db.sitemaps():
                self._remember(url, owner, level)

    def purpose(self, url: str) -> str:
        """How an exchange for ``url`` is recorded: "sitemap" or "page"."""
        return "sitemap" if url in self._known else "page"

    def from_robots(self, job: Job, listed: Sequence[str]) -> None:
        """An origin's lasting robots.txt answer: queue the sitemaps it names (or the
        conventional ``/sitemap.xml`` when it names none)."""
        if not self._enabled:
            return
        if not listed:
            self._add(origin_of(job.url) + "/sitemap.xml", job.host, 0, job.url)
            return
        for text in listed:
            url = canonical_link(text, job.url)
            if url is None:
                self._stats.record_error("sitemap_bad_url", job.host)
            elif host_of(url) != job.host:
                # Another host's sitemap would be fetched (and, with --workers, owned) by
                # whoever crawls that host, who cannot tell it is a sitemap.
                self._stats.record_error("sitemap_other_host", job.host)
            else:
                self._add(url, job.host, 0, job.url)

    def moved(self, url: str, target: str) -> None:
        """A sitemap redirected: its target is read as the sitemap."""
        known = self._known.get(url)
        if known is not None and target not in self._known:
            self._remember(target, known.owner, known.level)
            self._db.add_sitemap(target, known.owner, known.level)

    def read(self, job: Job, result: FetchResult) -> None:
        """A fetched sitemap: record what it lists and queue it."""
        known = self._known.get(job.url) or _Known(job.host, 0)
        sitemap = parse_sitemap(result.content)
        for kind in sitemap.errors:
            self._stats.record_error(kind, job.host)
        entries: list[tuple[str, str | None]] = []
        for entry in sitemap.entries:
            found = canonical_link(entry.loc, job.url)
            if found is None:
                self._stats.record_error("sitemap_bad_url", job.host)
            elif host_of(found) not in (job.host, known.owner):
                self._stats.record_error("sitemap_foreign_url", job.host)
            else:
                entries.append((found, entry.lastmod))
        first = sitemap.errors[0] if sitemap.errors else None
        self._db.read_sitemap(job.url, first, [] if sitemap.is_index else entries)
        if sitemap.is_index:
            self._index(job, known, (url for url, _ in entries))
            return
        for url, _ in entries:
            self._admitter.admit(url, job.depth + 1, job.url)

    def _index(self, job: Job, known: _Known, urls: Iterable[str]) -> None:
        if known.level + 1 > MAX_LEVEL:
            self._stats.record_error("sitemap_nesting", job.host)
            return
        for url in urls:
            self._add(url, known.owner, known.level + 1, job.url)

    def _add(self, url: str, owner: str, level: int, referrer: str) -> None:
        if url in self._known:
            return
        host = host_of(url)
        if self._per_host[host] >= MAX_SITEMAPS_PER_HOST:
            self._stats.record_error("sitemap_limit", host)
            return
        self._remember(url, owner, level)
        self._db.add_sitemap(url, owner, level)
        # Depth 0: a sitemap is no link hop; the URLs it lists are one hop from it.
        self._admitter.admit(url, 0, referrer)

    def _remember(self, url: str, owner: str, level: int) -> None:
        self._known[url] = _Known(owner, level)
        self._per_host[host_of(url)] += 1
