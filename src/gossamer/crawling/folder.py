"""The crawl folder's lock and its statistics snapshot, for every way of running a crawl.

Data flow: an engine (local, a shared crawl's worker, the study's threads) -> **folder** ->
``DIR/.gossamer.lock`` (one crawl at a time, released by the kernel even after ``kill -9``)
and ``crawl.db``'s ``meta`` row ``stats``: the figures the rows cannot give (refusals, trap
counters, duration, robots.txt status, sitemaps), which resume, recover and merge carry on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gossamer.errors import StoreError
from gossamer.lockfile import PidLock
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.store.catalogue import refuse_catalogue

__all__ = ["LOCK_NAME", "CrawlLock", "carried_fields", "load_snapshot", "save_snapshot"]

LOCK_NAME = ".gossamer.lock"


class CrawlLock:
    """An exclusive lock on a crawl folder, released by the kernel even after ``kill -9``."""

    def __init__(self, folder: Path) -> None:
        self._lock = PidLock(folder / LOCK_NAME)

    def __enter__(self) -> CrawlLock:
        path = self._lock.path
        try:
            holder = self._lock.acquire()
        except OSError as exc:
            raise StoreError(f"cannot create lock file {path}: {exc.strerror}") from exc
        if holder is not None:
            raise StoreError(
                f"crawl folder {path.parent} is in use by another crawl (pid {holder})"
            )
        try:
            refuse_catalogue(path.parent, "crawl, resume or recover each of them")
        except StoreError:
            self._lock.release()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


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
