"""One exchange from fetch to store, inside the fault boundary of its URL.

Data flow: fetch -> **exchange** -> store (WARC, CDXJ) and the recorder (``crawl.db``, the
statistics, links to admission). Every way of running a crawl (the async engine's pipeline,
``--workers`` processes, a shared crawl's workers, the study's threads) goes through here, so
whatever bytes a server sends, the URL gets an outcome and the crawl goes on:

* an unexpected exception while fetching, archiving, parsing or recording one response is
  caught here, logged with the URL and its traceback, counted as ``internal_error``, and the
  URL gets a ``pages`` row with that error (so a resume does not ask it again for ever);
* a ``StoreError`` (full disk, lost folder) is not one URL's fault: it still ends the crawl,
  with what was written kept.

A robots.txt exchange that fails this way leaves its origin's robots.txt unavailable, as a
5xx answer does: asked again later, and in the end deferred.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable
from dataclasses import replace
from typing import TYPE_CHECKING

from gossamer.crawling.recorder import Recorder
from gossamer.errors import StoreError
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.robots import RobotsAnswer
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcLocation, WarcStore, page_row
from gossamer.store.revisits import Original

if TYPE_CHECKING:
    from gossamer.plugins.hooks import Verdict

__all__ = [
    "INTERNAL_ERROR",
    "archive",
    "fetched",
    "fetched_robots",
    "internal_error",
    "store_page",
    "store_resource",
    "store_robots",
]

log = logging.getLogger(__name__)

INTERNAL_ERROR = "internal_error"  # the error kind of a fault of ours while handling a URL


def archive(
    warc: WarcStore,
    cdxj: CdxjWriter,
    job: Job,
    result: FetchResult,
    purpose: str,
    *,
    stored: tuple[Original, str] | None = None,
) -> WarcLocation | None:
    """Write the exchange to the WARC files (with the fields ``recover`` needs) and index it;
    ``stored``: the copy a recrawl's 304 confirms (``Recorder.stored_copy``)."""
    if not result.status or result.skipped_body:
        return None
    fields = {
        "gossamer-purpose": purpose,
        "gossamer-host": job.host,
        "gossamer-depth": str(job.depth),
        "fetchTimeMs": str(round(result.elapsed * 1000)),
    }
    if job.referrer:
        fields["via"] = job.referrer
    location = warc.write(result, fields, stored)
    cdxj.add(result, location)
    return location


async def fetched(url: str, fetch: Awaitable[FetchResult]) -> FetchResult:
    """The fetch's result; a fault of ours inside it becomes an ``internal_error`` result."""
    started = time.time()
    try:
        return await fetch
    except Exception as exc:  # the URL's outcome, never the crawl's end
        return _faulted(url, started, exc)


async def fetched_robots(url: str, fetch: Awaitable[list[FetchResult]]) -> list[FetchResult]:
    """A robots.txt fetch's hops; a fault of ours inside it becomes one failed hop (the
    origin's robots.txt is then unavailable)."""
    started = time.time()
    try:
        return await fetch
    except Exception as exc:
        return [_faulted(url, started, exc)]


def _faulted(url: str, started: float, exc: Exception) -> FetchResult:
    """The result a fetch that raised stands for (call in an ``except``: logs the traceback)."""
    log.error("internal error fetching %s", url, exc_info=True)
    detail = f"{type(exc).__name__}: {exc}"[:200]
    return FetchResult(
        url=url, status=0, started_at=started, error=INTERNAL_ERROR, error_detail=detail
    )


def internal_error(
    stats: CrawlStats | None,
    db: MetadataDB,
    job: Job,
    result: FetchResult,
    *,
    location: WarcLocation | None,
    purpose: str,
) -> None:
    """Count and record a fault of ours while handling ``result`` (call in an ``except``).

    Replay passes no ``stats``: a resume recounts its figures from the rows."""
    log.error("internal error handling %s", result.url, exc_info=True)
    if stats is not None:
        stats.record_error(INTERNAL_ERROR, job.host)
    try:
        row = page_row(
            replace(result, error=INTERNAL_ERROR),
            location,
            depth=job.depth,
            referrer=job.referrer,
            host=job.host,
            purpose=purpose,
        )
        db.add_page(row)
        db.end_exchange()
    except StoreError:
        raise
    except Exception:  # the count and the log line above remain
        log.error("cannot record the internal error of %s", result.url, exc_info=True)


def store_page(
    recorder: Recorder,
    warc: WarcStore,
    cdxj: CdxjWriter,
    job: Job,
    result: FetchResult,
    *,
    stats: CrawlStats,
    db: MetadataDB,
    verdict: Verdict | None = None,
) -> bool:
    """Archive and record one page exchange; True when it was a stored page. ``verdict``:
    what the crawl's hooks answered for it, if they were run ahead (``Recorder.plugin_work``)."""
    purpose = recorder.purpose(job)
    location = None
    try:
        result = recorder.screened(job, result)  # --skip-other-languages: not archived
        location = archive(
            warc, cdxj, job, result, purpose, stored=recorder.stored_copy(job, result)
        )
        return recorder.record_page(job, result, location, verdict)
    except StoreError:
        raise
    except Exception:  # one response never ends the crawl
        internal_error(stats, db, job, result, location=location, purpose=purpose)
        return False


def store_resource(
    recorder: Recorder,
    warc: WarcStore,
    cdxj: CdxjWriter,
    job: Job,
    result: FetchResult,
    *,
    stats: CrawlStats,
    db: MetadataDB,
) -> None:
    """Archive and record one request a rendered page made (``job``: the resource's URL, its
    page's host, depth and URL as referrer)."""
    location = None
    try:
        location = archive(warc, cdxj, job, result, "resource")
        recorder.record_resource(job, result, location)
    except StoreError:
        raise
    except Exception:  # one response never ends the crawl
        internal_error(stats, db, job, result, location=location, purpose="resource")


def store_robots(
    recorder: Recorder,
    warc: WarcStore,
    cdxj: CdxjWriter,
    job: Job,
    hops: list[FetchResult],
    *,
    stats: CrawlStats,
    db: MetadataDB,
    skip: frozenset[str] = frozenset(),
) -> tuple[RobotsAnswer | None, FetchResult]:
    """Archive and record every hop of a robots.txt fetch (but those whose error is in
    ``skip``): the last lasting answer, and the final hop as it is to be judged (a copy marked
    ``internal_error``, with no status, when handling a hop failed: robots.txt unavailable)."""
    answer = None
    for hop in hops:
        if hop.error in skip:
            continue
        location = None
        try:
            location = archive(warc, cdxj, job, hop, "robots")
            answer = recorder.record_robots(job, hop, location) or answer
        except StoreError:
            raise
        except Exception:  # the origin's robots.txt counts as unavailable
            internal_error(stats, db, job, hop, location=location, purpose="robots")
            return None, replace(hops[-1], status=0, error=INTERNAL_ERROR)
    return answer, hops[-1]
