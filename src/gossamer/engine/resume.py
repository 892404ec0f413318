"""Picking a crawl up again: after a clean stop, a crash, or the loss of its database.

The WARC files are the source of truth. Each response is written to them (and handed to the
OS) before its row reaches ``crawl.db``, whose writes are batched; so after ``kill -9`` the
database may lack the last few hundred exchanges, and the last record of the newest WARC file
of each writer may be torn. On resume that torn tail, and only that, is cut off (a copy is kept
beside the file); then ``gossamer.engine.replay`` brings the database level with the WARC
files without fetching anything. ``gossamer recover`` does the same, into a fresh database
when the old one is missing, corrupt or incompatible.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import IO, Any

from gossamer.config import CrawlConfig
from gossamer.engine.pipeline import Pipeline, build_frontier
from gossamer.engine.replay import reconcile
from gossamer.errors import StoreError
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB
from gossamer.store.cdxj import repair_cdxj
from gossamer.store.warcscan import CRAWL_NAME, Cut, crawl_files, repair_tail

log = logging.getLogger(__name__)

LOCK_NAME = ".gossamer.lock"
_UNRECORDED_ERRORS = frozenset({"bad_redirect", "redirect_chain"})


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
    crawl's own WARC files count as much as the database rows (foreign ones do not).
    """
    if db.discovered_count() > 0 or db.page_count() > 0:
        return True
    return any(CRAWL_NAME.match(path.name) for path in (out / "warc").glob("*.warc.gz"))


def repair_tails(out: Path, db: MetadataDB | None = None) -> list[Cut]:
    """Cut what a kill may have torn: the last record of the newest own WARC file of each
    writer (kept in a ``.torn`` file beside it) and the last line of each CDXJ file.

    ``db`` says which WARC files the crawl wrote; without it ``crawl.db`` is read directly.
    """
    recorded = db.recorded_files() if db is not None else _recorded_files(out / "crawl.db")
    cuts = repair_last_warc(out / "warc", recorded)
    for index in sorted(out.glob("index*.cdxj")):
        repair_cdxj(index)
    return cuts


def repair_last_warc(folder: Path, recorded: Collection[str]) -> list[Cut]:
    """Cut a torn tail off the newest own WARC file of each writer (only those can be torn).

    Damage anywhere else is not cut: the replay reports it and skips it.
    """
    cuts: list[Cut] = []
    for path in crawl_files(folder, recorded).newest:
        try:
            cut = repair_tail(path)
        except OSError as exc:
            log.warning("cannot repair WARC file %s: %s", path.name, exc.strerror or exc)
            continue
        if cut is not None:
            log.warning(
                "cut a torn record of %d bytes at offset %d off %s (kept in %s)",
                cut.size,
                cut.offset,
                path.name,
                cut.saved.name,
            )
            cuts.append(cut)
    return cuts


def _recorded_files(database: Path) -> set[str]:
    """The WARC files ``crawl.db``'s rows point into, read without writing anything."""
    if not database.exists():
        return set()
    try:
        conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT DISTINCT warc_file FROM pages WHERE warc_file IS NOT NULL")
            return {str(name) for (name,) in rows}
        finally:
            conn.close()
    except sqlite3.Error:
        return set()  # a damaged database is refused when it is opened, with the reason


def catch_up(config: CrawlConfig, db: MetadataDB, cdxj: CdxjWriter) -> int:
    """Bring the database level with the WARC files; returns how many records were replayed.

    See ``gossamer.engine.replay``: missing rows are replayed, rows of records that are gone
    are removed and their URLs queued again, and damage and foreign files are reported.
    """
    # Replay needs only the seen-set for deduplication; its frontier is thrown away.
    scratch = build_frontier(config.politeness, CrawlStats(), window=1 << 30)
    scratch.restore(db.queued_urls(), {})
    replayer = Pipeline(config, frontier=scratch, stats=CrawlStats(), warc=None, cdxj=cdxj, db=db)
    return reconcile(config.out / "warc", db, replayer, cdxj).replayed


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
        _carry(stats, saved)
    return stats


def _carry(stats: CrawlStats, saved: dict[str, Any]) -> None:
    """Restore what the rows cannot give from a saved snapshot (see ``save_snapshot``)."""
    stats.skipped_robots = int(saved.get("skipped_robots", 0))
    stats.skipped_other = int(saved.get("skipped_other", 0))
    stats.elapsed_before = float(saved.get("duration_seconds", 0.0))
    errors = saved.get("errors")
    for kind, count in (errors if isinstance(errors, dict) else {}).items():
        # Scope refusals and bad redirects are counted when a URL is refused, not in a row.
        if kind.startswith("trap_") or kind in _UNRECORDED_ERRORS:
            stats.errors[kind] = int(count)
    robots = saved.get("robots_status")
    for host, status in (robots if isinstance(robots, dict) else {}).items():
        stats.host(str(host)).robots_status = str(status)
    sitemaps = saved.get("sitemaps")
    for host, urls in (sitemaps if isinstance(sitemaps, dict) else {}).items():
        stats.sitemaps.setdefault(str(host), [str(url) for url in urls])


def carried_fields(stats: CrawlStats) -> dict[str, Any]:
    """What a snapshot keeps beyond ``CrawlStats.snapshot()`` so that resume, recover and the
    coordinator of a --workers crawl can report it again: robots.txt status and sitemaps."""
    return {
        "robots_status": {
            host: entry.robots_status
            for host, entry in stats.hosts.items()
            if entry.robots_status != "unknown"
        },
        "sitemaps": dict(stats.sitemaps),
    }


def save_snapshot(db: MetadataDB, stats: CrawlStats) -> None:
    db.set_meta("stats", json.dumps(stats.snapshot() | carried_fields(stats)))


def load_snapshot(db: MetadataDB) -> dict[str, Any] | None:
    text = db.get_meta("stats")
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
