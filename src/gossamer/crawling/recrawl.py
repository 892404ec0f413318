"""Recrawl (issue 31): what a revisit's answer means, and when a page is due again.

Data flow: the backlog hands a page a recrawl wants again to the crawl loop as a revisit job
carrying :func:`conditions` (its stored validators as If-None-Match / If-Modified-Since) ->
fetch -> the recorder (``crawling/revisits.py``) asks :func:`answer_of` what the answer was,
and writes the page's next :class:`Schedule` row (:func:`next_schedule`) with its ``pages``
row, in the same exchange of ``crawl.db``.

The schedule is adaptive, as Nutch's and StormCrawler's are: the interval is halved when a
page changed and grows by half when it did not, always within ``[min_interval,
max_interval]`` (``[recrawl]`` in the config); a page that is gone is asked again at the
longest interval, in case it comes back. A seed may have an interval of its own.
"""

from __future__ import annotations

from gossamer.config import RecrawlConfig
from gossamer.fetch import FetchResult
from gossamer.store.rows import (
    ANSWERS,
    CHANGED,
    FAILED,
    GONE,
    NEW,
    NOT_MODIFIED,
    UNCHANGED,
    Schedule,
)

__all__ = [
    "ANSWERS",
    "CHANGED",
    "FAILED",
    "GONE",
    "NEW",
    "NOT_MODIFIED",
    "UNCHANGED",
    "Schedule",
    "answer_of",
    "conditions",
    "next_schedule",
]


_GROW = 1.5  # an unchanged page's interval grows by half
_SHRINK = 0.5  # a changed page's is halved


def conditions(etag: str | None, last_modified: str | None) -> tuple[tuple[str, str], ...]:
    """The conditional request headers a stored page's validators give (RFC 9110 13.1)."""
    found: list[tuple[str, str]] = []
    if etag:
        found.append(("If-None-Match", etag))
    if last_modified:
        found.append(("If-Modified-Since", last_modified))
    return tuple(found)


def answer_of(
    result: FetchResult, stored_doc: str | None, doc_id: str | None, stored_status: int = 0
) -> str:
    """What a revisit's ``result`` says of a page whose stored content has ``stored_doc``
    (SHA-1 of the decoded content) and status ``stored_status`` (0: not known); ``doc_id``:
    the same of the new content. A redirect answered with the same status as before counts
    as unchanged (the target it names is queued again, and known)."""
    status = result.status
    if status == 304:
        return NOT_MODIFIED
    if status in (404, 410):
        return GONE
    if 200 <= status < 300 and not result.error and not result.skipped_body:
        return UNCHANGED if doc_id is not None and doc_id == stored_doc else CHANGED
    if 300 <= status < 400:
        return UNCHANGED if status == stored_status else CHANGED  # else moved since
    return FAILED


def next_schedule(
    url: str,
    result: FetchResult,
    answer: str,
    before: Schedule | None,
    config: RecrawlConfig,
    *,
    seed: bool = False,
) -> Schedule:
    """The page's schedule row after ``result`` (its ``answer``); ``before``: the old row."""
    now = result.started_at
    if before is None or answer == NEW:
        interval = (
            config.seed_interval if seed and config.seed_interval else config.initial_interval
        )
    elif answer == CHANGED:
        interval = before.interval * _SHRINK
    elif answer in (NOT_MODIFIED, UNCHANGED):
        interval = before.interval * _GROW
    elif answer == GONE:
        interval = config.max_interval
    else:  # failed: as it was
        interval = before.interval
    interval = min(config.max_interval, max(config.min_interval, interval))
    etag, modified = _validators(result, answer, before)
    changed_at = now if before is None or answer in (NEW, CHANGED, GONE) else before.changed_at
    return Schedule(
        url, etag, modified, now, changed_at, interval, now + interval, answer, len(result.body)
    )


def _validators(
    result: FetchResult, answer: str, before: Schedule | None
) -> tuple[str | None, str | None]:
    """The validators of the content the page's row holds after this answer."""
    if answer in (NEW, CHANGED) and 200 <= result.status < 300:
        return _header(result, "ETag"), _header(result, "Last-Modified")
    if answer in (NOT_MODIFIED, UNCHANGED, FAILED) and before is not None:
        # A 304 may send the validators again (updated); otherwise the stored ones hold.
        if answer == NOT_MODIFIED:
            return (
                _header(result, "ETag") or before.etag,
                _header(result, "Last-Modified") or before.last_modified,
            )
        return before.etag, before.last_modified
    return None, None


def _header(result: FetchResult, name: str) -> str | None:
    value = result.header(name)
    # A validator is sent back as it came; one that is not plain ASCII text is no validator.
    if not value or not value.isascii() or not value.isprintable() or len(value) > 512:
        return None
    return value
