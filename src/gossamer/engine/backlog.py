"""The crawl's frontier, built from the politeness settings, with its disk side in crawl.db.

Data flow: config -> **frontier** (in memory) <-> the ``urls`` table of ``crawl.db`` (spilled
jobs). The live crawl, resume and the replay of ``recover`` all build their frontier here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.crawling.limits import runs_to_end
from gossamer.crawling.recrawl import conditions
from gossamer.frontier import Backlog, Frontier, Job
from gossamer.frontier.frontier import WINDOW
from gossamer.frontier.hosts import Revisit
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB

__all__ = ["DatabaseBacklog", "build_frontier", "crawl_frontier"]


def build_frontier(
    politeness: PolitenessConfig,
    stats: CrawlStats,
    *,
    backlog: Backlog | None = None,
    window: int = WINDOW,
    sites: SiteRules | None = None,
    to_the_end: bool = False,
) -> Frontier:
    """A frontier with the crawl's politeness settings (live crawl, resume and recover),
    and its ``[[site]]`` tables' delay and in-flight limit per host; ``to_the_end``: the
    crawl has no page target or time limit (``crawling/limits.runs_to_end``)."""
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
        sites=sites,
        to_the_end=to_the_end,
    )


def crawl_frontier(config: CrawlConfig, stats: CrawlStats, backlog: Backlog) -> Frontier:
    """The frontier a crawl fetches from (a new crawl's, a resume's): its politeness, its
    ``[[site]]`` tables, and the order its limits call for (``crawling/limits.runs_to_end``)."""
    return build_frontier(
        config.politeness,
        stats,
        backlog=backlog,
        sites=SiteRules.of(config),
        to_the_end=runs_to_end(config.max_pages, config.time_limit),
    )


class DatabaseBacklog:
    """The frontier's disk side: spilled jobs live in the ``urls`` table of ``crawl.db``.

    A page a recrawl wants again comes back as a revisit, with its conditional headers.
    A spilled job loses its redirect hop count, which matters only for the few URLs that
    never leave the memory window (fresh redirect targets). A seed's fallbacks (its
    ``http://`` form after ``https://``) are not in the table either: ``fallbacks`` gives them
    back to a depth-0 job whose URL is a seed form, so a seed queued when a crawl was stopped
    or killed still falls back on resume.
    """

    def __init__(
        self, db: MetadataDB, fallbacks: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        self._db = db
        self._fallbacks = fallbacks or {}

    def load(self, host: str, after: int, limit: int) -> list[tuple[int, Job]]:
        return [
            (
                row_id,
                Job(
                    url=url,
                    host=host,
                    depth=depth,
                    referrer=referrer,
                    fallbacks=self._fallbacks.get(url, ()) if depth == 0 else (),
                    revisit=Revisit(conditions(etag, modified)) if wanted else None,
                ),
            )
            for row_id, url, depth, referrer, etag, modified, wanted in self._db.backlog(
                host, after, limit
            )
        ]


def seed_fallbacks(seeds: Iterable[Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Each form of each seed -> the forms still to try after it, for seeds with several."""
    found: dict[str, tuple[str, ...]] = {}
    for forms in seeds:
        for i, url in enumerate(forms[:-1]):
            found.setdefault(url, tuple(forms[i + 1 :]))
    return found
