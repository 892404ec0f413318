"""Store stage, values: one fetch as a row of ``crawl.db``'s ``pages`` table.

Data flow: fetch -> pipeline -> :func:`page_row` -> ``MetadataDB.add_page``; the search side
reads the same :class:`PageRow` back (``CrawlRecords.page``) for the page-info view and the
cached copy.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from operator import attrgetter

from gossamer.fetch.result import FetchResult
from gossamer.store.warc import WarcLocation

__all__ = [
    "ANSWERS",
    "CHANGED",
    "FAILED",
    "GONE",
    "KEEPS_ROW",
    "NEW",
    "NOT_MODIFIED",
    "PAGE_COLUMNS",
    "UNCHANGED",
    "PageRow",
    "Schedule",
    "page_row",
    "page_values",
    "schedule_values",
    "sha1_hex",
]


@dataclass(frozen=True, slots=True)
class PageRow:
    """One fetched URL as recorded in ``pages``; ``length`` counts body bytes as received."""

    url: str
    url_id: str  # SHA-1 hex of url
    doc_id: str | None  # SHA-1 hex of the decoded content; None when there is none
    status: int  # 0 when the fetch failed below HTTP
    content_type: str | None
    length: int | None
    fetched_at: float
    elapsed: float
    depth: int
    referrer: str | None
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    error: str | None
    host: str
    purpose: str = "page"  # "page", "robots", "sitemap", or "resource" (a rendered page's)
    render: str | None = None  # how a browser rendered the page, or "hint"; see schema.py


# What a page's last request answered (``schedule.answer``; ``crawling/recrawl`` judges it).
NEW = "new"  # a first fetch
NOT_MODIFIED = "not_modified"  # 304: the stored copy still holds
UNCHANGED = "unchanged"  # 200 with the stored content (a server that ignores conditions)
CHANGED = "changed"  # new content (or now a redirect)
GONE = "gone"  # 404 or 410
FAILED = "failed"  # no usable answer: the stored copy stays
ANSWERS = (NEW, NOT_MODIFIED, UNCHANGED, CHANGED, GONE, FAILED)
# The answers that leave the page's ``pages`` row as it was: the visit is in ``schedule`` only.
KEEPS_ROW = (NOT_MODIFIED, UNCHANGED, FAILED)


@dataclass(frozen=True, slots=True)
class Schedule:
    """One ``schedule`` row of ``crawl.db``: a page's validators and when it is due again
    (``crawling.recrawl`` writes them; ``migrate.SCHEDULE_TABLE`` says what each column is)."""

    url: str
    etag: str | None
    last_modified: str | None
    checked_at: float
    changed_at: float
    interval: float
    due_at: float
    answer: str
    received: int = 0  # body bytes the last request brought
    wanted_at: float | None = None


schedule_values = attrgetter(*(f.name for f in fields(Schedule)))

# Named columns, not *, so a reader keeps working on a file with columns added later.
PAGE_COLUMNS = ", ".join(f.name for f in fields(PageRow))
# attrgetter builds the row tuple in C; dataclasses.astuple deep-copies every field.
page_values = attrgetter(*(f.name for f in fields(PageRow)))


def sha1_hex(data: str | bytes) -> str:
    return hashlib.sha1(data.encode() if isinstance(data, str) else data).hexdigest()


def page_row(
    result: FetchResult,
    location: WarcLocation | None,
    *,
    depth: int,
    referrer: str | None,
    host: str,
    purpose: str = "page",
    render: str | None = None,
) -> PageRow:
    """The ``pages`` row for a fetch; ``location`` is None when nothing was archived."""
    return PageRow(
        url=result.url,
        url_id=sha1_hex(result.url),
        doc_id=_doc_id(result, location),
        status=result.status,
        content_type=_text(result.content_type) or None,
        length=len(result.body) if result.status else None,
        fetched_at=result.started_at,
        elapsed=result.elapsed,
        depth=depth,
        referrer=referrer,
        warc_file=location.filename if location else None,
        warc_offset=location.offset if location else None,
        warc_length=location.length if location else None,
        error=result.error or None,
        host=host,
        purpose=purpose,
        render=render or result.render or None,
    )


def _text(value: str) -> str:
    """Text SQLite can hold: in a header value the HTTP client decoded with surrogate
    escapes, the bytes that are not UTF-8 are spelt ``\\xe9``. One such value would
    otherwise fail the whole batch of rows it was written with (the WARC keeps the bytes)."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _doc_id(result: FetchResult, location: WarcLocation | None) -> str | None:
    """SHA-1 hex of the decoded content; the WARC writer's digest of the body when the content
    is the body itself (no Content-Encoding), so a page is hashed once."""
    if not result.content:
        return None
    if location is not None and location.sha1 and result.content is result.body:
        return location.sha1.hex()
    return sha1_hex(result.content)
