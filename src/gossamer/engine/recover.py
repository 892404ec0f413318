"""``gossamer recover DIR``: rebuild the database, the CDXJ index and the reports from WARC.

For when ``crawl.db`` is lost or damaged (seed 000's "merger"). A missing, corrupt or
incompatible database is moved aside, never deleted, and rebuilt: the same recovery sequence
as a resume (``resume.level``) replays every response record through the same recording code
a live crawl uses (see ``replay``), then the statistics are recounted; the metadata
records Gossamer writes beside each response give back the depth, referrer and fetch time. A
healthy database is kept, brought level with the WARC files, and its saved statistics (duration,
robots.txt status, refusals) carried over. The index is rebuilt from every record either way.
Damaged WARC data is reported and skipped, foreign WARC files are left alone. The result can
be resumed.

What no WARC record holds (refusals by robots.txt, scope, size or type; the concurrency
reached; response times) comes from the saved statistics: the database's, or when it is
rebuilt, the last ``reports/stats.json``. With neither, the robots.txt refusals are recounted
from the answers the WARC files kept. The reports are all written again, ``report.html`` too.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gossamer.config import CrawlConfig, config_from_json, config_to_json
from gossamer.crawling.folder import CrawlLock, load_snapshot, save_snapshot
from gossamer.crawling.reports import report_now
from gossamer.crawling.scope import scope_of
from gossamer.engine.replay import DamageReport
from gossamer.engine.resume import (
    Leveled,
    level,
    rebuild_stats,
    refused_by_robots,
)
from gossamer.errors import ConfigError, StoreError
from gossamer.monitor.series import Histogram
from gossamer.robots import lasting_answer
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB, crawl_db_problem
from gossamer.store.catalogue import refuse_catalogue
from gossamer.store.warcscan import CRAWL_NAME, Cut
from gossamer.urls import host_of

log = logging.getLogger(__name__)

SAVED_CONFIG = "crawl.json"
STATS_FILE = Path("reports") / "stats.json"  # the last statistics a run wrote


@dataclass(frozen=True, slots=True)
class Recovery:
    records: int  # response records read from the crawl's own WARC files
    pages: int
    moved_aside: Path | None  # where a missing/corrupt/incompatible crawl.db went, if any
    why_moved: str = ""  # why the old database could not be kept
    cuts: tuple[Cut, ...] = ()  # torn tails cut off (each kept in a .torn file)
    damage: tuple[DamageReport, ...] = ()  # stretches of WARC skipped and left in place
    foreign: tuple[str, ...] = ()  # WARC files not written by this crawl, left alone
    unreadable: tuple[str, ...] = ()  # WARC files that could not be read
    requeued: int = 0  # URLs whose record is gone, queued to be fetched again

    def lines(self, folder: Path) -> list[str]:
        """What ``gossamer recover`` prints."""
        out = []
        if self.moved_aside is not None:
            out.append(f"old database ({self.why_moved}) moved to {self.moved_aside}")
        out.extend(
            f"cut a torn record off {c.path.name} (kept in {c.saved.name})" for c in self.cuts
        )
        out.extend(f"damaged: {d.describe()}" for d in self.damage)
        out.extend(f"cannot read {name}: skipped" for name in self.unreadable)
        if self.foreign:
            out.append(f"not written by this crawl, left unchanged: {', '.join(self.foreign)}")
        if self.requeued:
            out.append(f"{self.requeued} URL(s) whose record is gone are queued again")
        out.append(
            f"recovered {self.records} records, {self.pages} pages, into {folder / 'crawl.db'}"
        )
        return out


def load_saved(folder: Path) -> tuple[CrawlConfig, list[tuple[str, ...]]] | None:
    """The configuration and seeds a crawl folder was started with, if it says."""
    path = folder / SAVED_CONFIG
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        seeds = [tuple(urls) for urls in data["seeds"]]
        return config_from_json(data["config"], folder), seeds
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def save_config(folder: Path, config: CrawlConfig, seeds: list[tuple[str, ...]]) -> None:
    text = json.dumps({"config": config_to_json(config), "seeds": seeds}, indent=2)
    try:
        (folder / SAVED_CONFIG).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot write {folder / SAVED_CONFIG}: {exc.strerror}") from exc


def last_stats(folder: Path) -> dict[str, Any] | None:
    """The statistics the crawl last wrote to ``reports/stats.json``, if it can be read: what
    is left of the saved snapshot when ``crawl.db`` is lost (it lacks only the per-host
    robots.txt status and sitemaps, which the WARC files give back)."""
    try:
        saved = json.loads((folder / STATS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def _move_aside(folder: Path) -> Path | None:
    database = folder / "crawl.db"
    if not database.exists():
        return None
    stamp = time.strftime("%Y%m%d%H%M%S")
    target = folder / f"crawl.db.damaged-{stamp}"
    try:
        for suffix in ("", "-wal", "-shm"):
            source = folder / f"crawl.db{suffix}"
            if source.exists():
                source.replace(folder / f"{target.name}{suffix}")
    except OSError as exc:
        raise StoreError(f"cannot move {database} aside: {exc.strerror}") from exc
    return target


def recover(folder: Path) -> Recovery:
    """Rebuild ``crawl.db`` (only if it is missing, corrupt or incompatible: a healthy one is
    kept and brought level with the WARC files), ``index.cdxj`` and the reports."""
    refuse_catalogue(folder, "recover each of them")  # its links' names are not the crawl's
    warcs = folder / "warc"
    if not any(CRAWL_NAME.match(path.name) for path in warcs.glob("*.warc.gz")):
        raise StoreError(f"no WARC files written by Gossamer in {warcs}: nothing to recover from")
    saved = load_saved(folder)
    config = saved[0] if saved else CrawlConfig(seeds=Path(), out=folder)
    seeds = saved[1] if saved else []
    with CrawlLock(folder):
        why = crawl_db_problem(folder / "crawl.db")
        moved = _move_aside(folder) if why else None
        if why:
            log.warning("crawl.db %s: rebuilding it from the WARC files", why)
        db = MetadataDB(folder / "crawl.db")
        try:
            snapshot = last_stats(folder) if why else load_snapshot(db)
            leveled, pages = _rebuild(folder, config, seeds, db, snapshot)
        finally:
            db.close()
    outcome = leveled.outcome
    return Recovery(
        records=outcome.records,
        pages=pages,
        moved_aside=moved,
        why_moved=why,
        cuts=leveled.cuts,
        damage=tuple(outcome.damage),
        foreign=tuple(outcome.foreign),
        unreadable=tuple(outcome.unreadable),
        requeued=len(outcome.requeued),
    )


def _rebuild(
    folder: Path,
    config: CrawlConfig,
    seeds: list[tuple[str, ...]],
    db: MetadataDB,
    snapshot: dict[str, Any] | None,
) -> tuple[Leveled, int]:
    """Level ``db`` with the WARC files into a fresh index, recount, write the reports."""
    fresh = folder / ".index.cdxj.rebuild"
    fresh.unlink(missing_ok=True)
    leveled = level(config, db, index=fresh, seeds=seeds, reindex=True)
    fresh.replace(folder / "index.cdxj")
    rebuilt = rebuild_stats(db, snapshot, config.concurrency)
    if snapshot is None:
        # No saved duration: the crawl lasted at least from its first record to its last.
        rebuilt.elapsed_before = leveled.outcome.span
        # Nor saved refusals: those of robots.txt, at least, the answers kept can tell.
        rebuilt.skipped_robots = sum(refused_by_robots(config, db))
    else:
        _loop_figures(rebuilt, snapshot)
    _robots_status(db, rebuilt, SiteRules.of(config).product_for)
    rebuilt.started = time.time()  # the duration is what was carried over, nothing more
    # The snapshot first: its duration is stats.json's, not later by report.html's drawing.
    save_snapshot(db, rebuilt)
    report_now(folder, rebuilt, db, final=True, scope=scope_of(config.scope))
    return leveled, rebuilt.pages


def _loop_figures(rebuilt: CrawlStats, snapshot: dict[str, Any]) -> None:
    """What only the crawl loop saw (stored HTML and PDF pages, response times), which
    neither the rows nor the WARC files give, from the saved statistics."""
    rebuilt.html_pages = int(snapshot.get("html_pages", 0))
    rebuilt.pdf_pages = int(snapshot.get("pdf_pages", 0))
    rebuilt.latency = Histogram.from_json(snapshot.get("fetch_seconds"))


def _robots_status(db: MetadataDB, rebuilt: CrawlStats, product: Callable[[str], str]) -> None:
    """Robots.txt status of the hosts the snapshot says nothing about, from the answers kept
    in crawl.db (an unavailable robots.txt is not kept, so its host stays "unknown")."""
    for origin, status, body, _ in db.robots_answers():
        host = rebuilt.host(host_of(origin))
        if host.robots_status == "unknown":
            host.robots_status = lasting_answer(status, body, product(origin)).status
