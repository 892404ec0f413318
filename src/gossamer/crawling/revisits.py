"""The recorder's part of a recrawl: what a page's answer changes in ``crawl.db``.

Data flow: a page exchange, live or replayed from the WARC files -> the recorder ->
**revisits** (the page's schedule row, ``crawling.recrawl``) -> whether the ``pages`` row is
replaced. The rule, the same live and in replay so a resume after ``kill -9`` rebuilds what
the live crawl recorded:

* a first fetch writes its row as every fetch always did, and a ``new`` schedule row when it
  brought a page or a redirect (an error or a 404 is no page to revisit);
* a revisit that brought new content (``changed``), or found the page ``gone`` (404/410),
  replaces the row and drops the page's old out-links (a changed page's new ones follow);
* a revisit answered ``not_modified`` (304), ``unchanged`` (the same content again) or
  ``failed`` (no usable answer) leaves the row, and so the stored copy and the index, as
  they were: only the schedule row records the visit;
* a 429 or 503 that the crawl asks again after the wait it names (``frontier/backoff``)
  records nothing of a revisit: the page stays wanted; once the retries are spent it is
  ``failed`` like any unusable answer, so a page that keeps refusing is asked again only
  when due, not in a loop.

A recrawl is under way from ``recrawl_since`` (meta) until ``recrawl_done`` names the same
start; the answers of that recrawl are counted from the schedule rows it wrote
(``CrawlReads.recrawl_counts``), so they survive a crash without a snapshot.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from gossamer.config import RecrawlConfig
from gossamer.crawling.recrawl import NEW, NOT_MODIFIED, answer_of, next_schedule
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.frontier.backoff import answer_of as backoff_answer
from gossamer.frontier.backoff import retried
from gossamer.frontier.hosts import Revisit
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.store.records import MemberFiles, RecordError, stored_original
from gossamer.store.revisits import Original
from gossamer.store.rows import KEEPS_ROW, PageRow, Schedule

__all__ = [
    "RECRAWL_DONE",
    "RECRAWL_MODE",
    "RECRAWL_SINCE",
    "Change",
    "Revisits",
    "begin_recrawl",
    "end_recrawl",
    "lastmod_seconds",
    "recrawl_since",
    "want_recrawl",
]

log = logging.getLogger(__name__)

RECRAWL_SINCE = "recrawl_since"  # meta: wall-clock start of the latest recrawl
RECRAWL_MODE = "recrawl_mode"  # "all" or "due"
RECRAWL_DONE = "recrawl_done"  # the start of the last recrawl that ended
RECRAWL_MARKED = "recrawl_marked"  # the start of the last recrawl whose pages were marked
_REOPEN_AFTER = 10_000  # stored copies read before the open WARC files are closed


def begin_recrawl(db: MetadataDB, mode: str, now: float) -> None:
    """Start a recrawl of the folder (``--recrawl all|due``); its pages are marked wanted by
    the next :func:`want_recrawl`, which every way into a folder runs after its replay."""
    db.set_meta(RECRAWL_MODE, mode)
    db.set_meta(RECRAWL_SINCE, repr(now))


def want_recrawl(db: MetadataDB) -> int:
    """Mark the pages the recrawl under way asks again, once per recrawl (a crash between
    the start and the marking marks them on the next way in); how many were marked."""
    since = db.get_meta(RECRAWL_SINCE)
    if since is None or recrawl_since(db) is None or db.get_meta(RECRAWL_MARKED) == since:
        return 0
    every = db.get_meta(RECRAWL_MODE) != "due"
    start = float(since)
    due = () if every else _sitemap_due(db)
    marked = db.want_again(start, every, due)
    db.set_meta(RECRAWL_MARKED, since)
    log.warning("recrawl: %d pages to ask again (%s)", marked, "all" if every else "due")
    return marked


def end_recrawl(db: MetadataDB) -> None:
    """At the end of a run: the recrawl under way is over once it wants no page any more."""
    since = db.get_meta(RECRAWL_SINCE)
    if since is None or recrawl_since(db) is None:
        return
    db.flush()
    if not db.wanted_count():
        db.set_meta(RECRAWL_DONE, since)


def _sitemap_due(db: MetadataDB) -> list[str]:
    """Pages a sitemap says changed (``<lastmod>``) after their last fetch."""
    return [
        url
        for url, lastmod, checked_at in db.sitemap_lastmods()
        if (when := lastmod_seconds(lastmod)) is not None and when > checked_at
    ]


def lastmod_seconds(text: str) -> float | None:
    """A sitemap ``<lastmod>`` (W3C datetime: a year, a month, a day, or a time with zone)
    as epoch seconds; None when it is none of those. A time without a zone is taken as UTC."""
    value = text.strip()
    if len(value) == 4 and value.isdigit():
        value += "-01-01"
    elif len(value) == 7 and value[:4].isdigit() and value[4] == "-":
        value += "-01"
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def recrawl_since(db: MetadataDB) -> float | None:
    """The start of the recrawl under way in this folder; None when there is none."""
    since = db.get_meta(RECRAWL_SINCE)
    if since is None or db.get_meta(RECRAWL_DONE) == since:
        return None
    return float(since)


@dataclass(frozen=True, slots=True)
class Change:
    """What one page exchange is to the recrawl schedule."""

    answer: str | None  # None: no answer yet (429/503, asked again): no schedule row
    revisit: bool  # the page had a final answer before (a schedule row)

    @property
    def keeps_row(self) -> bool:
        """Whether the page's ``pages`` row (its stored copy) stays as it was."""
        return self.revisit and (self.answer is None or self.answer in KEEPS_ROW)


class Revisits:
    """Judges page exchanges against the stored copy and writes their schedule rows."""

    def __init__(
        self, db: MetadataDB, stats: CrawlStats, config: RecrawlConfig, max_retries: int = 3
    ) -> None:
        self._max_retries = max_retries
        self._db = db
        self._stats = stats
        self._config = config
        self._active = recrawl_since(db) is not None
        # The last page's rows: a 304's are asked for its revisit record, then to judge it.
        self._last: tuple[str, tuple[Schedule | None, PageRow | None]] | None = None
        self._files: MemberFiles | None = None  # the WARC files stored copies are read from
        self._files_read = 0

    def _visit(self, url: str) -> tuple[Schedule | None, PageRow | None]:
        last = self._last
        if last is None or last[0] != url:
            last = self._last = (url, self._db.last_visit(url))
        return last[1]

    def stored_copy(self, job: Job, result: FetchResult) -> tuple[Original, str] | None:
        """For a 304, the stored copy it confirms (its record and payload digest), if it can
        be read; the WARC writer archives the 304 as a revisit record pointing at it. A
        shared crawl's job names it when another worker's folder holds it (no location)."""
        if result.status != 304:
            return None
        _, row = self._visit(result.url)
        if row is not None and row.warc_file is not None and row.warc_offset is not None:
            files = self._files
            if files is None or self._files_read > _REOPEN_AFTER:  # (new files keep coming)
                if files is not None:
                    files.close()
                files = self._files = MemberFiles(self._db.path.parent / "warc")
                self._files_read = 0
            self._files_read += 1
            try:
                return stored_original(files, row.warc_file, row.warc_offset, row.warc_length or 0)
            except (RecordError, OSError) as exc:
                log.warning("304 for %s: its stored copy is unreadable (%s)", result.url, exc)
        refers = job.revisit.refers if job.revisit else None
        if refers is None:
            return None
        record_id, url, date, digest = refers
        return Original(record_id, url, date, "", 0, 0), digest

    def judge(self, job: Job, result: FetchResult, row: PageRow) -> Change:
        """Count the exchange's answer and write the page's schedule row (see the module)."""
        told = job.revisit
        looked = told is not None or self._active or result.status == 304
        before, stored = self._visit(result.url) if looked else (None, None)
        self._last = None  # rows of this page are about to change
        if before is None and told is not None and told.interval > 0:
            before = _told(result.url, told)  # a shared crawl's page from another folder
        revisit = before is not None
        answered = 200 <= result.status < 400  # (never asked again: the rule is not needed)
        again = not answered and retried(
            backoff_answer(result, result.started_at), job.retries, self._max_retries
        )
        if again or (not revisit and not answered):
            # Asked again after the wait it names (429, 503: the crawl's retry rule); or a
            # first answer with no page in it (an error, a 404): nothing to revisit yet.
            return Change(None, revisit)
        stored_status = 0
        if stored is not None:
            stored_doc, stored_length = stored.doc_id, stored.length or 0
            stored_status = stored.status
        elif told is not None:
            stored_doc, stored_length = told.doc_id, told.length
        else:
            stored_doc, stored_length = None, 0
        answer = answer_of(result, stored_doc, row.doc_id, stored_status) if revisit else NEW
        if revisit or self._active:
            counts = self._stats.recrawl
            counts[answer] += 1
            if answer == NOT_MODIFIED:
                counts["bytes_saved"] += stored_length
            if revisit:  # (as ``CrawlReads.recrawl_counts`` recounts them from the rows)
                counts["bytes"] += len(result.body)
                kept = answer in KEEPS_ROW
                counts["bytes_full"] += stored_length if kept else len(result.body)
        schedule = next_schedule(
            result.url, result, answer, before, self._config, seed=job.depth == 0
        )
        self._db.add_schedule(schedule)
        return Change(answer, revisit)


def _told(url: str, told: Revisit) -> Schedule:
    """The schedule row a shared crawl's revisit job carries, for a worker whose folder
    lacks the page: its interval, last change and validators (from its conditions)."""
    headers = dict(told.conditions)
    return Schedule(
        url,
        headers.get("If-None-Match"),
        headers.get("If-Modified-Since"),
        told.changed_at,
        told.changed_at,
        told.interval,
        told.changed_at + told.interval,
        NEW,
    )
