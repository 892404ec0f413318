"""Monitor, Prometheus metrics: a crawl's status in the Prometheus text format.

Data flow: live status (``monitor/status.py``, from the control channel or stats.json) ->
**metrics** -> ``GET /metrics`` of ``gossamer serve``.

The figures are the crawl's own counters, not counters of this process, so each answer builds
its metric families from the status at hand (prometheus_client's custom-collector way) on a
registry of its own, and ``generate_latest`` writes them. The counters' totals are exactly
those of ``reports/stats.json`` once the crawl has ended. Every name starts with
``gossamer_``; per-worker figures carry a ``worker`` label ("local" for a lone crawl).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from gossamer.monitor.series import LATENCY_BOUNDS, Histogram

__all__ = ["CONTENT_TYPE", "render_metrics"]

CONTENT_TYPE = CONTENT_TYPE_LATEST

# Counter name (without _total) -> (stats.json key, help text).
_COUNTERS = {
    "gossamer_pages": ("pages", "Pages stored (2xx responses)."),
    "gossamer_requests": ("requests", "HTTP exchanges attempted, robots.txt included."),
    "gossamer_responses": ("responses", "Exchanges that produced an HTTP status."),
    "gossamer_robots_requests": ("robots_requests", "robots.txt exchanges."),
    "gossamer_bytes": ("bytes", "Body bytes received."),
    "gossamer_discovered_urls": ("discovered", "Distinct canonical URLs ever queued."),
    "gossamer_redirects": ("redirects", "Redirect responses."),
    "gossamer_skipped_robots": ("skipped_robots", "URLs refused by robots.txt."),
    "gossamer_skipped_scope": ("skipped_other", "URLs refused by scope and trap rules."),
    "gossamer_html_pages": ("html_pages", "Stored pages that are HTML."),
    "gossamer_pdf_pages": ("pdf_pages", "Stored pages that are PDF."),
}
_HOST_STATES = ("active", "visiting", "waiting", "deferred")
_STATES = ("running", "pausing", "paused", "stopping", "ended", "not running")


class _StatusCollector(Collector):
    def __init__(self, status: Mapping[str, Any]) -> None:
        self._status = status

    def collect(self) -> Iterator[Metric]:
        status = self._status
        totals: Mapping[str, Any] = status.get("totals", {})
        yield from _totals(totals)
        yield from _gauges(status)
        yield from _workers(status.get("workers", []), float(status.get("time", 0.0)))
        yield _latency(Histogram.from_json(totals.get("fetch_seconds")))


def _totals(totals: Mapping[str, Any]) -> Iterator[Metric]:
    for name, (key, text) in _COUNTERS.items():
        yield CounterMetricFamily(name, text, value=int(totals.get(key, 0)))
    by_class = CounterMetricFamily(
        "gossamer_http_responses", "Responses by status class.", labels=["status_class"]
    )
    classes: dict[str, int] = {}
    for code, count in totals.get("statuses", {}).items():
        key = f"{str(code)[:1]}xx"
        classes[key] = classes.get(key, 0) + int(count)
    for key in sorted(classes):
        by_class.add_metric([key], classes[key])
    yield by_class
    errors = CounterMetricFamily("gossamer_errors", "Errors by kind.", labels=["kind"])
    for kind, count in sorted(totals.get("errors", {}).items()):
        errors.add_metric([str(kind)], int(count))
    yield errors


def _gauges(status: Mapping[str, Any]) -> Iterator[Metric]:
    totals: Mapping[str, Any] = status.get("totals", {})
    yield GaugeMetricFamily(
        "gossamer_queue_size", "URLs queued, in memory and on disk.", value=status.get("queue") or 0
    )
    yield GaugeMetricFamily(
        "gossamer_fetches_in_flight", "Fetches under way.", value=status.get("in_flight") or 0
    )
    yield GaugeMetricFamily(
        "gossamer_concurrency_reached",
        "Most fetches under way at once so far.",
        value=int(totals.get("max_in_flight", 0)),
    )
    yield GaugeMetricFamily(
        "gossamer_concurrency_configured",
        "Fetch workers configured.",
        value=int(status.get("concurrency") or totals.get("concurrency", 0)),
    )
    hosts = GaugeMetricFamily("gossamer_hosts", "Hosts by state.", labels=["state"])
    for state in _HOST_STATES:
        hosts.add_metric([state], int(status.get("hosts", {}).get(state, 0)))
    yield hosts
    yield GaugeMetricFamily(
        "gossamer_elapsed_seconds",
        "Crawl time, earlier runs of a resumed crawl included.",
        value=float(totals.get("duration_seconds", 0.0)),
    )
    rates = GaugeMetricFamily("gossamer_pages_per_second", "Page rate.", labels=["window"])
    for window, value in status.get("rates", {}).items():
        if value is not None:
            rates.add_metric([str(window)], float(value))
    yield rates
    states = GaugeMetricFamily("gossamer_crawl_state", "1 for the crawl's state.", labels=["state"])
    for name in _STATES:
        states.add_metric([name], 1 if status.get("state") == name else 0)
    yield states


def _workers(rows: list[Mapping[str, Any]], now: float) -> Iterator[Metric]:
    labels = ["worker"]
    pages = CounterMetricFamily("gossamer_worker_pages", "Pages per worker.", labels=labels)
    html = CounterMetricFamily("gossamer_worker_html_pages", "HTML pages.", labels=labels)
    pdf = CounterMetricFamily("gossamer_worker_pdf_pages", "PDF pages.", labels=labels)
    errors = CounterMetricFamily("gossamer_worker_errors", "Errors per worker.", labels=labels)
    rate = GaugeMetricFamily("gossamer_worker_pages_per_second", "Page rate.", labels=labels)
    leased = GaugeMetricFamily(
        "gossamer_worker_leased_hosts", "Hosts with a fetch under way.", labels=labels
    )
    age = GaugeMetricFamily(
        "gossamer_worker_heartbeat_age_seconds", "Age of the last word.", labels=labels
    )
    for row in rows:
        name = [str(row.get("name", ""))]
        pages.add_metric(name, int(row.get("pages", 0)))
        html.add_metric(name, int(row.get("html_pages", 0)))
        pdf.add_metric(name, int(row.get("pdf_pages", 0)))
        errors.add_metric(name, int(row.get("errors", 0)))
        rate.add_metric(name, float(row.get("rate") or 0.0))
        leased.add_metric(name, int(row.get("leased_hosts", 0)))
        age.add_metric(name, max(0.0, now - float(row.get("heartbeat", now))))
    yield from (pages, html, pdf, errors, rate, leased, age)


def _latency(histogram: Histogram) -> Metric:
    buckets: list[tuple[str, float]] = []
    running = 0
    for bound, count in zip(LATENCY_BOUNDS, histogram.counts, strict=False):
        running += count
        buckets.append((repr(bound), running))
    buckets.append(("+Inf", histogram.count))
    return HistogramMetricFamily(
        "gossamer_fetch_duration_seconds",
        "Time from request to response.",
        buckets=buckets,
        sum_value=histogram.total,
    )


def render_metrics(status: Mapping[str, Any]) -> bytes:
    """The Prometheus text exposition of ``status``."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_StatusCollector(status))
    return generate_latest(registry)
