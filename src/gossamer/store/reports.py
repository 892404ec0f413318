"""Store stage, reports: plain-text and TSV summaries of a crawl under ``DIR/reports``.

Data flow: the engine's ``CrawlStats`` counters and the metadata database (``crawl.db``)
-> **these report files**, written during the crawl (on a thread of their own, see
``engine.crawler``) and at its end.

Every file is written to a temporary name beside it, synced, then renamed over the old
one, so a crash at any moment leaves either the previous or the new complete version. The
temporary file is created as the WARC files and ``crawl.db`` are, with the mode the process's
umask leaves of ``rw-rw-rw-`` (``mkstemp`` would make it private to the owner).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from gossamer.errors import StoreError
from gossamer.stats import CrawlStats
from gossamer.store.domains import DomainRow, domain_rows
from gossamer.store.reads import CrawlReads
from gossamer.store.tempfiles import create_beside
from gossamer.urls import origin_of

if TYPE_CHECKING:
    from gossamer.crawling.scope import Scope

__all__ = ["ending_line", "render_lines", "summary_line", "write_reports"]

REPORTS_FOLDER = "reports"

# Why a crawl ended, as its last printed line says it: the engines' reason -> a user's words.
# The first word stays the engine's (scripts match "stopped: target"), except a stop asked
# for, whose reason "stopped" would read "stopped: stopped".
_ENDINGS = {
    "exhausted": "exhausted (no URL left to fetch)",
    "finished": "finished (no URL left in the shared crawl)",
    "target": "target (the --max-pages target was reached)",
    "time": "time (the --time limit was reached)",
    "signal": "signal (interrupted; the crawl can be resumed)",
    "stopped": "on request (gossamer ctl stop, or Stop on the Crawl page; the crawl can be"
    " resumed)",
    "store error": "store error (writing to the output folder failed)",
}


def write_reports(
    directory: Path,
    stats: CrawlStats,
    db: CrawlReads,
    now: float | None = None,
    visiting: Collection[str] = (),
    *,
    scope: Scope | None = None,
) -> list[DomainRow]:
    """Write (or rewrite) every report for the crawl whose output folder is ``directory``;
    the domain registry's rows, for the caller to put in ``crawl.db`` too.

    ``db`` is the crawl's own ``MetadataDB``, or a ``CrawlRecords`` reader on another thread
    (where ``stats`` must be a copy the crawl does not change meanwhile). ``visiting`` names
    the hosts with requests in flight or handed out. ``scope``: the crawl's scope rules, so
    the links they refused are listed in ``discovered-not-crawled.txt`` with the rule.
    """
    folder = directory / REPORTS_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create reports folder {folder}: {exc.strerror}") from exc
    snapshot = stats.snapshot(now)
    _replace(folder / "crawled.txt", _crawled_lines(db))
    _replace(folder / "discovered-not-crawled.txt", _uncrawled_lines(db, stats, scope))
    _replace(folder / "stats.json", [json.dumps(snapshot, indent=2) + "\n"])
    _replace(folder / "stats.txt", _stats_lines(snapshot, _side_statuses(db)))
    _replace(folder / "hourly.tsv", _hourly_lines(stats))
    domains = domain_rows(stats, db, visiting)
    _replace(folder / "domains.tsv", _domain_lines(domains))
    _replace(folder / "sitemaps.tsv", _sitemap_lines(stats))
    return domains


def summary_line(pages: int, duration: float, reached: int, configured: int, average: float) -> str:
    """The one-line result of a crawl, as the last line of ``stats.txt`` and the CLI print.

    ``reached`` is the most requests the crawl had under way at once, ``configured`` the
    concurrency it was allowed; a crawl that did not count the first (``--engine threads``:
    0) says only the second, as what it is. ``average`` is the mean request-to-response
    time, as seed 001 reports it: time between request and response only, not wall-clock
    time divided by pages.
    """
    at_once = (
        f"at most {reached} simultaneous requests, {configured} configured"
        if reached > 0
        else f"{configured} simultaneous requests configured"
    )
    return (
        f"Crawled {pages} in {duration:.2f} seconds ({at_once}), {average:.5f} s average per page"
    )


def ending_line(reason: str) -> str:
    """The line saying why the crawl stopped, from the engine's ``reason``."""
    return f"stopped: {_ENDINGS.get(reason, reason)}"


def _uncrawled_lines(db: CrawlReads, stats: CrawlStats, scope: Scope | None) -> Iterator[str]:
    # A URL left behind because its origin's robots.txt stayed unavailable says so, after a
    # tab: a resume retries those. Every other queued URL is the bare URL.
    deferred = set(stats.deferred)
    for url in db.uncrawled_urls():
        if deferred and origin_of(url) in deferred:
            yield f"{url}\tdeferred: robots.txt unavailable, retried on resume\n"
        else:
            yield f"{url}\n"
    if scope is None or not scope.limited:
        return
    # Links never queued (redirect targets included) that the scope refuses, with the rule:
    # judged again here, as the rules are a pure function of the URL (and, for --scope seeds,
    # of its depth), so nothing is kept per refusal during the crawl.
    for url, depth, _referrer in db.unqueued_links():
        rule = scope.refusal(url)
        if rule is None and depth > 0 and not scope.follows_links:
            rule = "seeds"
        if rule is not None:
            yield f"{url}\tout of scope: {rule}\n"


def _crawled_lines(db: CrawlReads) -> Iterator[str]:
    # A fetch that failed below HTTP has status 0; its error kind says more than a 0.
    for url, status, error in db.page_statuses():
        outcome = f"error:{error}" if status == 0 and error else str(status)
        yield f"{url}\t{outcome}\n"


def _side_statuses(db: CrawlReads) -> dict[str, Counter[int]]:
    """Statuses of the robots.txt and sitemap exchanges, by purpose, from their rows: the
    part of the crawl's statuses that are no page's."""
    side: dict[str, Counter[int]] = {"robots": Counter(), "sitemap": Counter()}
    for _host, status, _error, _length, _elapsed, _at, _url, kind in db.page_facts():
        if status and kind in side:
            side[kind][status] += 1
    return side


def _statuses(counts: Iterable[tuple[object, int]]) -> str:
    return ", ".join(f"{code}: {n}" for code, n in counts)


def _status_lines(statuses: dict[str, int], side: dict[str, Counter[int]]) -> list[str]:
    # The statuses count every exchange, robots.txt and sitemaps included, while a missing
    # sitemap is no error: without these lines "404: 32" beside "http_404: 3" says nothing.
    lines = [f"statuses: {_statuses(statuses.items()) or 'none'}"]
    robots, sitemaps = side["robots"], side["sitemap"]
    if robots:
        lines.append(f"  of which robots.txt: {_statuses(sorted(robots.items()))}")
    if sitemaps:
        missing = sitemaps[404] + sitemaps[410]
        note = " (a missing sitemap is not counted as an error)" if missing else ""
        lines.append(f"  of which sitemaps: {_statuses(sorted(sitemaps.items()))}{note}")
    return lines


def _stats_lines(snapshot: dict[str, object], side: dict[str, Counter[int]]) -> list[str]:
    errors = _int_map(snapshot["errors"])
    pages = _as_int(snapshot["pages"])
    duration = _as_float(snapshot["duration_seconds"])
    by_kind = ", ".join(f"{kind}: {count}" for kind, count in sorted(errors.items()))
    lines = [
        f"pages: {pages}",
        f"bytes: {_as_int(snapshot['bytes'])} ({_human_bytes(_as_int(snapshot['bytes']))})",
        f"requests: {_as_int(snapshot['requests'])} "
        f"(robots.txt: {_as_int(snapshot['robots_requests'])})",
        f"responses: {_as_int(snapshot['responses'])}",
        *_status_lines(_int_map(snapshot["statuses"]), side),
        f"errors: {_as_int(snapshot['error_total'])}" + (f" ({by_kind})" if by_kind else ""),
        f"redirects: {_as_int(snapshot['redirects'])}",
        f"discovered: {_as_int(snapshot['discovered'])}",
        f"skipped by robots.txt: {_as_int(snapshot['skipped_robots'])}",
        _scope_line(
            _as_int(snapshot["skipped_other"]), _int_map(snapshot.get("skipped_scope", {}))
        ),
        *_language_lines(_int_map(snapshot.get("other_languages", {}))),
        *_recrawl_lines(_int_map(snapshot.get("recrawl", {}))),
        *render_lines(_int_map(snapshot.get("render", {}))),
        f"session ids stripped: {_as_int(snapshot['session_ids_stripped'])}"
        " (the URL without them is crawled)",
        f"average time per request: {_as_float(snapshot['avg_request_seconds']):.5f} s",
        f"pages per second: {_as_float(snapshot['pages_per_second']):.2f}",
        f"distinct domains: {_as_int(snapshot['domains'])}",
        f"duration: {duration:.2f} s",
        summary_line(
            pages,
            duration,
            _as_int(snapshot["max_in_flight"]),
            _as_int(snapshot["concurrency"]),
            _as_float(snapshot["avg_request_seconds"]),
        ),
    ]
    return [line + "\n" for line in lines]


def render_lines(counts: dict[str, int]) -> list[str]:
    """``rendered in a browser: 40 (38 settled, 2 unsettled)`` and, for pages that looked
    script-built but were not rendered, the hint to render them (gossamer.render)."""
    lines = []
    done = {kind: counts.get(kind, 0) for kind in ("rendered", "unsettled", "failed")}
    if any(done.values()):
        parts = ", ".join(f"{count:,} {kind}" for kind, count in done.items() if count)
        lines.append(f"rendered in a browser: {sum(done.values()):,} ({parts})")
    hint = counts.get("hint", 0)
    if hint:
        lines.append(
            f"looked script-built: {hint:,} page(s) with scripts and no links or little text,"
            " not rendered (try --render or --render-auto for their hosts)"
        )
    return lines


def _recrawl_lines(counts: dict[str, int]) -> list[str]:
    """``recrawl: 1,000 due: 850 not modified (304), ...; 12.3 MiB saved by 304s``: the latest
    recrawl's answers (crawling/recrawl.py), none before a crawl is first recrawled."""
    if not counts:
        return []
    names = (
        ("not_modified", "not modified (304)"),
        ("unchanged", "unchanged (same content)"),
        ("changed", "changed"),
        ("gone", "gone (404/410)"),
        ("failed", "failed (stored copy kept)"),
        ("new", "new pages"),
    )
    parts = ", ".join(f"{counts.get(key, 0):,} {label}" for key, label in names)
    saved, got, full = (counts.get(key, 0) for key in ("bytes_saved", "bytes", "bytes_full"))
    return [
        f"recrawl: {counts.get('due', 0):,} due: {parts}",
        f"recrawl bytes: {got:,} ({_human_bytes(got)}) fetched again, against {full:,}"
        f" ({_human_bytes(full)}) for whole copies; {saved:,} ({_human_bytes(saved)}) not"
        " sent thanks to 304s",
    ]


def _scope_line(total: int, by_rule: dict[str, int]) -> str:
    """``skipped by scope: domain 1,234, exclude 56, depth or trap 3``: the user's scope
    rules by name, then what the depth, trap and budget rules refused."""
    if not by_rule:
        return f"skipped by scope: {total:,}"
    parts = [f"{rule} {count:,}" for rule, count in sorted(by_rule.items(), key=_most)]
    rest = total - sum(by_rule.values())
    if rest > 0:
        parts.append(f"depth or trap {rest:,}")
    return "skipped by scope: " + ", ".join(parts)


def _language_lines(by_language: dict[str, int]) -> list[str]:
    if not by_language:
        return []
    counts = ", ".join(f"{lang} {n:,}" for lang, n in sorted(by_language.items(), key=_most))
    return [f"pages in other languages: {counts} (their links not followed)"]


def _most(item: tuple[str, int]) -> tuple[int, str]:
    return -item[1], item[0]


def _hourly_lines(stats: CrawlStats) -> Iterator[str]:
    yield "hour\tpages\n"
    if not stats.hourly:
        return
    # Quiet hours are listed with 0 so the series can be plotted as it is.
    for hour in range(max(stats.hourly) + 1):
        yield f"{hour}\t{stats.hourly.get(hour, 0)}\n"


def _sitemap_lines(stats: CrawlStats) -> Iterator[str]:
    # Sitemap lines of robots.txt files, recorded for whoever wants to seed from them.
    yield "host\tsitemap\n"
    for host in sorted(stats.sitemaps):
        for sitemap in stats.sitemaps[host]:
            yield f"{host}\t{sitemap}\n"


def _domain_lines(rows: Iterable[DomainRow]) -> Iterator[str]:
    # The columns of earlier versions first, then seed 001's: level-0 URLs, pages per
    # depth, and whether the host is being visited.
    yield "host\tpages\tbytes\ttime_spent\terrors\trobots_status\tseeds\tdepths\tin_visit\n"
    for row in rows:
        yield (
            f"{row.host}\t{row.pages}\t{row.bytes}\t{row.time_spent:.3f}\t{row.errors}\t"
            f"{row.robots_status}\t{row.seeds_text}\t{row.depths_text}\t{int(row.in_visit)}\n"
        )


def _replace(path: Path, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``path`` atomically: temp file, fsync, rename."""
    try:
        handle, temp = create_beside(path)
    except OSError as exc:
        raise StoreError(f"cannot write report {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.writelines(lines)
            out.flush()
            # Without the sync a power cut after the rename could leave an empty report.
            os.fsync(out.fileno())
        temp.replace(path)
    except OSError as exc:
        raise StoreError(f"cannot write report {path}: {exc.strerror}") from exc
    finally:
        # Still there only if something failed before the rename (a StoreError included).
        temp.unlink(missing_ok=True)


def _human_bytes(count: int) -> str:
    size = float(count)
    unit = "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size /= 1024
        unit = bigger
    return f"{count} B" if unit == "B" else f"{size:.1f} {unit}"


# The snapshot is a plain dict for JSON; these narrow its values back for formatting.


def _as_int(value: object) -> int:
    assert isinstance(value, int)
    return value


def _as_float(value: object) -> float:
    assert isinstance(value, int | float)
    return float(value)


def _int_map(value: object) -> dict[str, int]:
    assert isinstance(value, dict)
    return {str(key): int(count) for key, count in value.items()}
