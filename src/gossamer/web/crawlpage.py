"""Web UI, the Crawl page: the skeleton the dashboard script fills, and the steering forms.

Data flow: ``dashboard`` (the handler) -> **crawlpage** -> HTML; the figures arrive by the
page's event stream (``script``). Each table cell the script fills has an id; the steering
forms post to ``/crawl/{pause,resume,stop,seeds}`` with the page's CSRF token, and with a
control-token field when the server requires one (bound beyond loopback).
"""

from __future__ import annotations

from gossamer.web.render import esc, layout

__all__ = ["crawl_page", "message_page"]

SCRIPT = "/crawl/dashboard.js"

_TOTALS = (
    ("Pages", '<span id="t-pages">-</span><span id="t-target"></span>'),
    ("Pages per second, last minute", '<span id="t-rate-minute">-</span>'),
    ("Pages per second, since the start", '<span id="t-rate-overall">-</span>'),
    ("HTML pages / PDF pages", '<span id="t-html">-</span> / <span id="t-pdf">-</span>'),
    ("Bytes received", '<span id="t-bytes">-</span>'),
    ("Requests", '<span id="t-requests">-</span>'),
    ("Errors", '<span id="t-errors">-</span>'),
    ("Queue", '<span id="t-queue">-</span>'),
    ("Hosts", '<span id="t-hosts">-</span>'),
    ("Fetches under way", '<span id="t-in-flight">-</span>'),
    ("Elapsed", '<span id="t-elapsed">-</span>'),
    ("ETA", '<span id="t-eta">-</span>'),
)
_HOST_COLUMNS = (
    "host",
    "pages",
    "errors",
    "avg s",
    "delay s",
    "Crawl-delay",
    "backoff s",
    "robots.txt",
)
_WORKER_COLUMNS = (
    "worker",
    "state",
    "pages",
    "pages/s",
    "HTML",
    "PDF",
    "errors",
    "leased hosts",
    "heartbeat age",
)


def _table(body_id: str, columns: tuple[str, ...], label: str) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    return (
        f'<table class="grid" aria-label="{esc(label)}"><thead><tr>{head}</tr></thead>'
        f'<tbody id="{body_id}"></tbody></table>'
    )


def _form(action: str, csrf: str, token: bool, inner: str, css: str = "") -> str:
    field = (
        '<label>Control token <input type="password" name="token" autocomplete="off"></label> '
        if token
        else ""
    )
    return (
        f'<form class="control {css}" method="post" action="/crawl/{action}">'
        f'<input type="hidden" name="csrf" value="{esc(csrf)}">{field}{inner}</form>'
    )


def crawl_page(csrf: str, *, token: bool, can_steer: bool, has_report: bool) -> str:
    """The Crawl page. ``token``: control posts need the control token; ``can_steer``: they
    are allowed at all (not on a wide bind without a token)."""
    totals = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in _TOTALS)
    report = (
        '<p><a href="/crawl/report">The report of the last crawl</a>, with its charts.</p>'
        if has_report
        else ""
    )
    parts = [
        '<div class="dashboard"><h1>Crawl</h1>',
        '<p>State: <span id="state" class="state">-</span>'
        ' <span class="note">(updated <span id="updated">-</span>)</span></p>',
        "<noscript><p>This page updates itself with a script. Without it, see"
        ' <a href="/crawl/status.json">the status as JSON</a>.</p></noscript>',
        f'<table class="meta" aria-label="Totals">{totals}</table>',
        "<h2>Errors by kind</h2>",
        _table("errors-body", ("kind", "count"), "Errors by kind"),
        "<h2>Workers</h2>",
        _table("workers-body", _WORKER_COLUMNS, "Workers"),
        "<h2>Busiest hosts</h2>",
        _table("busiest-body", _HOST_COLUMNS, "Busiest hosts"),
        "<h2>Slowest hosts</h2>",
        _table("slowest-body", _HOST_COLUMNS, "Slowest hosts"),
        "<h2>Pages and errors per second</h2>",
        '<img id="chart" class="chart" src="/crawl/chart.svg"'
        ' alt="Pages and errors per second over the crawl">',
        report,
        "<h2>Steering</h2>",
        _steering(csrf, token) if can_steer else _steering_off(),
        '<p class="note">Also: <a href="/metrics">/metrics</a> (Prometheus),'
        ' <a href="/crawl/status.json">the status as JSON</a>.</p></div>',
    ]
    return layout("Crawl", "".join(parts), script=SCRIPT)


def _steering(csrf: str, token: bool) -> str:
    buttons = "".join(
        _form(action, csrf, token, f'<button type="submit">{label}</button>')
        for action, label in (("pause", "Pause"), ("resume", "Resume"), ("stop", "Stop"))
    )
    seeds = _form(
        "seeds",
        csrf,
        token,
        '<p><textarea name="seeds" rows="3" aria-label="Seeds to add"'
        ' placeholder="one URL or domain per line"></textarea></p>'
        '<button type="submit">Add seeds</button>',
        "seeds",
    )
    return f'<div>{buttons}</div>{seeds}<p id="control-result" role="status" class="note"></p>'


def _steering_off() -> str:
    return (
        '<p class="note">Steering is off: this server listens beyond this machine. Start it'
        " with <code>--control-token</code> to pause, stop or add seeds from here.</p>"
    )


def message_page(title: str, message: str) -> str:
    """The answer to a steering form sent without the script."""
    body = f'<h1>{esc(title)}</h1><p>{esc(message)}</p><p><a href="/crawl">Back</a></p>'
    return layout(title, body)
