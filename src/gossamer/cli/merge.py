"""Command line, ``gossamer merge OUT DIR...``: one crawl folder from the folders that the
workers of a shared crawl wrote (each ``gossamer worker --out DIR``).

Data flow: argv -> **cli.merge** -> ``store.merge`` (WARC files, ``index.cdxj``, ``crawl.db``
into ``OUT.partial-PID``) -> the statistics recounted from the merged rows
(``engine.resume.rebuild_stats``, as ``gossamer recover`` does) -> ``reports/`` -> OUT,
renamed into place once whole. Then ``gossamer index OUT``, ``rank``, ``search`` and
``serve`` work on OUT as on the folder of a crawl run by one process.

The command line is checked here, before anything is written: OUT must be new (or an empty
folder) and not inside a source; each DIR a crawl folder (it has ``crawl.db``) with no crawl
running in it, and none given twice. ``store.merge`` then refuses a source it would merge
incompletely (killed: its WARC files hold pages its ``crawl.db`` does not list), naming
``gossamer recover DIR``, which replays them: a merge never drops an archived page.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gossamer.cli.flags import path
from gossamer.config import FetchConfig
from gossamer.crawling.folder import LOCK_NAME, save_snapshot
from gossamer.engine.resume import rebuild_stats
from gossamer.errors import ConfigError
from gossamer.lockfile import is_held
from gossamer.robots import lasting_answer, product_token
from gossamer.store import MetadataDB, write_reports
from gossamer.store.merge import Source, combined_snapshot, merge_crawls
from gossamer.urls import host_of

__all__ = ["add_parser", "check_arguments", "run_merge", "write_merged_reports"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the crawl folders of a shared crawl's workers into one crawl folder",
        description="Build one crawl folder OUT from the folders the workers of a shared crawl"
        " wrote, for 'gossamer index OUT', rank, search and serve. The DIRs are only read; WARC"
        " files are hard-linked into OUT where they can be.",
    )
    p.set_defaults(run=run_merge)
    p.add_argument(
        "out", type=path, metavar="OUT", help="the merged crawl folder: new, or an empty folder"
    )
    p.add_argument(
        "dirs",
        type=path,
        nargs="+",
        metavar="DIR",
        help="a crawl folder to merge (a worker's --out); the folders are only read",
    )


def run_merge(args: argparse.Namespace) -> int:
    check_arguments(args.out, args.dirs)
    for line in merge_crawls(args.out, args.dirs, finish=write_merged_reports).lines():
        print(line)
    return 0


def check_arguments(out: Path, folders: Sequence[Path]) -> None:
    """Refuse OUT and the DIRs with one ConfigError line unless a merge can use them."""
    try:
        taken = out.exists() and (not out.is_dir() or any(out.iterdir()))
    except OSError as exc:
        raise ConfigError(f"cannot use {out}: {exc.strerror or exc}") from exc
    if taken:
        raise ConfigError(f"{out} already exists and is not an empty folder: merge into a new one")
    seen: dict[tuple[int, int], Path] = {}
    for folder in folders:
        if not folder.exists():
            raise ConfigError(f"{folder} does not exist")
        if not folder.is_dir():
            raise ConfigError(f"{folder} is not a folder")
        if not (folder / "crawl.db").is_file():
            raise ConfigError(f"{folder} is not a crawl folder (it has no crawl.db)")
        if is_held(folder / LOCK_NAME):
            raise ConfigError(f"{folder} is in use by a running crawl: merge it once that ends")
        if out.resolve().is_relative_to(folder.resolve()):
            raise ConfigError(f"{out} is inside {folder}: the merged folder must be elsewhere")
        info = folder.stat()
        key = (info.st_dev, info.st_ino)  # the same folder, whatever path names it
        if key in seen:
            raise ConfigError(f"{folder} is given twice (as {seen[key]})")
        seen[key] = folder


def write_merged_reports(folder: Path, sources: Sequence[Source]) -> None:
    """Recount the merged crawl's statistics from its rows and write its reports, as
    ``gossamer recover`` does; the sources' saved figures give what rows cannot."""
    saved = combined_snapshot(source.snapshot for source in sources if source.snapshot)
    with MetadataDB(folder / "crawl.db") as db:
        stats = rebuild_stats(db, saved, max(1, saved["concurrency"]))
        product = product_token(FetchConfig().user_agent)
        for origin, status, body, _ in db.robots_answers():
            host = stats.host(host_of(origin))
            if host.robots_status == "unknown":
                host.robots_status = lasting_answer(status, body, product).status
        stats.started = time.time()  # the duration is the sources', nothing more
        db.put_domains(write_reports(folder, stats, db, now=stats.started))
        save_snapshot(db, stats)
