"""reports/report.html: self-contained, escaped, with its four charts."""

from __future__ import annotations

import re
from pathlib import Path

from gossamer.monitor.report import REPORT_FILE, report_html, write_report
from gossamer.stats import CrawlStats

HOSTILE = '<img src=x onerror="alert(1)">.test'


def crawled() -> CrawlStats:
    stats = CrawlStats(started=1000.0, concurrency=4)
    stats.max_in_flight = 3
    for second in range(30):
        stats.pages = second * 3
        stats.errors["timeout"] = second // 10
        stats.sample(1000.0 + second)
    stats.statuses.update({200: 87, 404: 2})
    stats.host("a.test").pages = 80
    stats.host(HOSTILE).pages = 7
    stats.errors[HOSTILE] = 1
    for seconds in (0.02, 0.2, 1.5):
        stats.record_response("a.test", seconds)
    return stats


def test_the_report_needs_no_network_and_runs_nothing() -> None:
    page = report_html(crawled(), now=1030.0)
    assert page.count("<svg") == 4
    assert "<script" not in page
    assert "default-src 'none'" in page
    # Nothing is loaded from anywhere: no element with a src or href other than an SVG
    # reference inside the page (xlink:href="#..."), no url() in styles.
    tags = re.findall(r"<[^>]*>", page)
    assert not [t for t in tags if re.search(r'\s(?:src|href)="(?!#)', t)]
    assert "url(http" not in page and "@import" not in page
    assert "Crawled 87 in 30.00 seconds (at most 3 simultaneous requests, 4 configured)" in page


def test_crawled_names_stay_text() -> None:
    page = report_html(crawled(), now=1030.0)
    assert HOSTILE not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;.test" in page


def test_the_report_replaces_the_old_one_whole(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / REPORT_FILE).write_text("old")
    path = write_report(tmp_path, crawled(), now=1030.0)
    assert path == tmp_path / "reports" / REPORT_FILE
    assert path.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in (tmp_path / "reports").iterdir()] == [REPORT_FILE]


def test_an_empty_crawl_still_gets_a_report() -> None:
    page = report_html(CrawlStats(started=1000.0), now=1000.5)
    assert page.count("<svg") == 4
    assert "no samples yet" in page and "no responses" in page and "no pages" in page
