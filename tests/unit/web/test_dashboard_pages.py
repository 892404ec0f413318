"""The Crawl page and its read-only routes: headers, events, metrics, chart, report; and the
search side of a folder not indexed yet."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gossamer.engine.control import ControlServer
from gossamer.monitor.channel import socket_path
from gossamer.monitor.report import write_report
from gossamer.stats import CrawlStats
from gossamer.web import make_app
from gossamer.web.dashboard import DASHBOARD_POLICY

from ..index.fake_crawl import make_crawl, search_corpus
from .served import Client, assert_secured, serve_and_check


def finished_stats() -> CrawlStats:
    stats = CrawlStats(started=1000.0, concurrency=4)
    stats.pages, stats.requests, stats.responses, stats.bytes = 12, 15, 14, 9000
    stats.statuses.update({200: 12, 404: 2})
    stats.errors.update({"http_404": 2, "timeout": 1})
    for second in range(5):
        stats.sample(1000.0 + second)
    return stats


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished crawl, not indexed: stats.json and report.html in its reports."""
    crawl = make_crawl(tmp_path_factory.mktemp("dash") / "crawl", search_corpus())
    stats = finished_stats()
    (crawl / "reports").mkdir(exist_ok=True)
    (crawl / "reports" / "stats.json").write_text(json.dumps(stats.snapshot(1010.0)))
    write_report(crawl, stats, now=1010.0)
    return crawl


class Live:
    def __init__(self) -> None:
        self.pages = 1

    def status(self) -> dict[str, Any]:
        return {
            "source": "live",
            "state": "running",
            "time": 1.0,
            "totals": {"pages": self.pages, "fetch_seconds": {}, "hourly": {}},
            "workers": [],
            "timeline": {"step": 1.0, "t": [0.0, 1.0], "pages": [0, self.pages]},
        }

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        return {"ok": True}


def events(body: bytes) -> list[dict[str, Any]]:
    found = []
    for block in body.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if lines.get("event") == "status":
            found.append(json.loads(lines["data"]))
    return found


def test_the_crawl_page_runs_our_script_only(folder: Path) -> None:
    async def check(client: Client) -> None:
        page = await client.get("/crawl")
        assert page.status == 200
        assert page.headers["Content-Security-Policy"] == DASHBOARD_POLICY
        assert "require-trusted-types-for 'script'" in DASHBOARD_POLICY
        assert "'unsafe-inline'" not in DASHBOARD_POLICY
        assert page.headers["X-Frame-Options"] == "DENY"
        text = await page.text()
        assert '<script src="/crawl/dashboard.js" defer></script>' in text
        assert text.count("<script") == 1
        assert '<a href="/crawl/report">' in text
        script = await client.get("/crawl/dashboard.js")
        assert script.content_type == "text/javascript"
        assert "innerHTML" not in await script.text()
        assert_secured((await client.get("/crawl/status.json")).headers)

    serve_and_check(make_app(folder), check)


def test_with_no_crawl_running_the_events_are_the_last_stats_then_a_retry(
    folder: Path,
) -> None:
    async def check(client: Client) -> None:
        response = await client.get("/crawl/events")
        assert response.content_type == "text/event-stream"
        assert_secured(response.headers)
        body = await response.read()
        [status] = events(body)
        assert status["state"] == "not running" and status["source"] == "report"
        assert status["totals"]["pages"] == 12
        assert "timeline" not in status and "fetch_seconds" not in status["totals"]
        assert body.endswith(b"retry: 5000\n\n")

    serve_and_check(make_app(folder), check)


def test_a_running_crawl_is_pushed_as_it_changes(tmp_path: Path) -> None:
    crawl_dir = make_crawl(tmp_path / "crawl", search_corpus())
    live = Live()

    async def check(client: Client) -> None:
        async with ControlServer(socket_path(crawl_dir), live) as server:
            response = await client.get("/crawl/events")
            first = await response.content.readuntil(b"\n\n")
            assert json.loads(first.split(b"data: ", 1)[1])["totals"]["pages"] == 1
            live.pages = 7
            server.publish()
            second = await response.content.readuntil(b"\n\n")
            status = json.loads(second.split(b"data: ", 1)[1])
            assert status["totals"]["pages"] == 7 and status["samples"] == 2
            chart = await client.get("/crawl/chart.svg")
            assert chart.content_type == "image/svg+xml"
            assert (await chart.text()).startswith("<svg")
        # The crawl went away: the stream says so and ends.
        rest = await response.read()
        assert rest.endswith(b"retry: 5000\n\n")

    serve_and_check(make_app(crawl_dir), check)


def test_metrics_of_a_finished_crawl_are_its_stats_json(folder: Path) -> None:
    saved = json.loads((folder / "reports" / "stats.json").read_text())

    async def check(client: Client) -> None:
        response = await client.get("/metrics")
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        families = {
            family.name: family for family in text_string_to_metric_families(await response.text())
        }
        pages = families["gossamer_pages"].samples[0].value
        errors = {s.labels["kind"]: s.value for s in families["gossamer_errors"].samples}
        assert pages == saved["pages"]
        assert families["gossamer_bytes"].samples[0].value == saved["bytes"]
        assert errors == saved["errors"]

    serve_and_check(make_app(folder), check)


def test_the_report_is_served_under_its_own_policy(folder: Path, tmp_path: Path) -> None:
    async def check(client: Client) -> None:
        report = await client.get("/crawl/report")
        assert report.status == 200
        policy = report.headers["Content-Security-Policy"]
        assert policy.startswith("default-src 'none'") and "script" not in policy
        assert "<svg" in await report.text()

    serve_and_check(make_app(folder), check)
    bare = make_crawl(tmp_path / "bare", search_corpus())

    async def missing(client: Client) -> None:
        answer = await client.get("/crawl/report")
        assert answer.status == 404
        assert_secured(answer.headers)
        assert "/crawl/report" not in await (await client.get("/crawl")).text()

    serve_and_check(make_app(bare), missing)


def test_search_waits_for_the_index_and_says_so(folder: Path) -> None:
    async def check(client: Client) -> None:
        home = await client.get("/")
        assert home.status == 200
        text = await home.text()
        assert "Search is not ready" in text and "gossamer index" in text
        assert '<a href="/crawl">Crawl</a>' in text
        search = await client.get("/search", params={"q": "wal"})
        assert search.status == 503
        assert_secured(search.headers)

    serve_and_check(make_app(folder), check)
