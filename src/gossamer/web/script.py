"""Web UI, the Crawl page's script: it keeps the page up to date from the server's events and
sends the steering forms without leaving the page.

Data flow: ``/crawl/events`` (server-sent events of the crawl's status, ``dashboard``) ->
**script** -> the page's tables; the steering forms -> ``POST /crawl/...`` -> a message.

It is served as a file of ours (``/crawl/dashboard.js``) under a policy that allows our own
scripts only and requires Trusted Types with no policy at all: the script writes text
(``textContent``) and builds elements, never markup, so a host name or an error kind from the
crawl can only ever be text. Without scripts the page still shows its skeleton and works as
plain forms.
"""

from __future__ import annotations

__all__ = ["DASHBOARD_JS"]

DASHBOARD_JS = r"""
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const missing = (v) => v === null || v === undefined;
  const number = (v) => (missing(v) ? "-" : Number(v).toLocaleString("en"));
  const decimal = (v, d = 1) => (missing(v) ? "-" : Number(v).toFixed(d));
  const seconds = (v) => {
    if (missing(v)) return "-";
    const s = Math.max(0, Math.round(v));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), x = s % 60;
    if (h) return `${h}h${String(m).padStart(2, "0")}m`;
    return m ? `${m}m${String(x).padStart(2, "0")}s` : `${x}s`;
  };
  const bytes = (v) => {
    if (missing(v)) return "-";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let size = Number(v), unit = 0;
    while (size >= 1024 && unit < units.length - 1) { size /= 1024; unit += 1; }
    return unit ? `${size.toFixed(1)} ${units[unit]}` : `${size} B`;
  };
  const set = (id, text) => { const el = $(id); if (el) el.textContent = text; };
  const fill = (id, items, cells) => {
    const body = $(id);
    if (!body) return;
    body.replaceChildren(...items.map((item) => {
      const row = document.createElement("tr");
      for (const value of cells(item)) {
        const cell = document.createElement("td");
        cell.textContent = value;
        row.append(cell);
      }
      return row;
    }));
  };
  const hostCells = (h) => [
    h.host, number(h.pages), number(h.errors), decimal(h.avg_seconds, 3),
    decimal(h.delay, 2), decimal(h.crawl_delay, 2), decimal(h.backoff, 1), h.robots,
  ];
  let charted = 0;

  function show(s) {
    const t = s.totals || {}, hosts = s.hosts || {}, rates = s.rates || {};
    document.body.dataset.state = s.state;
    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    set("state", s.state + (s.reason ? ` (${s.reason})` : ""));
    set("t-pages", number(t.pages));
    set("t-target", missing((s.targets || {}).pages) ? "" : ` of ${number(s.targets.pages)}`);
    set("t-rate-minute", decimal(rates.minute));
    set("t-rate-overall", decimal(rates.overall));
    set("t-html", number(t.html_pages));
    set("t-pdf", number(t.pdf_pages));
    set("t-bytes", bytes(t.bytes));
    set("t-requests", number(t.requests));
    set("t-errors", number(t.error_total));
    set("t-queue", number(s.queue));
    set("t-hosts", ["active", "visiting", "waiting", "deferred"]
      .map((k) => `${number(hosts[k])} ${k}`).join(", "));
    set("t-in-flight", `${number(s.in_flight)} of ${number(s.concurrency)},`
      + ` at most ${number(t.max_in_flight)} at once`);
    set("t-elapsed", seconds(t.duration_seconds));
    set("t-eta", seconds(s.eta));
    set("updated", missing(s.time) ? "-" : new Date(s.time * 1000).toLocaleTimeString());
    fill("errors-body", Object.entries(t.errors || {}).sort((a, b) => b[1] - a[1]),
      ([kind, count]) => [kind, number(count)]);
    fill("workers-body", s.workers || [], (w) => [
      w.name, w.state, number(w.pages), decimal(w.rate), number(w.html_pages),
      number(w.pdf_pages), number(w.errors), number(w.leased_hosts),
      seconds(s.time - w.heartbeat),
    ]);
    fill("busiest-body", s.busiest || [], hostCells);
    fill("slowest-body", s.slowest || [], hostCells);
    const chart = $("chart");
    if (chart && s.samples > 1 && Date.now() - charted > 4000) {
      charted = Date.now();
      chart.src = `/crawl/chart.svg?seq=${s.seq}`;
    }
  }

  const events = new EventSource("/crawl/events");
  events.addEventListener("status", (event) => show(JSON.parse(event.data)));

  for (const form of document.querySelectorAll("form.control")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const result = $("control-result");
      try {
        const response = await fetch(form.action, {
          method: "POST",
          body: new URLSearchParams(new FormData(form)),
          headers: { Accept: "application/json" },
        });
        const answer = await response.json();
        result.textContent = answer.message;
        result.dataset.ok = String(response.ok);
        const seeds = form.querySelector("textarea");
        if (response.ok && seeds) seeds.value = "";
      } catch (error) {
        result.textContent = `The server did not answer: ${error}`;
        result.dataset.ok = "false";
      }
    });
  }
})();
"""
