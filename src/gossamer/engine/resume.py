"""Picking a crawl up again: after a clean stop, a crash, or the loss of its database.

The WARC files are the source of truth. Each response is written to them (and handed to the
OS) before its row reaches ``crawl.db``, whose writes are batched; so after ``kill -9`` the
database may lack the last few hundred exchanges, and the last WARC record may be torn. On
resume the torn tail is cut off, and every response record that the database does not know is
replayed through the pipeline's recording half (row, statistics, links, redirect targets)
without fetching anything. ``gossamer recover`` is the same replay into an empty database.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator
from warcio.recordloader import ArcWarcRecord

from gossamer.config import CrawlConfig
from gossamer.engine.pipeline import Pipeline, build_frontier, origin_of
from gossamer.errors import StoreError
from gossamer.fetch import FetchResult
from gossamer.fetch.decode import DecodeError, decode_body
from gossamer.frontier import Job
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcLocation
from gossamer.store.cdxj import repair_cdxj
from gossamer.store.warc import repair_tail

log = logging.getLogger(__name__)

LOCK_NAME = ".gossamer.lock"
_DECODE_LIMIT = 20_000_000


class CrawlLock:
    """An exclusive lock on a crawl folder, released by the kernel even after ``kill -9``."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / LOCK_NAME
        self._handle: IO[str] | None = None

    def __enter__(self) -> CrawlLock:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._path.open("a+", encoding="utf-8")
        except OSError as exc:
            raise StoreError(f"cannot create lock file {self._path}: {exc.strerror}") from exc
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise StoreError(
                f"crawl folder {self._path.parent} is in use by another crawl (pid {holder})"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def holds_crawl(out: Path, db: MetadataDB) -> bool:
    """Whether the folder already holds a crawl to resume.

    A crash can leave WARC records behind before the first database batch is written, so the
    WARC files count as much as the database rows.
    """
    return db.discovered_count() > 0 or db.page_count() > 0 or any((out / "warc").glob("*.warc.gz"))


def repair_tails(out: Path) -> None:
    """Cut what a crash may have torn: the newest WARC file of each writer, the CDXJ files."""
    repair_last_warc(out / "warc")
    for index in sorted(out.glob("index*.cdxj")):
        repair_cdxj(index)


def repair_last_warc(folder: Path) -> int:
    """Cut a torn record off the newest WARC file of each writer (only those can be torn)."""
    newest: dict[str, Path] = {}
    for path in sorted(folder.glob("*.warc.gz")):
        # gossamer-20261122010203-00007.warc.gz -> writer prefix "gossamer"
        newest[path.name.rsplit("-", 2)[0]] = path
    removed = 0
    for path in newest.values():
        cut = repair_tail(path)
        if cut:
            log.warning("cut a torn record of %d bytes off %s", cut, path.name)
        removed += cut
    return removed


def replay(folder: Path, db: MetadataDB, pipeline: Pipeline, cdxj: CdxjWriter) -> int:
    """Feed every response record whose offset ``crawl.db`` lacks through ``pipeline``."""
    count = 0
    for path in sorted(folder.glob("*.warc.gz")):
        known = db.recorded_offsets(path.name)
        for job, result, location in _exchanges(path):
            if location.offset in known:
                continue
            cdxj.add(result, location)
            # The URL's own "discovered" row may have been lost with the last batch.
            db.add_discovered([(job.url, job.host, job.depth, job.referrer)])
            if job.robots:
                pipeline.record_robots(job, result, location)
            else:
                pipeline.record_page(job, result, location)
            count += 1
    return count


def catch_up(config: CrawlConfig, db: MetadataDB, cdxj: CdxjWriter) -> int:
    """Replay the WARC records the database lacks; returns how many were replayed."""
    # Replay needs only the seen-set for deduplication; its frontier is thrown away.
    scratch = build_frontier(config.politeness, CrawlStats(), window=1 << 30)
    scratch.restore(db.queued_urls(), {})
    replayer = Pipeline(config, frontier=scratch, stats=CrawlStats(), warc=None, cdxj=cdxj, db=db)
    return replay(config.out / "warc", db, replayer, cdxj)


def _exchanges(path: Path) -> Iterator[tuple[Job, FetchResult, WarcLocation]]:
    """(job, result, location) per response record, with its metadata record's fields."""
    pending: tuple[str, FetchResult, WarcLocation] | None = None
    with path.open("rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            kind = record.rec_type
            if kind == "response":
                body = record.raw_stream.read()
                location = WarcLocation(
                    path.name, records.get_record_offset(), records.get_record_length()
                )
                if pending is not None:
                    yield _job(pending[1], {}), pending[1], pending[2]
                record_id = record.rec_headers.get_header("WARC-Record-ID") or ""
                pending = (record_id, _result(record, body), location)
            elif kind == "metadata" and pending is not None:
                fields = _fields(record.content_stream().read())
                if record.rec_headers.get_header("WARC-Concurrent-To") == pending[0]:
                    millis = fields.get("fetchTimeMs", "")
                    result = pending[1]
                    if millis.isdigit():
                        result = replace(result, elapsed=int(millis) / 1000)
                    yield _job(result, fields), result, pending[2]
                    pending = None
            else:
                record.raw_stream.read()
    if pending is not None:
        yield _job(pending[1], {}), pending[1], pending[2]


def _fields(data: bytes) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _job(result: FetchResult, fields: dict[str, str]) -> Job:
    depth = fields.get("gossamer-depth", "0")
    return Job(
        url=result.url,
        host=fields.get("gossamer-host") or origin_of(result.url),
        depth=int(depth) if depth.isdigit() else 0,
        referrer=fields.get("via") or None,
        robots=fields.get("gossamer-purpose") == "robots",
    )


def _result(record: ArcWarcRecord, body: bytes) -> FetchResult:
    headers = record.http_headers
    url = record.rec_headers.get_header("WARC-Target-URI") or ""
    status_line = headers.statusline or "0"
    code, _, reason = status_line.partition(" ")
    response_headers = tuple((k, v) for k, v in headers.headers)
    content_type = headers.get_header("Content-Type") or ""
    error = ""
    content = b""
    truncated = bool(record.rec_headers.get_header("WARC-Truncated"))
    try:
        content = decode_body(body, headers.get_header("Content-Encoding"), _DECODE_LIMIT)
    except DecodeError as exc:
        error = exc.kind
    if truncated and not url.endswith("/robots.txt"):
        error = "too_large"
    return FetchResult(
        url=url,
        status=int(code) if code.isdigit() else 0,
        reason=reason,
        response_headers=response_headers,
        body=body,
        content=content,
        content_type=content_type,
        started_at=_warc_time(record.rec_headers.get_header("WARC-Date") or ""),
        elapsed=0.0,
        remote_ip=record.rec_headers.get_header("WARC-IP-Address") or "",
        error=error,
        truncated=truncated,
    )


def _warc_time(value: str) -> float:
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    return 0.0


def rebuild_stats(
    db: MetadataDB,
    saved: dict[str, Any] | None,
    concurrency: int,
    keep: Callable[[str], bool] | None = None,
) -> CrawlStats:
    """Statistics of the crawl so far, recounted from the database rows.

    Counters the rows cannot give (URLs refused by robots.txt or scope, retries that a later
    row replaced) come from the last saved snapshot.
    """
    stats = CrawlStats(concurrency=concurrency)
    created = float(db.get_meta("created_at") or stats.started)
    for host, status, error, length, elapsed, fetched_at, _url, kind in db.page_facts():
        if keep is not None and not keep(host):
            continue
        stats.requests += 1
        entry = stats.host(host)
        entry.time_spent += elapsed or 0.0
        if kind == "robots":
            stats.robots_requests += 1
        if status:
            stats.responses += 1
            stats.statuses[status] += 1
            stats.bytes += length or 0
            stats.fetch_time += elapsed or 0.0
            entry.bytes += length or 0
        if error:
            stats.record_error(error, host)
        elif status >= 400:
            stats.record_error(f"http_{status}", host)
        if 300 <= status < 400:
            stats.redirects += 1
        if kind == "page":
            stats.pages += 1
            entry.pages += 1
            stats.hourly[int(max(0.0, (fetched_at or created) - created) // 3600)] += 1
    stats.discovered = db.discovered_count()
    if saved:
        stats.skipped_robots = int(saved.get("skipped_robots", 0))
        stats.skipped_other = int(saved.get("skipped_other", 0))
        stats.elapsed_before = float(saved.get("duration_seconds", 0.0))
    return stats


def save_snapshot(db: MetadataDB, stats: CrawlStats) -> None:
    db.set_meta("stats", json.dumps(stats.snapshot()))


def load_snapshot(db: MetadataDB) -> dict[str, Any] | None:
    text = db.get_meta("stats")
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
