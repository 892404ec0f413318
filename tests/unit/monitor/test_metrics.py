"""/metrics: the status in the Prometheus text format, read back by prometheus_client."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from gossamer.monitor.metrics import render_metrics
from gossamer.monitor.status import LoopFigures, crawl_status, status_from_report
from gossamer.stats import CrawlStats


def parsed(status: dict[str, Any]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = render_metrics(status).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def stats() -> CrawlStats:
    counted = CrawlStats(started=1000.0, concurrency=4)
    counted.pages, counted.requests, counted.responses, counted.bytes = 7, 12, 11, 4096
    counted.statuses.update({200: 7, 301: 1, 404: 2, 503: 1})
    counted.errors.update({"http_404": 2, "timeout": 1})
    counted.html_pages = 6
    for seconds in (0.004, 0.03, 0.03, 2.0, 45.0):
        counted.record_response("a.test", seconds)
    return counted


def test_counters_are_the_snapshot() -> None:
    crawl = stats()
    samples = parsed(status_from_report(crawl.snapshot(1010.0)))
    assert samples[("gossamer_pages_total", ())] == 7
    assert samples[("gossamer_requests_total", ())] == 12
    assert samples[("gossamer_bytes_total", ())] == 4096
    assert samples[("gossamer_html_pages_total", ())] == 6
    by_class = {
        labels[0][1]: value
        for (name, labels), value in samples.items()
        if name == "gossamer_http_responses_total"
    }
    assert by_class == {"2xx": 7, "3xx": 1, "4xx": 2, "5xx": 1}
    assert samples[("gossamer_errors_total", (("kind", "timeout"),))] == 1
    assert samples[("gossamer_crawl_state", (("state", "not running"),))] == 1


def test_the_latency_histogram_is_cumulative() -> None:
    samples = parsed(status_from_report(stats().snapshot(1010.0)))
    bucket = "gossamer_fetch_duration_seconds_bucket"
    assert samples[(bucket, (("le", "0.005"),))] == 1
    assert samples[(bucket, (("le", "0.05"),))] == 3
    assert samples[(bucket, (("le", "30.0"),))] == 4
    assert samples[(bucket, (("le", "+Inf"),))] == 5
    assert samples[("gossamer_fetch_duration_seconds_count", ())] == 5
    assert samples[("gossamer_fetch_duration_seconds_sum", ())] == 0.004 + 0.06 + 2.0 + 45.0


def test_per_worker_figures_and_gauges() -> None:
    figures = LoopFigures("paused", "", 0, 25, 4, 1, 1, 4, None, None)
    status = crawl_status(stats(), figures, lambda _: None, worker="local", now=1010.0)
    samples = parsed(status)
    assert samples[("gossamer_worker_pages_total", (("worker", "local"),))] == 7
    assert samples[("gossamer_worker_heartbeat_age_seconds", (("worker", "local"),))] == 0
    assert samples[("gossamer_queue_size", ())] == 25
    assert samples[("gossamer_hosts", (("state", "waiting"),))] == 2
    assert samples[("gossamer_crawl_state", (("state", "paused"),))] == 1
    assert samples[("gossamer_crawl_state", (("state", "running"),))] == 0
