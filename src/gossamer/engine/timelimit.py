"""The ``--time`` limit: it covers the whole crawl, the earlier runs of a resumed one included.

Role in the data flow: the engine asks before it starts. A resumed crawl (single process in
``crawler``, the coordinator of ``--workers`` in ``workers``) whose earlier runs used the limit
up stops there: no robots.txt or page is fetched and no WARC file is opened, only the reports
are written again. With time left, the crawler sets a timer for what is left.
"""

from __future__ import annotations

import logging
from typing import Any

from gossamer.config import CrawlConfig
from gossamer.crawling.folder import save_snapshot
from gossamer.crawling.limits import remaining
from gossamer.crawling.reports import report_now
from gossamer.crawling.scope import scope_of
from gossamer.engine.resume import rebuild_stats
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB

__all__ = ["time_left", "time_used_up", "warn_no_time_left"]

log = logging.getLogger(__name__)


def time_left(limit: float | None, stats: CrawlStats) -> float | None:
    """Seconds left of the limit (0 when spent), None without one; ``stats`` carries the
    duration of the earlier runs (``elapsed_before``)."""
    return remaining(limit, stats.elapsed_before)


def warn_no_time_left(limit: float, earlier: float) -> None:
    """The one line that says why a resumed crawl fetched nothing."""
    log.warning(
        "time limit of %.0f s already spent (%.1f s in earlier runs): nothing fetched;"
        " resume with a longer --time to go on",
        limit,
        earlier,
    )


def time_used_up(
    config: CrawlConfig, db: MetadataDB, saved: dict[str, Any] | None, concurrency: int
) -> CrawlStats | None:
    """For the coordinator of ``--workers``, before any worker starts: when the earlier runs
    saved in ``db`` (``saved``, their snapshot) used the limit up, report the crawl again and
    return its statistics; None when there is time left or no earlier run."""
    if config.time_limit is None or not saved:
        return None
    stats = rebuild_stats(db, saved, concurrency)
    if time_left(config.time_limit, stats):
        return None
    warn_no_time_left(config.time_limit, stats.elapsed_before)
    report_now(config.out, stats, db, scope=scope_of(config.scope))
    save_snapshot(db, stats)
    return stats
