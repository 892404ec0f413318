"""Bringing ``crawl.db`` level with the WARC files: the replay half of resume and recover.

Data flow: the crawl's WARC files (store) -> **replay** -> the recorder (the same recording
code a live crawl uses, with no archive) -> ``crawl.db`` and ``index.cdxj``. Nothing is
fetched.

The WARC files are the source of truth, and the rules are:

* only the crawl's own files are read (see ``gossamer.store.warcscan.crawl_files``); foreign
  files in the folder are reported once and never read or changed;
* damage is skipped, reported with file, offset and records affected, and left in place;
* each URL's row carries its last response record (WARC-Date, then file order, then offset):
  a record is applied only when it is newer than the one the row points at, so a 429 that was
  retried into a 200 can never overwrite the 200;
* a row pointing at a record that is gone (file deleted, damaged, torn tail cut) is removed
  and its URL queued again, so the resumed crawl fetches it;
* a recrawl's visit that left the row as it was (a 304, the same content again, a failure)
  is recorded in the page's ``schedule`` row only: a record no later than that visit is
  not applied again;
* a revisit record (an exact duplicate) is replayed as the response it stands for, with the
  payload of its original, so the page's links are admitted as the live crawl admitted them;
  one whose original cannot be read counts as an unreadable record.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gossamer.crawling.exchange import internal_error
from gossamer.crawling.recorder import Recorder
from gossamer.errors import StoreError
from gossamer.fetch import FetchResult
from gossamer.fetch.sniff import RESOURCE_HEADER, computed_type
from gossamer.frontier import Job
from gossamer.store import CdxjWriter, MetadataDB, WarcLocation
from gossamer.store.cdxj import prune_cdxj
from gossamer.store.records import (
    EPOCH,
    MAX_DECODED,
    ORIGINAL_GONE,
    ArchivedResponse,
    FetchMember,
    MemberFiles,
    RecordError,
    kept_visit_covers,
    metadata_fields,
    original_payload,
    parse_response,
    warc_time,
)
from gossamer.store.warc import DOM_PREFIX
from gossamer.store.warcscan import Damage, Member, crawl_files, order_key, scan
from gossamer.urls import as_host

__all__ = ["DamageReport", "Reconciliation", "reconcile"]

log = logging.getLogger(__name__)

_RESPONSES = frozenset({"response", "revisit"})
_BUFFERED = 1000  # replayed rows tracked in memory before they are flushed to crawl.db

# When a record was made, for "last record wins": (WARC-Date in microseconds, file order,
# offset). The microseconds come from the same rounding the writer used for WARC-Date.
_Key = tuple[int, tuple[str, int, str], int]


@dataclass(frozen=True, slots=True)
class DamageReport:
    """A stretch of an own WARC file that holds no usable record; left on disk as it is."""

    filename: str
    offset: int
    size: int
    reason: str  # "corrupt", "truncated", "partial record", "unreadable record"
    records: int  # records it held, as far as can be told

    def describe(self) -> str:
        return (
            f"{self.filename} at offset {self.offset}: {self.size} bytes {self.reason},"
            f" about {self.records} record(s) affected; skipped, left in place"
        )


@dataclass(slots=True)
class Reconciliation:
    """What bringing ``crawl.db`` level with the WARC files found and did."""

    records: int = 0  # response records read from the crawl's own files
    replayed: int = 0  # of those, applied to crawl.db
    superseded: int = 0  # older than the record their URL's row points at: not applied
    requeued: list[str] = field(default_factory=list)  # URLs whose record is gone
    dropped: int = 0  # rows removed (requeued pages and robots.txt rows)
    damage: list[DamageReport] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # files not written by this crawl
    unreadable: list[str] = field(default_factory=list)  # files that could not be read
    first: float | None = None  # WARC-Date of the earliest response record (epoch seconds)
    last: float | None = None  # and of the latest

    @property
    def span(self) -> float:
        """Seconds from the first response record to the last."""
        return self.last - self.first if self.first is not None and self.last is not None else 0.0


@dataclass(frozen=True, slots=True)
class _Pending:
    """A response record to apply, waiting for the metadata record written after it."""

    filename: str
    member: Member
    key: _Key
    record_id: str
    dom: tuple[str, bytes] | None = None  # a rendered page's: how it ended, and its DOM


def reconcile(
    folder: Path,
    db: MetadataDB,
    recorder: Recorder,
    cdxj: CdxjWriter,
    *,
    reindex: bool = False,
    max_decoded: int = MAX_DECODED,
) -> Reconciliation:
    """Make ``crawl.db`` agree with the WARC files in ``folder``; see the module docstring.

    ``reindex`` writes a CDXJ line for every record read (``recover`` rebuilds the index);
    otherwise only replayed records get one, and lines of records that are gone are dropped.
    ``max_decoded`` caps a decoded body, as the crawl's ``fetch.max_decoded`` did.
    """
    files = crawl_files(folder, db.recorded_files())
    originals = MemberFiles(folder)  # where revisit records find their originals
    replayer = _Replayer(db, recorder, cdxj, reindex, max_decoded, fetch=originals.read)
    replayer.outcome.foreign = [path.name for path in files.foreign]
    try:
        for path in files.ours:
            replayer.read_file(path)
    finally:
        originals.close()
    replayer.finish({path.name for path in files.ours})
    if not reindex:
        replayer.prune_indexes(cdxj, folder.parent)
    _report(replayer.outcome)
    return replayer.outcome


class _Replayer:
    def __init__(
        self,
        db: MetadataDB,
        recorder: Recorder,
        cdxj: CdxjWriter,
        reindex: bool,
        cap: int,
        *,
        fetch: FetchMember,
    ) -> None:
        self.outcome = Reconciliation()
        self._db = db
        self._recorder = recorder
        self._cdxj = cdxj
        self._reindex = reindex
        self._cap = cap
        self._buffered: dict[str, _Key] = {}  # rows replayed and perhaps not yet committed
        self._stale: list[tuple[str, str, int]] = []  # rows pointing at no usable record
        self._gone: dict[str, list[tuple[int, int]]] = {}  # file -> stretches without records
        self._dropped: set[tuple[str, str, int]] = set()
        self._fetch = fetch

    def read_file(self, path: Path) -> None:
        name = path.name
        rows = self._db.recorded_records(name)
        matched: set[int] = set()
        pending: _Pending | None = None
        try:
            for item in scan(path):
                if isinstance(item, Damage):
                    self._damaged(name, item.offset, item.end, item.reason, item.records)
                    continue
                kind = item.headers.get("warc-type")
                if kind in _RESPONSES:
                    self._settle(pending, {})
                    pending = self._response(name, item, rows, matched)
                elif kind == "resource" and pending is not None and _describes(item, pending):
                    dom = _dom_of(item)  # (a screenshot's record is passed over)
                    pending = pending if dom is None else replace(pending, dom=dom)
                elif kind == "metadata" and _describes(item, pending):
                    self._settle(pending, metadata_fields(item.data))
                    pending = None
        except OSError as exc:
            # Its rows are left alone: the records may well be there, only unreadable now.
            log.warning("cannot read WARC file %s (%s): skipped", name, exc.strerror or exc)
            self.outcome.unreadable.append(name)
            self._settle(pending, {})
            return
        self._settle(pending, {})
        self._stale.extend(
            (url, name, offset) for offset, (url, _) in rows.items() if offset not in matched
        )

    def _response(
        self, name: str, member: Member, rows: dict[int, tuple[str, int]], matched: set[int]
    ) -> _Pending | None:
        headers = member.headers
        url = headers.get("warc-target-uri", "")
        when = _usec(warc_time(headers.get("warc-date", "")))
        self._saw(when)
        key: _Key = (when, order_key(name), member.offset)
        if rows.get(member.offset) == (url, member.length):
            matched.add(member.offset)
            self._index(name, member)
            return None
        current = self._buffered.get(url) or self._current(url)
        if (current is not None and current >= key) or self._checked_since(url, when):
            self.outcome.superseded += 1
            self._index(name, member)
            return None
        return _Pending(name, member, key, headers.get("warc-record-id", ""))

    def _checked_since(self, url: str, when: int) -> bool:
        """Whether a recrawl recorded its visit to ``url`` at or after ``when`` (microseconds):
        a 304, the same content again or a failure leaves the page's row as it was and is
        recorded in its schedule row only (``crawling/revisits.py``)."""
        schedule = self._db.schedule(url)
        return schedule is not None and kept_visit_covers(
            schedule.answer, schedule.checked_at, when
        )

    def _current(self, url: str) -> _Key | None:
        target = self._db.page_target(url)
        if target is None:
            return None
        fetched_at, name, offset = target
        when = _usec(datetime.fromtimestamp(fetched_at, tz=UTC))
        return (when, order_key(name or ""), -1 if offset is None else offset)

    def _settle(self, pending: _Pending | None, fields: dict[str, str]) -> None:
        """Apply a response record (with its metadata fields) through the recorder."""
        if pending is None:
            return
        member = pending.member
        exchange = self._exchange(pending.filename, member, fields)
        if exchange is None:
            return
        job, result, location = exchange
        if pending.dom is not None:
            result = replace(result, render=pending.dom[0], rendered=pending.dom[1])
        self._cdxj.add(result, location)
        if not job.robots:
            # The URL's own "discovered" row may have been lost with the last batch.
            self._db.add_discovered([(job.url, job.host, job.depth, job.referrer)])
        try:
            if job.robots:
                self._recorder.record_robots(job, result, location)
            elif fields.get("gossamer-purpose") == "resource":  # a rendered page's request
                self._recorder.record_resource(job, result, location)
            else:
                self._recorder.record_page(job, result, location)
        except StoreError:
            raise
        except Exception:  # as live: one record never stops a resume
            purpose = "robots" if job.robots else self._recorder.purpose(job)
            internal_error(None, self._db, job, result, location=location, purpose=purpose)
        self.outcome.replayed += 1
        self._buffered[job.url] = pending.key
        if len(self._buffered) >= _BUFFERED:
            self._db.flush()
            self._buffered.clear()

    def _index(self, name: str, member: Member) -> None:
        if self._reindex and (exchange := self._exchange(name, member, {})) is not None:
            self._cdxj.add(exchange[1], exchange[2])

    def _exchange(
        self, name: str, member: Member, fields: dict[str, str]
    ) -> tuple[Job, FetchResult, WarcLocation] | None:
        revisit = member.headers.get("warc-type") == "revisit"
        try:
            payload = original_payload(member.headers, self._fetch) if revisit else None
            record = parse_response(member.data, self._cap, payload)
        except RecordError as exc:
            end = member.offset + member.length
            if exc.problem == ORIGINAL_GONE:
                # The revisit is whole; the record it points at is not: not this file's
                # damage, but the URL has no body any more and is fetched again.
                log.warning(
                    "revisit in %s at %d has lost its original: %s", name, member.offset, exc
                )
                self._gone.setdefault(name, []).append((member.offset, end))
                return None
            log.debug("unreadable record in %s at %d: %s", name, member.offset, exc)
            self._damaged(name, member.offset, end, "unreadable record")
            return None
        millis = fields.get("fetchTimeMs", "")
        result = _result(record, int(millis) / 1000 if millis.isdigit() else 0.0)
        digest = member.headers.get("warc-payload-digest", "")
        location = WarcLocation(name, member.offset, member.length, digest, revisit)
        return _job(result, fields), result, location

    def _damaged(self, name: str, offset: int, end: int, reason: str, records: int = 1) -> None:
        report = DamageReport(name, offset, end - offset, reason, records)
        log.warning("damaged WARC data in %s", report.describe())
        self.outcome.damage.append(report)
        self._gone.setdefault(name, []).append((offset, end))

    def _saw(self, when: int) -> None:
        seconds = when / 1_000_000
        outcome = self.outcome
        outcome.records += 1
        outcome.first = seconds if outcome.first is None else min(outcome.first, seconds)
        outcome.last = seconds if outcome.last is None else max(outcome.last, seconds)

    def finish(self, ours: set[str]) -> None:
        """Remove the rows left pointing at nothing; queue their URLs again."""
        db = self._db
        for name in sorted(db.recorded_files() - ours - set(self.outcome.unreadable)):
            # A deleted file, or one that is not the crawl's own: none of its rows holds.
            rows = db.recorded_records(name)
            self._stale.extend((url, name, offset) for offset, (url, _) in rows.items())
            self._gone[name] = [(0, 1 << 62)]
        dropped = db.drop_pages(self._stale)
        self._dropped = set(self._stale)
        requeue = [row[:4] for row in dropped if row[4] != "robots"]
        db.add_discovered(requeue, spilled=True)
        db.flush()
        self.outcome.dropped = len(dropped)
        self.outcome.requeued = [row[0] for row in requeue]

    def prune_indexes(self, cdxj: CdxjWriter, out: Path) -> None:
        """Drop the CDXJ lines of records that are gone (their rows were removed above)."""
        if not self._gone and not self._dropped:
            return
        cdxj.prune(self._keeps)
        for path in sorted(out.glob("index*.cdxj")):
            if path != cdxj.path:
                prune_cdxj(path, self._keeps)

    def _keeps(self, filename: str, offset: int, url: str) -> bool:
        if (url, filename, offset) in self._dropped:
            return False
        return not any(start <= offset < end for start, end in self._gone.get(filename, ()))


def _report(outcome: Reconciliation) -> None:
    if outcome.foreign:
        log.warning(
            "ignoring %d WARC file(s) not written by this crawl (left unchanged): %s",
            len(outcome.foreign),
            ", ".join(outcome.foreign),
        )
    if outcome.dropped:
        log.warning(
            "%d row(s) of crawl.db pointed at WARC records that are gone; removed, and %d"
            " URL(s) queued again: %s",
            outcome.dropped,
            len(outcome.requeued),
            " ".join(outcome.requeued[:5]),
        )


def _dom_of(resource: Member) -> tuple[str, bytes] | None:
    """A rendered page's DOM record: how the rendering ended, and the DOM."""
    headers = resource.headers
    if not headers.get("warc-target-uri", "").startswith(DOM_PREFIX):
        return None
    _, _, block = resource.data.partition(b"\r\n\r\n")
    declared = headers.get("content-length", "")
    dom = block[: int(declared)] if declared.isdigit() else block
    return headers.get("warc-gossamer-render", "rendered"), dom


def _describes(metadata: Member, pending: _Pending | None) -> bool:
    """Whether a metadata (or DOM) record is the one written for the pending response."""
    return pending is not None and metadata.headers.get("warc-concurrent-to") == pending.record_id


def _job(result: FetchResult, fields: dict[str, str]) -> Job:
    depth = fields.get("gossamer-depth", "0")
    host = fields.get("gossamer-host") or result.url
    # Crawls before schema 2 wrote the origin here; the politeness key is the host name.
    with contextlib.suppress(ValueError):
        host = as_host(host)
    return Job(
        url=result.url,
        host=host,
        depth=int(depth) if depth.isdigit() else 0,
        referrer=fields.get("via") or None,
        robots=fields.get("gossamer-purpose") == "robots",
    )


def _computed(record: ArchivedResponse) -> str:
    """The type the live crawl recorded: a 2xx body's sniffed as the fetcher sniffs it."""
    if not 200 <= record.status < 300 or not record.content:
        return record.content_type
    options = (record.header("X-Content-Type-Options") or "").strip().lower()
    head = record.content[:RESOURCE_HEADER]
    return computed_type(record.content_type, head, no_sniff=options == "nosniff")


def _result(record: ArchivedResponse, elapsed: float) -> FetchResult:
    """The fetch result an archived response stands for, as the live crawl recorded it."""
    error = record.decode_error
    if record.truncated and not record.url.endswith("/robots.txt"):
        error = "too_large"
    return FetchResult(
        url=record.url,
        status=record.status,
        reason=record.reason,
        response_headers=record.headers,
        body=record.body,
        content=record.content,
        content_type=_computed(record),
        started_at=warc_time(record.date).timestamp(),
        elapsed=elapsed,
        remote_ip=record.remote_ip,
        error=error,
        truncated=record.truncated,
    )


def _usec(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)
