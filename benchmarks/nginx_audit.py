"""The server-side audit of a crawl of the nginx-served copy of the test web.

Role: benchmark support (issue 17). ``workers_scaling.py`` serves an exported test web with
nginx, so the test web's own audit (``gossamer.testweb.audit``), which sees every request
inside the Python server, is not there. nginx writes one access-log line per request in
``LOG_FORMAT`` instead; :func:`audit_log` turns the lines into the audit's records and judges
them with the same rules: requests begun while another to the same host was in flight,
requests for paths robots.txt disallows, repeated fetches, expected pages never fetched.

nginx's clock has millisecond resolution (``$msec`` when the response was logged,
``$request_time`` since the request's first byte), so each request's interval is known to
within about 2 ms: the end is taken 2 ms early, which keeps back-to-back requests on one
connection from counting as overlaps, and misses only overlaps shorter than that.
"""

from __future__ import annotations

from pathlib import Path

from gossamer.testweb.audit import Audit, AuditReport, RequestRecord
from gossamer.testweb.model import Web

LOG_FORMAT = "$msec $request_time $host $request_method $status $request_uri"
SLACK_MS = 2  # the log's clock resolution, both ends of an interval


def read_log(path: Path, port: int) -> list[RequestRecord]:
    """The requests of an access log written in ``LOG_FORMAT``, as the audit's records."""
    records = []
    for line in path.read_text(encoding="latin-1").splitlines():
        fields = line.split(" ", 5)
        if len(fields) != 6:
            continue
        msec, took, host, method, status, target = fields
        ended_ms = round(float(msec) * 1000)
        started_ms = ended_ms - round(float(took) * 1000)
        records.append(
            RequestRecord(
                host=host.lower(),
                target=target,
                method=method,
                user_agent="",
                started=started_ms / 1000,
                ended=ended_ms / 1000,
                status=int(status),
                overlapped=False,
                scheme="http",
                port=port,
                start_seq=started_ms,
                end_seq=max(started_ms, ended_ms - SLACK_MS),
            )
        )
    records.sort(key=lambda record: record.start_seq)
    return records


def audit_log(web: Web, path: Path, port: int, *, whole: bool) -> AuditReport:
    """The verdict on one crawl's log; ``whole``: the crawl ran to the end, so every expected
    page must have been fetched (with a page budget, ``missing`` means nothing)."""
    audit = Audit.of_records(web, port, read_log(path, port))
    return audit.report(web.expected(port) if whole else set())
