"""Store stage, merging crawl folders: ``gossamer merge OUT DIR...`` builds one crawl folder
from the folders the workers of a shared crawl wrote.

Data flow: each worker's ``warc/``, ``index*.cdxj`` and ``crawl.db`` -> **merge** -> one folder
that ``gossamer index``, ``rank``, ``search``, ``serve`` and ``recover`` read as they read a
crawl of one process. The WARC files and the CDXJ lines are ``merge_warc``'s part; this module
checks the sources, merges the databases and publishes the result.

The sources are only read: each ``crawl.db`` is attached read-only and immutable (no lock,
no ``-shm`` file), so a source must be a crawl that has ended: one still running holds its
folder's lock, and one that was killed leaves a non-empty ``crawl.db-wal`` (resume it or
run ``gossamer recover`` on it first). A source whose WARC files hold pages its ``crawl.db``
does not list is refused too (``merge_check``: a ``kill -9`` lost the batch that listed
them; ``recover`` replays them). The result is built in ``OUT.partial-PID`` beside OUT and
renamed to OUT only once complete (``merge_scratch``, which also removes what merges killed
on the way left).

``crawl.db`` is created by :class:`~gossamer.store.metadata.MetadataDB` (the current schema)
and filled table by table, one source at a time, each in one SQL statement over the attached
source. Where two sources hold a row for the same key:

* ``urls``: one row per URL, with fresh ids: the first source's URLs, then the next one's new
  URLs, and so on, each in URL order (which fills the URL index in order: about three times
  faster than discovery order on a million URLs). The earliest discovery wins (as in one crawl,
  where the first discovery wins): its host, depth, referrer, time and spilled flag; a URL
  only ever seen as a link target keeps ``discovered_at`` NULL.
* ``links``: every source's links, their ids translated through ``urls`` by URL text, so a
  link from a page one worker stored to a page another stored joins the two.
* ``pages``: the row fetched last (``fetched_at``) wins, as a refetch replaces the row in one
  crawl; its WARC file, offset and length are rewritten to where its record is now.
* ``robots``: the answer fetched last. ``sitemaps``: the first source's row, with the lowest
  level and the earliest ``found_at``, and the outcome of the first source that read it.
  ``sitemap_entries``: the first source's (the first sitemap that listed the URL).
* ``domains``: counts (pages, bytes, fetch time, errors) added up, the text columns of the
  row written last, none in visit. The reports rewrite this table from the merged rows.
* ``trap_families``: the smallest depth of each family, so a resumed merged crawl counts a
  calendar's chain from where any source began it.
* ``schedule``: the row asked last (``checked_at``), as a recrawl rewrites it in one crawl.
* ``meta``: a new crawl's (schema and Gossamer version), created at the earliest source's
  ``created_at`` (the hourly report counts from it), plus ``merged_from``: the source
  folders, as a JSON list.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from gossamer.errors import StoreError
from gossamer.stats import CrawlStats
from gossamer.store.catalogue import refuse_catalogue
from gossamer.store.connect import faults
from gossamer.store.families import MERGE_FAMILIES
from gossamer.store.merge_check import require_listed
from gossamer.store.merge_scratch import scratch_folder
from gossamer.store.merge_warc import Placed, Relocation, merge_index, place_files, plan_names
from gossamer.store.metadata import MetadataDB
from gossamer.store.rows import PageRow
from gossamer.store.schema import SCHEMA_VERSION

__all__ = [
    "MergeSummary",
    "Source",
    "combined_snapshot",
    "merge_crawls",
    "read_source",
]

_TABLES = {"meta", "pages", "urls", "links"}
_CACHE_KIB = 64 * 1024  # SQLite page cache, as much as a crawl gives crawl.db
_STATS_FILE = Path("reports") / "stats.json"

_URLS = """
INSERT INTO main.urls (url, host, depth, referrer, discovered_at, spilled)
SELECT url, host, depth, referrer, discovered_at, spilled FROM src.urls WHERE true ORDER BY url
ON CONFLICT (url) DO UPDATE SET
    (host, depth, referrer, discovered_at, spilled) = (excluded.host, excluded.depth,
     excluded.referrer, excluded.discovered_at, excluded.spilled)
WHERE excluded.discovered_at IS NOT NULL
    AND (urls.discovered_at IS NULL OR excluded.discovered_at < urls.discovered_at)
"""
_IDS = """
INSERT INTO temp.ids (old, new)
SELECT s.id, m.id FROM src.urls AS s JOIN main.urls AS m ON m.url = s.url ORDER BY s.url
"""
_LINKS = """
INSERT OR IGNORE INTO main.links (src, dst)
SELECT a.new, b.new FROM src.links AS l
JOIN temp.ids AS a ON a.old = l.src JOIN temp.ids AS b ON b.old = l.dst
"""
_PLACED = {
    "warc_file": "gossamer_warc_name(warc_file)",
    "warc_offset": "gossamer_warc_offset(warc_file, warc_offset)",
    "warc_length": "gossamer_warc_length(warc_file, warc_offset, warc_length)",
}
_PAGE_NAMES = [column.name for column in fields(PageRow)]
_PAGES = f"""
INSERT INTO main.pages ({", ".join(_PAGE_NAMES)})
SELECT {", ".join(_PLACED.get(name, name) for name in _PAGE_NAMES)} FROM src.pages WHERE true
ON CONFLICT (url) DO UPDATE SET
    ({", ".join(_PAGE_NAMES[1:])}) = ({", ".join(f"excluded.{n}" for n in _PAGE_NAMES[1:])})
WHERE coalesce(excluded.fetched_at, -1) > coalesce(pages.fetched_at, -1)
"""
_ROBOTS = """
INSERT INTO main.robots (origin, status, body, fetched_at)
SELECT origin, status, body, fetched_at FROM src.robots WHERE true
ON CONFLICT (origin) DO UPDATE SET
    (status, body, fetched_at) = (excluded.status, excluded.body, excluded.fetched_at)
WHERE excluded.fetched_at > robots.fetched_at
"""
_SITEMAPS = """
INSERT INTO main.sitemaps (url, owner, level, found_at, entries, error)
SELECT url, owner, level, found_at, entries, error FROM src.sitemaps WHERE true
ON CONFLICT (url) DO UPDATE SET
    level = min(sitemaps.level, excluded.level),
    found_at = min(sitemaps.found_at, excluded.found_at),
    entries = iif(sitemaps.entries IS NULL, excluded.entries, sitemaps.entries),
    error = iif(sitemaps.entries IS NULL, excluded.error, sitemaps.error)
"""
_ENTRIES = """
INSERT OR IGNORE INTO main.sitemap_entries (url, sitemap, lastmod)
SELECT url, sitemap, lastmod FROM src.sitemap_entries
"""
_NEWER = "excluded.updated_at > domains.updated_at"
_DOMAINS = f"""
INSERT INTO main.domains (host, seeds, pages, depths, in_visit, time_spent, bytes, errors,
                          robots_status, updated_at)
SELECT host, seeds, pages, depths, 0, time_spent, bytes, errors, robots_status, updated_at
FROM src.domains WHERE true
ON CONFLICT (host) DO UPDATE SET
    pages = domains.pages + excluded.pages,
    time_spent = domains.time_spent + excluded.time_spent,
    bytes = domains.bytes + excluded.bytes,
    errors = domains.errors + excluded.errors,
    seeds = iif({_NEWER}, excluded.seeds, domains.seeds),
    depths = iif({_NEWER}, excluded.depths, domains.depths),
    robots_status = iif({_NEWER}, excluded.robots_status, domains.robots_status),
    updated_at = max(domains.updated_at, excluded.updated_at)
"""
_SCHEDULE = """
INSERT INTO main.schedule SELECT * FROM src.schedule WHERE true
ON CONFLICT (url) DO UPDATE SET
    (etag, last_modified, checked_at, changed_at, interval, due_at, answer, received,
     wanted_at) =
    (excluded.etag, excluded.last_modified, excluded.checked_at, excluded.changed_at,
     excluded.interval, excluded.due_at, excluded.answer, excluded.received, excluded.wanted_at)
WHERE excluded.checked_at > schedule.checked_at
"""
_STEPS = (
    _URLS,
    "DELETE FROM temp.ids",
    _IDS,
    _LINKS,
    _PAGES,
    _ROBOTS,
    _SITEMAPS,
    _ENTRIES,
    _DOMAINS,
    MERGE_FAMILIES,
    _SCHEDULE,
)


@dataclass(frozen=True, slots=True)
class Source:
    """One crawl folder to merge, checked: what its database says about the crawl."""

    folder: Path
    created_at: float
    snapshot: dict[str, Any] | None  # its last saved statistics (meta, else reports)


@dataclass(frozen=True, slots=True)
class MergeSummary:
    """What ``merge_crawls`` built."""

    folder: Path
    sources: int
    pages: int
    urls: int
    links: int
    index_lines: int
    files: Placed
    seconds: float

    def lines(self) -> list[str]:
        files = self.files
        return [
            f"merged {self.sources} crawl folder{'s' * (self.sources != 1)} into {self.folder}",
            f"pages: {self.pages}, URLs: {self.urls}, links: {self.links},"
            f" index lines: {self.index_lines}",
            f"WARC files: {files.linked} linked, {files.copied} copied, {files.rebuilt} rebuilt"
            f" ({files.repointed} revisit records repointed)",
            f"took {self.seconds:.2f} s",
        ]


def _frozen_uri(database: Path) -> str:
    """Read-only and immutable: SQLite takes no lock and creates no file beside it."""
    return f"{database.resolve().as_uri()}?mode=ro&immutable=1"


def read_source(folder: Path, *, check_listed: bool = True) -> Source:
    """Check that ``folder`` holds a crawl database this Gossamer can merge, closed cleanly,
    that lists every page its WARC files hold (``check_listed``: a catalogue, which reads no
    WARC file on one machine, leaves such pages out instead; ``store/catalogue.py``)."""
    refuse_catalogue(folder, "give the folders it reads instead")
    database = folder / "crawl.db"
    wal = folder / "crawl.db-wal"
    if wal.is_file() and wal.stat().st_size:
        raise StoreError(
            f"{database} was not closed cleanly (its crawl was killed?): resume that crawl"
            f" or run 'gossamer recover {folder}' before merging it"
        )
    with faults("read", database):
        conn = sqlite3.connect(_frozen_uri(database), uri=True)
        try:
            tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master")}
            meta = dict(conn.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        finally:
            conn.close()
    version = meta.get("schema_version")
    if not tables >= _TABLES or version is None:
        raise StoreError(f"{database} is not a Gossamer crawl database")
    if version != str(SCHEMA_VERSION):
        raise StoreError(
            f"{database} has schema version {version}; this Gossamer merges version"
            f" {SCHEMA_VERSION}: run 'gossamer recover {folder}' to upgrade it first"
        )
    if check_listed:
        require_listed(folder, _frozen_uri(database))  # no archived page left out
    try:
        created = float(meta.get("created_at", "inf"))
    except ValueError:
        created = float("inf")
    return Source(folder, created, _snapshot(folder, meta.get("stats")))


def _snapshot(folder: Path, saved: str | None) -> dict[str, Any] | None:
    """The crawl's saved statistics: ``meta.stats`` (a crawl, a resume, a recovery) or else
    ``reports/stats.json`` (what a worker of a shared crawl leaves)."""
    try:
        text = saved if saved else (folder / _STATS_FILE).read_text(encoding="utf-8")
        value = json.loads(text)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def combined_snapshot(snapshots: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The saved statistics of the merged crawl, from its sources': what the rows cannot
    give (refusals by robots.txt and scope, trap errors, robots.txt status, sitemaps found)
    added up or united. The workers ran side by side: the crawl lasted as long as the
    longest of them, and its concurrency is theirs added up."""
    errors: Counter[str] = Counter()
    merged: dict[str, Any] = {"robots_status": {}, "sitemaps": {}}
    totals = dict.fromkeys(
        ("skipped_robots", "skipped_other", "session_ids_stripped", "concurrency"), 0
    )
    duration = 0.0
    scoped = CrawlStats()  # refusals by scope rule, pages by other language: added up
    for snapshot in snapshots:
        scoped.carry_scope(snapshot)
        for key in totals:
            totals[key] += int(_number(snapshot.get(key)))
        duration = max(duration, _number(snapshot.get("duration_seconds")))
        for kind, count in _mapping(snapshot, "errors").items():
            errors[str(kind)] += int(_number(count))
        for key in ("robots_status", "sitemaps"):
            merged[key].update(_mapping(snapshot, key))
    return (
        merged
        | totals
        | {
            "duration_seconds": duration,
            "errors": dict(errors),
            "skipped_scope": dict(scoped.skipped_scope),
            "other_languages": dict(scoped.other_languages),
        }
    )


def _number(value: Any) -> float:
    """A figure of a saved snapshot; 0 for anything else (the file is another process's)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) else 0.0


def _mapping(snapshot: dict[str, Any], key: str) -> dict[str, Any]:
    value = snapshot.get(key)
    return value if isinstance(value, dict) else {}


def merge_crawls(
    out: Path,
    folders: Sequence[Path],
    *,
    finish: Callable[[Path, Sequence[Source]], None] | None = None,
) -> MergeSummary:
    """Merge the crawl folders ``folders`` into the new folder ``out`` (absent or empty).

    ``finish`` completes the built folder (the reports) before it is published as ``out``.
    """
    started = time.perf_counter()
    sources = [read_source(folder) for folder in folders]
    with scratch_folder(out.resolve()) as partial:
        summary = _build(partial, sources)
        if finish is not None:
            finish(partial, sources)
    seconds = time.perf_counter() - started
    return MergeSummary(out.resolve(), len(sources), *summary, seconds=seconds)


def _build(partial: Path, sources: Sequence[Source]) -> tuple[int, int, int, int, Placed]:
    warc = partial / "warc"
    warc.mkdir()
    placed = Placed()
    plans = plan_names([source.folder for source in sources])
    relocations = [
        place_files(source.folder, warc, plan, placed)
        for source, plan in zip(sources, plans, strict=True)
    ]
    folders = [source.folder for source in sources]
    lines = merge_index(partial / "index.cdxj", list(zip(folders, relocations, strict=True)))
    pages, urls, links = merge_databases(partial / "crawl.db", sources, relocations)
    return pages, urls, links, lines, placed


def merge_databases(
    database: Path, sources: Sequence[Source], relocations: Sequence[Relocation]
) -> tuple[int, int, int]:
    """Create ``database`` and fill it from every source's ``crawl.db``; (pages, URLs, links)."""
    created = min((source.created_at for source in sources), default=time.time())
    created = created if created != float("inf") else time.time()
    with MetadataDB(database, clock=lambda: created) as db:
        db.set_meta("merged_from", json.dumps([str(s.folder.resolve()) for s in sources]))
    with faults("write", database):
        conn = sqlite3.connect(database.resolve().as_uri(), uri=True, isolation_level=None)
        try:
            # The folder is thrown away unless the merge completes: no need to sync each step.
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
            conn.execute("CREATE TEMP TABLE ids (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
            for source, relocation in zip(sources, relocations, strict=True):
                _merge_one(conn, source, relocation)
            counts = [
                conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                for table in ("pages", "urls", "links")
            ]
        finally:
            conn.close()
    return counts[0], counts[1], counts[2]


def _merge_one(conn: sqlite3.Connection, source: Source, relocation: Relocation) -> None:
    conn.create_function("gossamer_warc_name", 1, relocation.name, deterministic=True)
    conn.create_function("gossamer_warc_offset", 2, relocation.offset, deterministic=True)
    conn.create_function("gossamer_warc_length", 3, relocation.length, deterministic=True)
    conn.execute("ATTACH DATABASE ? AS src", (_frozen_uri(source.folder / "crawl.db"),))
    try:
        conn.execute("BEGIN")
        for statement in _STEPS:
            conn.execute(statement)
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("DETACH DATABASE src")
