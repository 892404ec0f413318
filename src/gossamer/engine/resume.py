"""Picking a crawl up again: after a clean stop, a crash, or the loss of its database.

The WARC files are the source of truth. Each response is written to them (and handed to the
OS) before its row reaches ``crawl.db``, whose writes are batched; so after ``kill -9`` the
database may lack the last few hundred exchanges, and the last record of the newest WARC file
of each writer may be torn. Every way back into a crawl folder runs the same sequence:

1. the caller takes the folder's lock (:class:`CrawlLock`) and opens ``crawl.db``;
2. :func:`level`: the torn tails, and only those, are cut off (a copy is kept beside the
   file); ``gossamer.engine.replay`` brings the database level with the WARC files without
   fetching anything; every queued but unfetched URL becomes disk backlog again;
3. the statistics are recounted from the rows (:func:`rebuild_stats`);
4. the frontier is rebuilt: seen-set, backlog, and the robots.txt answers still valid; the
   admitter that feeds it takes the trap families ``crawl.db`` keeps (``crawling.admission``),
   as the replay's admitter of step 2 does.

A crawl resumes with :func:`resume_crawl` (all of it), the coordinator of a ``--workers``
crawl runs step 2 and each worker steps 3-4 for its own hosts (:func:`restore_part`), and
``gossamer recover`` steps 2-3, into a fresh database when the old one is missing, corrupt or
incompatible.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gossamer.config import CrawlConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.folder import load_snapshot
from gossamer.crawling.recorder import ASKED_ON_A_GUESS, Recorder, note_robots
from gossamer.crawling.revisits import RECRAWL_SINCE, want_recrawl
from gossamer.engine.backlog import DatabaseBacklog, build_frontier, crawl_frontier
from gossamer.engine.partition import Part
from gossamer.engine.replay import Reconciliation, reconcile
from gossamer.fetch import LOCAL_FAULTS
from gossamer.frontier import Frontier
from gossamer.robots import RobotsRules, lasting_answer
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, recorded_files
from gossamer.store.cdxj import merge_worker_indexes, repair_cdxj
from gossamer.store.warcscan import CRAWL_NAME, Cut, crawl_files, repair_tail
from gossamer.urls import host_of, origin_of, path_query_of

log = logging.getLogger(__name__)

# Errors no row records: counted when they happen, carried from snapshot to snapshot. Faults
# of this machine or of the route to a proxy leave the URL without a row (a resume asks it).
_UNRECORDED_ERRORS = (
    frozenset({"bad_redirect", "redirect_chain", "parse_capped", "plugin_error"}) | LOCAL_FAULTS
)
# Snapshots written before issue 28 counted a stripped session id as this error; it is the
# ``session_ids_stripped`` figure now.
_OLD_SESSION_ERROR = "trap_session_id"
# Refusals recorded in rows but never archived (nothing of the body is kept): a database
# rebuilt from the WARC files lacks their rows, so the snapshot's count is the floor.
_UNARCHIVED_ERRORS = ("too_large", "skipped_type")
# Counters kept only in the snapshot, summed over runs.
_CARRIED_COUNTS = ("skipped_robots", "skipped_other", "session_ids_stripped")
_NO_LIMIT = 1 << 30  # a replay only deduplicates: its frontier never spills


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
    recorded = db.recorded_files() if db is not None else recorded_files(out / "crawl.db")
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


def catch_up(
    config: CrawlConfig,
    db: MetadataDB,
    cdxj: CdxjWriter,
    *,
    seeds: Sequence[tuple[str, ...]] = (),
    reindex: bool = False,
) -> Reconciliation:
    """Bring the database level with the WARC files, CDXJ lines into ``cdxj``.

    See ``gossamer.engine.replay``: missing rows are replayed through a recorder that writes
    no WARC, rows of records that are gone are removed and their URLs queued again, and
    damage and foreign files are reported. ``seeds`` are admitted first (``recover`` into an
    empty database); ``reindex`` indexes every record read, not only the replayed ones. Last,
    the link targets of fetched pages that were never queued are offered to admission again.
    """
    stats = CrawlStats()  # what replay counts is recounted from the rows afterwards
    sites = SiteRules.of(config)
    scratch = build_frontier(config.politeness, stats, window=_NO_LIMIT, sites=sites)
    scratch.restore(db.queued_urls(), {}, _budget_used(config, db))
    admitter = Admitter(config.scope, frontier=scratch, stats=stats, db=db, sites=sites)
    for urls in seeds:
        admitter.admit(urls[0], 0, None, fallbacks=urls[1:])
    recorder = Recorder(
        admitter=admitter,
        stats=stats,
        db=db,
        product=sites.product_for,
        respect_nofollow=config.politeness.respect_nofollow,
        max_redirects=config.fetch.max_redirects,
        sitemaps=config.scope.sitemaps,
        recrawl=config.recrawl,
        max_retries=config.politeness.max_retries,
    )
    outcome = reconcile(
        config.out / "warc",
        db,
        recorder,
        cdxj,
        reindex=reindex,
        max_decoded=config.fetch.max_decoded,
    )
    if config.workers > 1 and not config.politeness.respect_nofollow:
        # A link handed to another worker is recorded by that worker; a crash between the
        # two loses it (one process records a page and its links in one transaction). Admission
        # again refuses what it refused the first time. (The links table also keeps nofollow
        # links, so this is left out when those are honoured.)
        for url, depth, referrer in list(db.unqueued_links()):
            admitter.admit(url, depth, referrer)
    return outcome


@dataclass(frozen=True, slots=True)
class Leveled:
    """What bringing a crawl folder level with its WARC files found and did."""

    cuts: tuple[Cut, ...]  # torn tails cut off (each kept in a .torn file)
    outcome: Reconciliation
    backlog: dict[str, int]  # unfetched URLs per host, now disk backlog


def level(
    config: CrawlConfig,
    db: MetadataDB,
    *,
    index: Path | None = None,
    seeds: Sequence[tuple[str, ...]] = (),
    reindex: bool = False,
    sort_index: bool = True,
) -> Leveled:
    """Step 2 of every recovery, under the caller's lock: cut the torn tails, replay what
    ``crawl.db`` missed (CDXJ lines into ``index``, by default the crawl's ``index.cdxj``),
    and turn every queued but unfetched URL into disk backlog.

    ``sort_index`` False leaves the index to be sorted by the writer that appends next.
    """
    cuts = repair_tails(config.out, db)
    cdxj = CdxjWriter(index or config.out / "index.cdxj")
    try:
        outcome = catch_up(config, db, cdxj, seeds=seeds, reindex=reindex)
    finally:
        cdxj.close(sort=sort_index)
    want_recrawl(db)  # a recrawl just begun: its pages become backlog with the rest
    return Leveled(tuple(cuts), outcome, db.prepare_resume())


def resume_crawl(
    config: CrawlConfig, db: MetadataDB, fallbacks: Mapping[str, tuple[str, ...]] | None = None
) -> tuple[CrawlStats, Frontier]:
    """The whole sequence for one crawler picking its folder up: level, stats, frontier.

    Run before the crawl opens its WARC and CDXJ writers, so the torn tail of the newest
    WARC file is cut before a new file is started. ``fallbacks`` are the seeds' other forms
    (``backlog.seed_fallbacks``), for seeds still queued.
    """
    saved = load_snapshot(db)
    leveled = level(config, db, sort_index=False)  # the crawl's index writer sorts at its end
    # A --workers run killed before its end left its workers' indexes unmerged.
    merge_worker_indexes(config.out, sort=False)
    stats = rebuild_stats(db, saved, config.concurrency)
    note = complete_note(config, db, stats.pages)
    # A complete crawl's URLs left are all refused again on sight: not queued, so each
    # refusal stays counted once.
    backlog = {} if note else leveled.backlog
    frontier = _frontier(
        config, db, stats, seen=db.queued_urls(), backlog=backlog, fallbacks=fallbacks
    )
    if note:
        log.warning("%s", note)
    else:
        log.warning(
            "resuming crawl in %s: %d pages so far, %d URLs queued, %d records replayed",
            config.out,
            stats.pages,
            frontier.pending,
            leveled.outcome.replayed,
        )
    return stats, frontier


def complete_note(config: CrawlConfig, db: MetadataDB, pages: int) -> str:
    """What to say when the crawl in a levelled folder is complete, else "".

    Complete: every URL still queued is one that a robots.txt answer kept and still valid
    refuses (the frontier refuses it again on sight). A URL of an origin whose robots.txt is
    not known, or no longer valid, may be fetchable: the crawl is not complete.
    """
    if not all(refused_by_robots(config, db, now=time.time())):
        return ""
    return (
        f"the crawl in {config.out} is complete ({pages} pages): nothing is left to fetch;"
        " to ask its pages again, add --recrawl (or start a new crawl in another folder)"
    )


def refused_by_robots(
    config: CrawlConfig, db: MetadataDB, *, now: float | None = None
) -> Iterator[bool]:
    """For each URL queued but never fetched: whether the robots.txt answer ``crawl.db``
    keeps for its origin refuses it. With ``now``, only answers still valid then count."""
    product = SiteRules.of(config).product_for
    ttl = config.politeness.robots_ttl
    rules: dict[str, RobotsRules] = {}
    for origin, status, body, fetched_at in db.robots_answers():
        if now is None or fetched_at + ttl > now:
            rules[origin] = lasting_answer(status, body, product(origin)).rules
    for url in db.uncrawled_urls():
        kept = rules.get(origin_of(url))
        yield kept is not None and not kept.is_allowed(path_query_of(url))


def restore_part(
    config: CrawlConfig,
    db: MetadataDB,
    part: Part,
    fallbacks: Mapping[str, tuple[str, ...]] | None = None,
) -> tuple[CrawlStats, Frontier]:
    """A worker's share of a resumed crawl (the coordinator already levelled the folder):
    statistics and frontier of the hosts it owns."""
    saved = load_snapshot(db)
    stats = rebuild_stats(db, None, config.concurrency, keep=part.mine_host)
    if saved:
        stats.elapsed_before = float(saved.get("duration_seconds", 0.0))
    backlog = {host: n for host, n in db.backlog_counts().items() if part.mine_host(host)}
    seen = (url for url in db.queued_urls() if part.mine(url))
    return stats, _frontier(
        config,
        db,
        stats,
        seen=seen,
        backlog=backlog,
        keep=part.mine,
        keep_host=part.mine_host,
        fallbacks=fallbacks,
    )


def _frontier(
    config: CrawlConfig,
    db: MetadataDB,
    stats: CrawlStats,
    *,
    seen: Iterable[str],
    backlog: dict[str, int],
    keep: Callable[[str], bool] = lambda origin: True,
    keep_host: Callable[[str], bool] = lambda host: True,
    fallbacks: Mapping[str, tuple[str, ...]] | None = None,
) -> Frontier:
    """Step 4: the frontier with its seen-set, its disk backlog (which gives queued seeds
    their fallbacks back) and the valid robots.txt answers of the origins ``keep`` accepts."""
    disk = DatabaseBacklog(db, fallbacks)
    frontier = crawl_frontier(config, stats, disk)
    frontier.restore(seen, backlog, _budget_used(config, db, keep_host))
    restore_robots(config, db, frontier, stats, keep=keep)
    return frontier


def _budget_used(
    config: CrawlConfig, db: MetadataDB, keep_host: Callable[[str], bool] = lambda host: True
) -> dict[str, int] | None:
    """URLs each host has been given in earlier runs, when a per-host budget is set: the
    budget holds over every run, so a resume does not hand a trap a fresh share."""
    if config.scope.max_pages_per_host is None:
        return None
    return {host: n for host, n in db.urls_per_host().items() if keep_host(host)}


def restore_robots(
    config: CrawlConfig,
    db: MetadataDB,
    frontier: Frontier,
    stats: CrawlStats,
    *,
    keep: Callable[[str], bool] = lambda origin: True,
    now: float | None = None,
) -> int:
    """Install every kept robots.txt answer that is still valid, with the lifetime it has
    left, so it is not fetched again; how many."""
    ttl = config.politeness.robots_ttl
    now = time.time() if now is None else now
    product = SiteRules.of(config).product_for
    restored = 0
    for origin, status, body, fetched_at in db.robots_answers():
        left = fetched_at + ttl - now
        if left <= 0 or not keep(origin):
            continue
        answer = lasting_answer(status, body, product(origin))
        note_robots(stats, host_of(origin), answer)
        frontier.set_robots(origin, answer.rules, ttl=left)
        restored += 1
    return restored


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
        elif status >= 400 and not (kind in ASKED_ON_A_GUESS and status in (404, 410)):
            stats.record_error(f"http_{status}", host)  # (as the live crawl counts them)
        if 300 <= status < 400:
            stats.redirects += 1
        if kind == "page":
            stats.pages += 1
            entry.pages += 1
            stats.hourly[int(max(0.0, (fetched_at or created) - created) // 3600)] += 1
    stats.discovered = db.discovered_count()
    stats.render.update(db.render_counts())
    since = db.get_meta(RECRAWL_SINCE)
    if since is not None:  # the latest recrawl's answers, from its schedule rows
        stats.recrawl.update(db.recrawl_counts(float(since)))
    if saved:
        _carry(stats, saved)
    return stats


def _carry(stats: CrawlStats, saved: dict[str, Any]) -> None:
    """Restore what the rows cannot give from a saved snapshot (see ``save_snapshot``)."""
    stats.skipped_robots = int(saved.get("skipped_robots", 0))
    stats.skipped_other = int(saved.get("skipped_other", 0))
    stats.session_ids_stripped = int(saved.get("session_ids_stripped", 0))
    # A peak over the whole crawl: the running crawl raises it if it goes higher.
    stats.max_in_flight = int(saved.get("max_in_flight", 0))
    stats.elapsed_before = float(saved.get("duration_seconds", 0.0))
    errors = saved.get("errors")
    for kind, count in (errors if isinstance(errors, dict) else {}).items():
        if kind == _OLD_SESSION_ERROR:
            stats.session_ids_stripped += int(count)
        elif kind.startswith("trap_") or kind in _UNRECORDED_ERRORS:
            # Scope refusals and bad redirects are counted when a URL is refused, not in a row.
            stats.errors[kind] = int(count)
        elif kind in _UNARCHIVED_ERRORS:
            stats.errors[kind] = max(stats.errors[kind], int(count))
    robots = saved.get("robots_status")
    for host, status in (robots if isinstance(robots, dict) else {}).items():
        stats.host(str(host)).robots_status = str(status)
    sitemaps = saved.get("sitemaps")
    for host, urls in (sitemaps if isinstance(sitemaps, dict) else {}).items():
        stats.sitemaps.setdefault(str(host), [str(url) for url in urls])
    stats.carry_scope(saved)  # refusals by scope rule, pages by other language


def carry_runs(
    saved: dict[str, Any] | None, runs: list[dict[str, Any]], duration: float
) -> dict[str, Any]:
    """One snapshot of what the rows cannot give, for the whole crawl: the earlier runs'
    (``saved``) plus this run's workers' (each counted from zero), as ``_carry`` reads it."""
    earlier = saved or {}
    errors: dict[str, int] = {}
    robots: dict[str, str] = dict(earlier.get("robots_status", {}))
    sitemaps: dict[str, list[str]] = dict(earlier.get("sitemaps", {}))
    for source in (earlier, *runs):
        for kind, count in dict(source.get("errors", {})).items():
            if kind.startswith("trap_") or kind in _UNRECORDED_ERRORS:
                errors[kind] = errors.get(kind, 0) + int(count)
    for run in runs:
        robots.update(run.get("robots_status", {}))
        sitemaps.update(run.get("sitemaps", {}))
    scoped = CrawlStats()
    for source in (earlier, *runs):
        scoped.carry_scope(source)
    return {
        name: int(earlier.get(name, 0)) + sum(int(run.get(name, 0)) for run in runs)
        for name in _CARRIED_COUNTS
    } | {
        "errors": errors,
        "duration_seconds": duration,
        "robots_status": robots,
        "sitemaps": sitemaps,
        "skipped_scope": dict(scoped.skipped_scope),
        "other_languages": dict(scoped.other_languages),
    }
