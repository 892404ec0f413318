"""The reports of a crawl folder, written now, and how often a running crawl rewrites them.

Data flow: the statistics and ``crawl.db``'s rows -> **reports** -> ``DIR/reports/``
(``store.write_reports``: stats, domains, lists; ``monitor.report``: report.html) and the
domain registry in ``crawl.db``. Every engine writes its final reports through
:func:`report_now`; the local engine's periodic ones run on a thread of their own
(``engine/reporter.py``), the ``--workers`` coordinator's inline, both spaced by
:func:`report_period`.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from gossamer.crawling.revisits import end_recrawl
from gossamer.crawling.scope import Scope
from gossamer.monitor.report import write_report
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB, write_reports

__all__ = ["REPORT_SHARE", "report_now", "report_period"]

REPORT_SHARE = 0.1  # of the crawl's time, at most, spent rewriting the periodic reports


def report_period(interval: float, took: float) -> float:
    """Seconds until the next periodic report, after one that took ``took`` seconds: the
    configured ``interval``, or longer when rewriting the reports took more than
    ``REPORT_SHARE`` of the time between them."""
    return max(interval, took * (1 - REPORT_SHARE) / REPORT_SHARE)


def report_now(
    out: Path,
    stats: CrawlStats,
    db: MetadataDB,
    *,
    final: bool = False,
    visiting: Collection[str] = (),
    scope: Scope | None = None,
) -> None:
    """Write the reports on this thread, and the domain registry in ``crawl.db`` with the
    same figures; ``visiting``: the hosts with requests in flight or handed out (none once a
    crawl has ended). ``final``: the crawl has ended, so ``report.html`` is written too.
    ``scope``: the crawl's scope rules, so the links they refused are listed with the rule."""
    db.put_domains(write_reports(out, stats, db, visiting=visiting, scope=scope))
    if final:
        end_recrawl(db)
        write_report(out, stats)
