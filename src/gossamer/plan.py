"""The plan of a crawl: its settings and seeds, checked against what its folder already holds.

Data flow: command line -> **plan** -> engine. A crawl folder belongs to one crawl: the
settings and seeds it started with are in its ``crawl.json``. Running the same command again
continues that crawl; a command with other seeds or other settings is refused with one line
naming the difference, instead of silently merging two crawls into one folder. Resuming
(``--resume DIR``, or ``--out DIR`` without a seeds file) takes the stored settings; of the
flags given, only a longer time limit and a larger page target may change them (and display
settings and the number of worker processes, which are not part of what is crawled), and
``crawl.json`` then records what applies.

A crawl that stored no page (every seed failed: names that do not resolve, refused
connections, a typo in the seeds) holds nothing worth keeping, so a command with other seeds
or settings starts the crawl afresh in its folder instead of being refused: the failed
attempt's own files (``crawl.json``, ``crawl.db``, its WARC and CDXJ files, ``reports/``) are
removed first, and a notice says so.

Everything is checked here, before anything is written: a bad flag, seeds file or
``--resolve`` entry leaves no ``crawl.json`` behind. Then :func:`begin_crawl` writes what must
exist before the first request: the folder, proved writable, and ``crawl.json``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gossamer.config import CrawlConfig, Requested, requested, settle
from gossamer.config_check import check_config, check_room, fit_open_files, settings_by_name
from gossamer.crawling.folder import CrawlLock
from gossamer.engine.recover import SAVED_CONFIG, load_saved, save_config
from gossamer.errors import ConfigError, StoreError
from gossamer.seeds import Seed, SeedList, read_seeds
from gossamer.store.connect import connect_readonly
from gossamer.store.warcscan import CRAWL_NAME

__all__ = ["CrawlPlan", "begin_crawl", "plan_crawl", "prepare_out"]

# Settings that change how a crawl is shown or run, not what it fetches. The worker processes
# may change: each restores the hosts it owns by hash, whatever their number before, so a
# folder moves between machines of different core counts (``--workers`` defaults to one per
# core), and a user may resume with more or fewer.
# The route and the login (a proxy, a cookie file) may change between runs: a session
# cookie expires, a proxy moves; neither changes what the crawl is.
_HOW_RUN = frozenset(
    {"progress", "report_interval", "workers", "fetch.proxy", "fetch.cookies_file"}
)
# Settings a resumed crawl may raise: it then simply goes on for longer.
_MAY_GROW = frozenset({"max_pages", "time_limit"})
_SHOWN_DIFFERENCES = 3


@dataclass(frozen=True, slots=True)
class CrawlPlan:
    config: CrawlConfig
    seeds: SeedList
    resuming: bool  # the folder already holds this crawl
    save: bool  # crawl.json must be written (a new crawl, or a resumed one with a new limit)
    restart: str = ""  # why the folder's earlier attempt is removed first ("": it is not)


@dataclass(frozen=True, slots=True)
class _Saved:
    config: CrawlConfig
    seeds: list[tuple[str, ...]]
    label: str  # "DIR/crawl.json: ", for messages


def _saved(folder: Path) -> _Saved | None:
    found = load_saved(folder)
    if found is None:
        return None
    label = f"{folder / SAVED_CONFIG}: "
    config = check_config(found[0], lambda name: label + name)
    seeds = found[1]
    if not all(urls and all(isinstance(url, str) for url in urls) for urls in seeds):
        raise ConfigError(f"{label}the seeds are not lists of URLs")
    return _Saved(config, seeds, label)


def _show(value: Any, name: str) -> str:
    if value is None:
        return "no limit" if name in _MAY_GROW else "none"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or "none"
    return f"{value:g}s" if isinstance(value, float) else repr(value)


def _changes(
    old: CrawlConfig, new: CrawlConfig, wanted: Requested, flags: dict[str, str]
) -> list[str]:
    """The settings ``new`` changes and a resumed crawl may not, described for a message."""
    before, after = settings_by_name(old), settings_by_name(new)
    found: list[str] = []
    for name, value in after.items():
        was = before.get(name)
        if name in _HOW_RUN or value == was:
            continue
        if name in _MAY_GROW and value is not None and was is not None and value > was:
            continue
        label = wanted.labels.get(name) or flags.get(name, name)
        found.append(f"{label} ({_show(was, name)} there, {_show(value, name)} here)")
    return found


def _listed(changes: list[str]) -> str:
    more = len(changes) - _SHOWN_DIFFERENCES
    return "; ".join(changes[:_SHOWN_DIFFERENCES]) + (f"; and {more} more" if more > 0 else "")


def _seed_urls(seeds: SeedList) -> list[tuple[str, ...]]:
    return [seed.urls for seed in seeds.seeds]


def _refuse_other_crawl(folder: Path, changes: list[str], other_seeds: bool) -> None:
    what = " and ".join(
        part
        for part, present in (("other seeds", other_seeds), ("other settings", bool(changes)))
        if present
    )
    detail = f": {_listed(changes)}" if changes else ""
    raise ConfigError(
        f"{folder} holds a crawl started with {what}{detail}; continue it as it was with"
        f" 'gossamer crawl --resume {folder}', or start this one in a new --out folder"
    )


def _refuse_resume(folder: Path, changes: list[str], other_seeds: bool) -> None:
    if other_seeds:
        raise ConfigError(
            f"the crawl in {folder} was started from other seeds; resume it without a seeds"
            " file, or start a new crawl in a new --out folder"
        )
    raise ConfigError(
        f"cannot change the settings of the crawl in {folder} when resuming: {_listed(changes)};"
        " only a longer --time and a larger --max-pages may change. Resume without the other"
        " settings, or start a new crawl in a new --out folder"
    )


def _new_crawl(seeds_file: Path | None, folder: Path, wanted: Requested) -> CrawlPlan:
    if seeds_file is None:
        raise ConfigError("a seeds file is needed to start a new crawl")
    config = settle(CrawlConfig(seeds=seeds_file, out=folder), wanted)
    seeds = read_seeds(config.seeds, max_url_length=config.scope.max_url_length)
    return CrawlPlan(config, seeds, resuming=False, save=True)


def plan_crawl(
    seeds_file: Path | None,
    folder: Path,
    *,
    resume: bool,
    config_file: Path | None,
    overrides: dict[str, Any],
    flags: dict[str, str],
) -> CrawlPlan:
    """Check a ``gossamer crawl`` command line against the folder it names; see the module."""
    saved = _saved(folder)
    if resume and saved is None:
        raise ConfigError(f"nothing to resume: {folder} holds no Gossamer crawl")
    wanted = requested(config_file, overrides, flags)
    if saved is None:
        plan = _new_crawl(seeds_file, folder, wanted)
    else:
        plan = _continue(saved, seeds_file, wanted, flags, resume=resume)
    explicit = "concurrency" in wanted.labels
    check_room(plan.config.concurrency if explicit else None, wanted.labels.get("concurrency", ""))
    return plan


def _continue(
    saved: _Saved,
    seeds_file: Path | None,
    wanted: Requested,
    flags: dict[str, str],
    *,
    resume: bool,
) -> CrawlPlan:
    # Resuming keeps what is stored and applies only what this command line names; running
    # the starting command again names everything, defaults included.
    resuming = resume or seeds_file is None
    folder = saved.config.out
    if resuming:
        config = settle(saved.config, wanted, base_label=saved.label)
    else:
        assert seeds_file is not None
        config = settle(CrawlConfig(seeds=seeds_file, out=folder), wanted)
    config = dataclasses.replace(config, progress=wanted.values.get("progress", True))
    other_seeds = False
    if seeds_file is not None:
        given = read_seeds(seeds_file, max_url_length=config.scope.max_url_length)
        other_seeds = _seed_urls(given) != saved.seeds
    changes = _changes(saved.config, config, wanted, flags)
    if (other_seeds or changes) and stored_nothing(folder):
        return _restart(saved, seeds_file, config, changes, other_seeds)
    if other_seeds or changes:
        refuse = _refuse_resume if resuming else _refuse_other_crawl
        refuse(folder, changes, other_seeds)
    config = dataclasses.replace(config, seeds=saved.config.seeds)
    seeds = SeedList(
        seeds=tuple(Seed(urls=urls, line=0, text=urls[0]) for urls in saved.seeds),
        problems=(),
    )
    save = settings_by_name(config) != settings_by_name(
        dataclasses.replace(saved.config, progress=config.progress)
    )
    return CrawlPlan(config, seeds, resuming=True, save=save)


def stored_nothing(folder: Path) -> bool:
    """Whether the crawl in ``folder`` ended having stored no page: its reports say 0 pages
    and ``crawl.db`` holds no 2xx answer but for robots.txt (both, so that a crawl killed
    before its first report, or whose reports are stale, is never taken for an empty one)."""
    try:
        saved = json.loads((folder / "reports" / "stats.json").read_text(encoding="utf-8"))
        if int(saved["pages"]) != 0:
            return False
        conn = connect_readonly(folder / "crawl.db")
        try:
            (found,) = conn.execute(
                "SELECT count(*) FROM pages WHERE status BETWEEN 200 AND 299"
                " AND url NOT LIKE '%/robots.txt'"
            ).fetchone()
        finally:
            conn.close()
    except (OSError, ValueError, KeyError, TypeError, sqlite3.Error):
        return False  # unreadable or unfinished: not known to be empty, so kept
    return int(found) == 0


def _restart(
    saved: _Saved,
    seeds_file: Path | None,
    config: CrawlConfig,
    changes: list[str],
    other_seeds: bool,
) -> CrawlPlan:
    """A new crawl in the folder of one that stored nothing, with this command's settings."""
    if seeds_file is None:
        seeds = SeedList(
            seeds=tuple(Seed(urls=urls, line=0, text=urls[0]) for urls in saved.seeds),
            problems=(),
        )
        config = dataclasses.replace(config, seeds=saved.config.seeds)
    else:
        seeds = read_seeds(seeds_file, max_url_length=config.scope.max_url_length)
    what = ["other seeds"] if other_seeds else []
    what += [_listed(changes)] if changes else []
    why = (
        f"the crawl in {saved.config.out} stored no page, so it starts again with {'; '.join(what)}"
    )
    return CrawlPlan(config, seeds, resuming=False, save=True, restart=why)


def _remove_attempt(folder: Path) -> None:
    """Remove what a crawl that stored nothing wrote, and nothing else of the folder."""
    names = ["crawl.db", "crawl.db-wal", "crawl.db-shm", SAVED_CONFIG, "index.cdxj"]
    doomed = [folder / name for name in names] + list(folder.glob("index-w*.cdxj"))
    doomed += [p for p in (folder / "warc").glob("*.warc.gz") if CRAWL_NAME.match(p.name)]
    try:
        for item in doomed:
            item.unlink(missing_ok=True)
        shutil.rmtree(folder / "reports", ignore_errors=True)
    except OSError as exc:
        raise StoreError(
            f"cannot remove the earlier attempt in {folder}: {exc.strerror or exc}"
        ) from exc


def prepare_out(out: Path) -> None:
    """Create the output folder and prove it is writable before any network traffic."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StoreError(f"cannot write to output folder {out}: {exc.strerror or exc}") from exc


def begin_crawl(plan: CrawlPlan) -> tuple[CrawlConfig, str | None]:
    """Write what must be written before the crawl; the tree to run it with, and a warning
    when the concurrency had to be lowered to fit the open-file limit."""
    # Fitted first, as it can still refuse; crawl.json keeps the concurrency asked for.
    config, note = fit_open_files(plan.config)
    prepare_out(config.out)
    if plan.save:
        # Under the crawl's lock, so a crawl running in the folder keeps its crawl.json.
        with CrawlLock(config.out):
            if plan.restart:
                _remove_attempt(config.out)
            save_config(config.out, plan.config, _seed_urls(plan.seeds))
    return config, note
