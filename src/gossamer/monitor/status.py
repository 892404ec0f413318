"""Monitor, the live status: one JSON-able dict saying how a crawl is doing at this moment.

Data flow: ``CrawlStats`` + what the crawl loop knows (state, queue, hosts, fetches under way)
-> **status** -> the control channel (``engine/control.py``) -> ``gossamer serve``: the
dashboard, ``/metrics``. A ``--workers`` crawl's coordinator merges its workers' statuses with
:func:`merge_statuses`; a folder with no crawl running has the status of its last
``reports/stats.json`` (:func:`status_from_report`). Every producer gives the same shape, so a
later backend (a crawl sharing its frontier in Redis, say) only has to produce it too.

The shape (``version`` 1):

- ``source``: "live" (a running crawl, or its last word) or "report" (read from stats.json);
  ``state``: "running", "pausing" (paused, fetches still finishing), "paused", "stopping",
  "ended" or "not running"; ``reason``: why it stopped; ``time``: when this was taken (epoch);
- ``totals``: exactly ``CrawlStats.snapshot()``, the figures of ``reports/stats.json``;
- ``rates``: pages per second over the last minute and since the start; ``eta``: seconds to
  the page target or the time limit, whichever comes first; ``targets``;
- ``queue``, ``in_flight``, ``concurrency``, and ``hosts``: active (with work or a fetch under
  way), visiting (a fetch under way: leased), waiting (their delay or backoff), deferred
  (robots.txt unavailable);
- ``workers``: one row per crawl loop (one for a lone crawl); ``busiest`` and ``slowest``:
  a few hosts with their politeness state; ``timeline``: the ``Timeline``'s samples.
- a crawl shared through Redis adds ``hosts.takeover`` (leased to a worker silent past the
  lease TTL, counted in ``waiting``) and, per row, ``takeover_hosts``; such a row's ``state``
  is ``gone``.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gossamer.monitor.series import Histogram, Timeline
from gossamer.stats import CrawlStats, HostStats

__all__ = [
    "STATUS_VERSION",
    "HostView",
    "LoopFigures",
    "crawl_status",
    "eta",
    "merge_statuses",
    "status_from_report",
]

STATUS_VERSION = 1
TOP_HOSTS = 10
MIN_FETCHES = 2  # a host needs this many timed responses to be ranked among the slowest

Status = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HostView:
    """A host's politeness state, as the frontier holds it."""

    delay: float  # the gap kept between requests (the configured delay or its Crawl-delay)
    crawl_delay: float | None  # what robots.txt asks, if anything
    backoff: float  # seconds left before it may be asked again (delay, Retry-After, faults)
    errors_in_row: int
    in_flight: int


@dataclass(frozen=True, slots=True)
class LoopFigures:
    """What the crawl loop knows beside the counters."""

    state: str
    reason: str
    in_flight: int
    queue: int
    hosts_active: int
    hosts_visiting: int
    hosts_deferred: int
    concurrency: int
    max_pages: int | None
    time_limit: float | None


def eta(
    pages: int, rate: float | None, max_pages: int | None, elapsed: float, limit: float | None
) -> float | None:
    """Seconds until the page target (at ``rate``) or the time limit, whichever is first."""
    ends: list[float] = []
    if max_pages is not None and rate:
        ends.append(max(0, max_pages - pages) / rate)
    if limit is not None:
        ends.append(max(0.0, limit - elapsed))
    return min(ends) if ends else None


def crawl_status(
    stats: CrawlStats,
    figures: LoopFigures,
    host_view: Callable[[str], HostView | None],
    *,
    worker: str = "local",
    now: float | None = None,
) -> Status:
    """The status of one crawl loop (a lone crawl, or one worker of a ``--workers`` crawl)."""
    now = time.time() if now is None else now
    totals = stats.snapshot(now)
    elapsed = float(totals["duration_seconds"])  # type: ignore[arg-type]
    minute = stats.timeline.rate("pages", elapsed, stats.pages)
    rate = minute if minute is not None else float(totals["pages_per_second"])  # type: ignore[arg-type]
    waiting = max(0, figures.hosts_active - figures.hosts_visiting - figures.hosts_deferred)
    return {
        "version": STATUS_VERSION,
        "source": "live",
        "state": figures.state,
        "reason": figures.reason,
        "time": now,
        "totals": totals,
        "rates": {"minute": minute, "overall": totals["pages_per_second"]},
        "eta": eta(stats.pages, rate, figures.max_pages, elapsed, figures.time_limit),
        "targets": {"pages": figures.max_pages, "seconds": figures.time_limit},
        "queue": figures.queue,
        "in_flight": figures.in_flight,
        "concurrency": figures.concurrency,
        "hosts": {
            "active": figures.hosts_active,
            "visiting": figures.hosts_visiting,
            "waiting": waiting,
            "deferred": figures.hosts_deferred,
            "known": len(stats.hosts),
        },
        "workers": [
            {
                "name": worker,
                "state": figures.state,
                "pages": stats.pages,
                "rate": rate,
                "html_pages": stats.html_pages,
                "pdf_pages": stats.pdf_pages,
                "errors": totals["error_total"],
                "leased_hosts": figures.hosts_visiting,
                "in_flight": figures.in_flight,
                "heartbeat": now,
            }
        ],
        "busiest": _host_rows(_busiest(stats.hosts), stats.hosts, host_view),
        "slowest": _host_rows(_slowest(stats.hosts), stats.hosts, host_view),
        "timeline": stats.timeline.to_json(),
    }


def _busiest(hosts: Mapping[str, HostStats]) -> list[str]:
    return heapq.nlargest(
        TOP_HOSTS, (h for h in hosts if hosts[h].pages), key=lambda h: hosts[h].pages
    )


def _slowest(hosts: Mapping[str, HostStats]) -> list[str]:
    timed = (h for h, s in hosts.items() if s.fetches >= MIN_FETCHES)
    return heapq.nlargest(TOP_HOSTS, timed, key=lambda h: hosts[h].fetch_seconds / hosts[h].fetches)


def _host_rows(
    names: Iterable[str], hosts: Mapping[str, HostStats], view: Callable[[str], HostView | None]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for name in names:
        entry = hosts[name]
        state = view(name)
        rows.append(
            {
                "host": name,
                "pages": entry.pages,
                "errors": entry.errors,
                "avg_seconds": entry.fetch_seconds / entry.fetches if entry.fetches else None,
                "robots": entry.robots_status,
                "delay": state.delay if state else None,
                "crawl_delay": state.crawl_delay if state else None,
                "backoff": state.backoff if state else None,
                "errors_in_row": state.errors_in_row if state else None,
                "in_flight": state.in_flight if state else None,
            }
        )
    return rows


def status_from_report(totals: Mapping[str, Any], *, now: float | None = None) -> Status:
    """The status of a folder with no crawl running: its last ``reports/stats.json``."""
    return {
        "version": STATUS_VERSION,
        "source": "report",
        "state": "not running",
        "reason": "",
        "time": time.time() if now is None else now,
        "totals": dict(totals),
        "rates": {"minute": None, "overall": totals.get("pages_per_second", 0.0)},
        "eta": None,
        "targets": {"pages": None, "seconds": None},
        "queue": None,
        "in_flight": 0,
        "concurrency": totals.get("concurrency", 0),
        "hosts": {},
        "workers": [],
        "busiest": [],
        "slowest": [],
        "timeline": Timeline().to_json(),
    }


def merge_statuses(
    parts: Mapping[int, Status],
    *,
    state: str,
    reason: str,
    elapsed: float,
    timeline: Timeline,
    targets: tuple[int | None, float | None],
    now: float | None = None,
) -> Status:
    """The status of a ``--workers`` crawl from its workers' latest statuses (worker index ->
    status); ``timeline`` is the coordinator's own, sampled from the merged totals."""
    now = time.time() if now is None else now
    totals = merge_totals([p["totals"] for p in parts.values()], elapsed)
    minute = timeline.rate("pages", elapsed, int(totals["pages"]))
    rate = minute if minute is not None else float(totals["pages_per_second"])
    hosts: dict[str, int] = {}
    for part in parts.values():
        for key, value in part.get("hosts", {}).items():
            hosts[key] = hosts.get(key, 0) + int(value)
    workers = []
    for index in sorted(parts):
        for row in parts[index].get("workers", []):
            workers.append(row | {"name": f"worker {index}"})
    max_pages, limit = targets
    return {
        "version": STATUS_VERSION,
        "source": "live",
        "state": state,
        "reason": reason,
        "time": now,
        "totals": totals,
        "rates": {"minute": minute, "overall": totals["pages_per_second"]},
        "eta": eta(int(totals["pages"]), rate, max_pages, elapsed, limit),
        "targets": {"pages": max_pages, "seconds": limit},
        "queue": sum(int(p.get("queue") or 0) for p in parts.values()),
        "in_flight": sum(int(p.get("in_flight") or 0) for p in parts.values()),
        "concurrency": sum(int(p.get("concurrency") or 0) for p in parts.values()),
        "hosts": hosts,
        "workers": workers,
        "busiest": _top(parts.values(), "busiest", lambda row: row["pages"]),
        "slowest": _top(parts.values(), "slowest", lambda row: row["avg_seconds"] or 0.0),
        "timeline": timeline.to_json(),
    }


def _top(parts: Iterable[Status], key: str, order: Callable[[Any], float]) -> list[Any]:
    rows = [row for part in parts for row in part.get(key, [])]
    return heapq.nlargest(TOP_HOSTS, rows, key=order)


_SUMMED = (
    "pages",
    "requests",
    "responses",
    "bytes",
    "robots_requests",
    "discovered",
    "redirects",
    "skipped_robots",
    "skipped_other",
    "error_total",
    "domains",
    "concurrency",
    "html_pages",
    "pdf_pages",
    "max_in_flight",
)


def merge_totals(parts: list[Mapping[str, Any]], elapsed: float) -> dict[str, Any]:
    """Several workers' ``CrawlStats.snapshot()`` figures as one: counts added (the workers'
    hosts are disjoint), rates and averages recomputed over ``elapsed`` seconds."""
    merged: dict[str, Any] = {key: sum(int(p.get(key, 0)) for p in parts) for key in _SUMMED}
    for key in ("errors", "statuses", "hourly"):
        table: dict[str, int] = {}
        for part in parts:
            for name, count in part.get(key, {}).items():
                table[name] = table.get(name, 0) + int(count)
        merged[key] = dict(sorted(table.items()))
    timed = sum(
        float(p.get("avg_request_seconds", 0.0)) * int(p.get("responses", 0)) for p in parts
    )
    merged["avg_request_seconds"] = timed / merged["responses"] if merged["responses"] else 0.0
    merged["duration_seconds"] = elapsed
    merged["pages_per_second"] = merged["pages"] / elapsed if elapsed > 0 else 0.0
    merged["deferred"] = sorted({origin for p in parts for origin in p.get("deferred", [])})
    latency = Histogram()
    for part in parts:
        latency.add(Histogram.from_json(part.get("fetch_seconds")))
    merged["fetch_seconds"] = latency.to_json()
    return merged
