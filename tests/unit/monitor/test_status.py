"""The live status: one crawl loop's, several workers' merged, and a finished folder's."""

from __future__ import annotations

import pytest

from gossamer.monitor.series import Timeline
from gossamer.monitor.status import (
    HostView,
    LoopFigures,
    crawl_status,
    eta,
    merge_statuses,
    status_from_report,
)
from gossamer.stats import CrawlStats

NOW = 1_000_000.0


def figures(**changes: object) -> LoopFigures:
    values: dict[str, object] = {
        "state": "running",
        "reason": "",
        "in_flight": 3,
        "queue": 40,
        "hosts_active": 10,
        "hosts_visiting": 3,
        "hosts_deferred": 2,
        "concurrency": 8,
        "max_pages": None,
        "time_limit": None,
    }
    values.update(changes)
    return LoopFigures(**values)  # type: ignore[arg-type]


def busy_stats() -> CrawlStats:
    stats = CrawlStats(started=NOW - 100, concurrency=8)
    for host, pages, seconds in (("a.test", 30, 0.1), ("b.test", 5, 2.0), ("c.test", 1, 0.5)):
        entry = stats.host(host)
        entry.pages = pages
        for _ in range(pages):
            stats.record_response(host, seconds)
        stats.pages += pages
    stats.record_stored("text/html; charset=utf-8")
    stats.record_stored("application/pdf")
    stats.record_stored("image/png")
    stats.errors["http_404"] = 2
    return stats


def view(name: str) -> HostView | None:
    if name == "b.test":
        return HostView(delay=2.0, crawl_delay=2.0, backoff=1.5, errors_in_row=1, in_flight=0)
    return None


def test_a_crawl_status_has_the_snapshot_as_totals_and_ranked_hosts() -> None:
    stats = busy_stats()
    status = crawl_status(stats, figures(), view, now=NOW)
    assert status["totals"] == stats.snapshot(NOW)
    assert status["totals"]["html_pages"] == 1 and status["totals"]["pdf_pages"] == 1
    assert status["hosts"] == {
        "active": 10,
        "visiting": 3,
        "waiting": 5,
        "deferred": 2,
        "known": 3,
    }
    assert [row["host"] for row in status["busiest"]] == ["a.test", "b.test", "c.test"]
    # c.test has one timed response: too few to be called slow.
    assert [row["host"] for row in status["slowest"]] == ["b.test", "a.test"]
    slow = status["slowest"][0]
    assert slow["avg_seconds"] == pytest.approx(2.0)
    assert (slow["delay"], slow["crawl_delay"], slow["backoff"]) == (2.0, 2.0, 1.5)
    assert status["busiest"][0]["delay"] is None  # no politeness state for that host
    [worker] = status["workers"]
    assert worker["pages"] == 36 and worker["leased_hosts"] == 3 and worker["heartbeat"] == NOW


def test_eta_is_the_nearer_of_the_page_target_and_the_time_limit() -> None:
    assert eta(100, 10.0, 200, 50.0, None) == 10.0
    assert eta(100, 10.0, 200, 50.0, 55.0) == 5.0
    assert eta(100, 0.0, 200, 50.0, None) is None
    assert eta(300, 10.0, 200, 50.0, None) == 0.0
    assert eta(1, 1.0, None, 0.0, None) is None
    stats = busy_stats()
    status = crawl_status(stats, figures(max_pages=136), view, now=NOW)
    # No timeline yet: the rate since the start (36 pages in 100 s).
    assert status["eta"] == pytest.approx(100 / 0.36)


def test_workers_merge_into_one_crawl() -> None:
    one, two = busy_stats(), CrawlStats(started=NOW - 100, concurrency=8)
    two.pages = 4
    two.host("d.test").pages = 4
    two.errors["http_404"] = 1
    two.errors["timeout"] = 3
    two.statuses[200] = 4
    two.record_response("d.test", 0.2)
    parts = {
        0: crawl_status(one, figures(), view, worker="worker 0", now=NOW),
        1: crawl_status(two, figures(state="paused"), view, worker="worker 1", now=NOW),
    }
    merged = merge_statuses(
        parts,
        state="pausing",
        reason="",
        elapsed=100.0,
        timeline=Timeline(),
        targets=(None, None),
        now=NOW,
    )
    totals = merged["totals"]
    assert totals["pages"] == 40
    assert totals["errors"] == {"http_404": 3, "timeout": 3}
    assert totals["fetch_seconds"]["counts"][0:3] == [0, 0, 0]
    assert sum(totals["fetch_seconds"]["counts"]) == 37
    assert totals["pages_per_second"] == pytest.approx(0.4)
    assert merged["queue"] == 80 and merged["hosts"]["active"] == 20
    assert [w["name"] for w in merged["workers"]] == ["worker 0", "worker 1"]
    assert merged["busiest"][0]["host"] == "a.test"
    assert "d.test" in [row["host"] for row in merged["busiest"]]


def test_a_finished_folder_shows_its_stats_json() -> None:
    stats = busy_stats()
    status = status_from_report(stats.snapshot(NOW), now=NOW)
    assert status["state"] == "not running" and status["source"] == "report"
    assert status["totals"] == stats.snapshot(NOW)
    assert status["workers"] == []
