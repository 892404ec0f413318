"""``gossamer recover DIR``: rebuild the database, the CDXJ index and the reports from WARC.

For when ``crawl.db`` is lost or damaged (seed 000's "merger"). The old database, if any, is
moved aside, never deleted. Every response record is replayed, in file order, through the
same recording code a live crawl uses; the metadata records Gossamer writes beside each
response give back the depth, referrer and fetch time. The result can be resumed.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from gossamer.config import CrawlConfig, config_from_json, config_to_json
from gossamer.engine.pipeline import Pipeline, build_frontier
from gossamer.engine.resume import CrawlLock, rebuild_stats, replay, save_snapshot
from gossamer.errors import ConfigError, StoreError
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, write_reports

log = logging.getLogger(__name__)

SAVED_CONFIG = "crawl.json"


@dataclass(frozen=True, slots=True)
class Recovery:
    records: int
    pages: int
    moved_aside: Path | None


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
    warcs = folder / "warc"
    if not any(warcs.glob("*.warc.gz")):
        raise StoreError(f"no WARC files in {warcs}: nothing to recover from")
    saved = load_saved(folder)
    config = saved[0] if saved else CrawlConfig(seeds=Path(), out=folder)
    seeds = saved[1] if saved else []
    with CrawlLock(folder):
        moved = _move_aside(folder)
        index = folder / "index.cdxj"
        if index.exists():
            index.unlink()
        db = MetadataDB(folder / "crawl.db")
        try:
            stats = CrawlStats(concurrency=config.concurrency)
            # Replay only deduplicates; nothing is fetched, so nothing needs to spill.
            frontier = build_frontier(config.politeness, stats, window=1 << 30)
            cdxj = CdxjWriter(index)
            pipeline = Pipeline(config, frontier=frontier, stats=stats, warc=None, cdxj=cdxj, db=db)
            for urls in seeds:
                pipeline.admit(urls[0], 0, None, fallbacks=urls[1:])
            records = replay(warcs, db, pipeline, cdxj)
            cdxj.close()
            db.prepare_resume()
            rebuilt = rebuild_stats(db, None, config.concurrency)
            write_reports(folder, rebuilt, db)
            save_snapshot(db, rebuilt)
        finally:
            db.close()
    return Recovery(records=records, pages=rebuilt.pages, moved_aside=moved)
