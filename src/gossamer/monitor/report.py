"""Monitor, the crawl report: ``reports/report.html``, one self-contained page with charts.

Data flow: ``CrawlStats`` at the end of a crawl (its timeline, response-time histogram,
statuses, errors and hosts) -> charts (``monitor/charts.py``, matplotlib to SVG) -> **report**
-> ``DIR/reports/report.html``, written by ``engine/reporter.py`` when a crawl ends.

The page needs nothing from the network: the charts are inline SVG, the style sheet is inline,
there is no script, and its own Content-Security-Policy (``default-src 'none'``) says so to
the browser. Host names and error kinds come from the crawl and are escaped. The file is
replaced atomically (temporary file, fsync, rename), like the other reports.
"""

from __future__ import annotations

import html
import os
import time
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.monitor import charts
from gossamer.stats import CrawlStats
from gossamer.store.reports import REPORTS_FOLDER, summary_line
from gossamer.store.tempfiles import create_beside

__all__ = ["REPORT_FILE", "report_html", "write_report"]

REPORT_FILE = "report.html"
TOP_DOMAINS = 20
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #202124;
       padding: 0 1.5em; }
h1 { color: #3c4ba0; margin-bottom: .2em; }
.summary { font-size: 1.1em; background: #f3f5fb; border-left: 4px solid #3c4ba0;
           padding: .6em 1em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { text-align: left; padding: .2em 1.2em .2em 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { color: #5f6368; font-weight: 500; }
figure { margin: 1.5em 0; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #5f6368; font-size: .9em; }
.note { color: #5f6368; font-size: .9em; }
"""


def report_html(stats: CrawlStats, now: float | None = None) -> str:
    """The whole report page for ``stats`` (taken when the crawl ended)."""
    snapshot = stats.snapshot(now)
    duration = float(snapshot["duration_seconds"])  # type: ignore[arg-type]
    average = float(snapshot["avg_request_seconds"])  # type: ignore[arg-type]
    summary = summary_line(stats.pages, duration, stats.max_in_flight, stats.concurrency, average)
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(now))
    statuses = {str(code): n for code, n in sorted(stats.statuses.items())}
    pages_per_host = [h.pages for h in stats.hosts.values()]
    sections = [
        f'<p class="summary">{_esc(summary)}</p>',
        f'<p class="note">Written {_esc(when)}.</p>',
        _figures(stats, duration),
        _chart("Pages over time", charts.pages_chart(stats.timeline), _timeline_note(stats)),
        _chart("Statuses and errors", charts.outcome_chart(statuses, dict(stats.errors)), ""),
        _chart(
            "Pages per domain",
            charts.domain_chart(pages_per_host),
            "Hosts ranked by pages stored, both axes logarithmic: the long tail.",
        ),
        _chart(
            "Response times",
            charts.latency_chart(stats.latency),
            "Time from request to response of every exchange of this run.",
        ),
        _domains(stats),
    ]
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Crawl report - Gossamer</title>"
        f"<style>{_STYLE}</style></head><body><h1>Crawl report</h1>"
        + "\n".join(sections)
        + "</body></html>\n"
    )


def write_report(directory: Path, stats: CrawlStats, now: float | None = None) -> Path:
    """Write ``DIR/reports/report.html`` atomically; its path."""
    folder = directory / REPORTS_FOLDER
    target = folder / REPORT_FILE
    page = report_html(stats, now).encode("utf-8")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temp = create_beside(target)  # as readable as the other reports
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(page)
                out.flush()
                os.fsync(out.fileno())
            temp.replace(target)
        finally:
            temp.unlink(missing_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot write report {target}: {exc.strerror or exc}") from exc
    return target


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _timeline_note(stats: CrawlStats) -> str:
    step = stats.timeline.step
    note = f"Sampled every {step:g} s."
    if stats.elapsed_before:
        note += " A resumed crawl: the chart starts where this run started."
    return note


def _chart(title: str, svg: str, note: str) -> str:
    caption = f"<figcaption>{_esc(note)}</figcaption>" if note else ""
    return f"<h2>{_esc(title)}</h2><figure>{svg}{caption}</figure>"


def _figures(stats: CrawlStats, duration: float) -> str:
    rows = [
        ("Pages stored", stats.pages),
        ("HTML pages", stats.html_pages),
        ("PDF pages", stats.pdf_pages),
        ("Requests (robots.txt included)", stats.requests),
        ("Responses", stats.responses),
        ("Bytes received", stats.bytes),
        ("Errors", sum(stats.errors.values())),
        ("Redirects", stats.redirects),
        ("URLs discovered", stats.discovered),
        ("Skipped by robots.txt", stats.skipped_robots),
        ("Skipped by scope", stats.skipped_other),
        ("Session ids stripped (URL crawled without them)", stats.session_ids_stripped),
        ("Hosts with pages", sum(1 for h in stats.hosts.values() if h.pages)),
        ("Duration (s)", f"{duration:.1f}"),
        ("Pages per second", f"{stats.pages / duration:.2f}" if duration > 0 else "0"),
        ("Concurrency configured", stats.concurrency),
        ("Concurrency reached", stats.max_in_flight),
    ]
    cells = "".join(f'<tr><th>{_esc(k)}</th><td class="n">{_esc(v)}</td></tr>' for k, v in rows)
    return f"<h2>Figures</h2><table>{cells}</table>"


def _domains(stats: CrawlStats) -> str:
    top = sorted(stats.hosts.items(), key=lambda item: -item[1].pages)[:TOP_DOMAINS]
    rows = "".join(
        f'<tr><td>{_esc(name)}</td><td class="n">{h.pages}</td><td class="n">{h.bytes}</td>'
        f'<td class="n">{h.errors}</td><td>{_esc(h.robots_status)}</td></tr>'
        for name, h in top
        if h.pages or h.errors
    )
    return (
        f"<h2>Busiest domains</h2><table><tr><th>host</th><th>pages</th><th>bytes</th>"
        f"<th>errors</th><th>robots.txt</th></tr>{rows}</table>"
        '<p class="note">Every host is listed in domains.tsv beside this page.</p>'
    )
