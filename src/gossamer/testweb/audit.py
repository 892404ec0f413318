"""The server-side judge of a crawl: a log of every request and the checks run over it.

Role in the data flow: the test web's server calls :meth:`Audit.begin` and :meth:`Audit.finish`
around each request; tests, ``make demo`` and the benchmarks call :meth:`Audit.report` when the
crawl is over. The audit sees only what reached the wire, and takes its ground truth (which
paths robots.txt forbids, which URLs are special) from the generator, never from a robots.txt
parser, so it stays independent of the crawler it judges.

A request is in flight from the moment its handler starts until the last byte of its response
has been handed to the connection's transport (or the client has gone away). The server records
that end without yielding to its event loop after handing the last byte over, so a request the
client sends once it has received that byte cannot begin before the end is recorded: a crawler
that waits for each full response before its next request to a host is never counted as
overlapping, while two requests it has outstanding at once are, even with no added latency.

Requests are ordered by the server's own sequence of begin and finish events, not by the clock,
so the check holds under a hand-moved clock too. Politeness is judged per host name: requests to
one host over its different origins (http and https, or two ports) share one in-flight interval
set and one Crawl-delay. URLs, and so repeated fetches, keep the origin the request came in on:
the same path fetched once over http and once over https is two URLs, each fetched once.

For recrawls (:mod:`gossamer.testweb.changes`) each record also keeps the conditional headers
the request carried, the body bytes the answer sent (0 for a 304) and the generation of the
web that answered it; :meth:`Audit.report` can judge one generation's requests alone, where a
``304 Not Modified`` counts as an answer as good as a 200.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count, pairwise

from gossamer.testweb.model import Web

# Timer resolution and scheduling jitter on the server side; a gap this much shorter than the
# Crawl-delay is still counted as obeying it.
CLOCK_SLACK = 0.005


@dataclass(frozen=True, slots=True)
class Ticket:
    """What :meth:`Audit.begin` hands back for the matching :meth:`Audit.finish`."""

    host: str
    started: float
    overlapped: bool  # another request to the same host name was in flight at the start
    scheme: str = "http"
    port: int = 0
    start_seq: int = 0  # position of the begin in the server's event order


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the server saw it. ``target`` is the path with its query; ``scheme`` and
    ``port`` are the origin it came in on (the listening socket, whatever the Host header says).
    ``start_seq`` and ``end_seq`` place its begin and finish in the server's event order;
    ``status`` is 499 when the response could not be delivered. ``if_none_match`` and
    ``if_modified_since`` are the request's conditional headers as sent (None: absent),
    ``body_bytes`` the bytes of body the answer handed over (gzip-encoded when it was sent
    so; 0 for a 304 or an answer not delivered), ``generation`` the web's that answered."""

    host: str
    target: str
    method: str
    user_agent: str
    started: float
    ended: float
    status: int
    overlapped: bool
    scheme: str
    port: int
    start_seq: int
    end_seq: int
    if_none_match: str | None = None
    if_modified_since: str | None = None
    body_bytes: int = 0
    generation: int = 0

    @property
    def conditional(self) -> bool:
        """Did the request carry If-None-Match or If-Modified-Since?"""
        return self.if_none_match is not None or self.if_modified_since is not None


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The verdict on one crawl; ``ok()`` ignores ``unexpected``, which is for debugging."""

    requests: int
    concurrent_violations: int  # requests begun while another to the host name was in flight
    robots_violations: int  # requests for paths the generator disallowed for 'gossamer'
    crawl_delay_violations: int  # request starts closer than the host's Crawl-delay
    repeated_fetches: int  # extra 200 or 304 answers to GETs of one URL (robots files excluded)
    missing: tuple[str, ...]  # expected URLs never answered 200 (or 304) to a GET
    unexpected: tuple[str, ...]  # requested URLs neither expected nor special
    conditional: int = 0  # requests with If-None-Match or If-Modified-Since
    not_modified: int = 0  # 304 answers
    body_bytes: int = 0  # bytes of response bodies sent

    def ok(self) -> bool:
        return not (
            self.concurrent_violations
            or self.robots_violations
            or self.crawl_delay_violations
            or self.repeated_fetches
            or self.missing
        )

    def summary(self) -> str:
        """A few lines for a terminal."""
        lines = [
            f"audit: {'OK' if self.ok() else 'FAILED'} after {self.requests} requests",
            f"  concurrent requests to one host: {self.concurrent_violations}",
            f"  robots.txt violations:           {self.robots_violations}",
            f"  crawl-delay violations:          {self.crawl_delay_violations}",
            f"  repeated fetches:                {self.repeated_fetches}",
            f"  expected URLs missing:           {len(self.missing)}",
            f"  unexpected URLs fetched:         {len(self.unexpected)}",
        ]
        if self.conditional or self.not_modified:
            lines += [
                f"  conditional requests:            {self.conditional}",
                f"  304 not modified:                {self.not_modified}",
                f"  response body bytes:             {self.body_bytes}",
            ]
        lines += [f"    missing    {url}" for url in self.missing[:10]]
        lines += [f"    unexpected {url}" for url in self.unexpected[:10]]
        return "\n".join(lines)


class Audit:
    """Request log of one server. All writes happen on the server's event loop thread."""

    def __init__(self, web: Web, clock: Callable[[], float] = time.monotonic) -> None:
        self.web = web
        self.port = 0  # the main http port, set by the server once it is bound
        self._clock = clock
        self._records: list[RequestRecord] = []
        self._in_flight: Counter[str] = Counter()
        self._open: dict[int, Ticket] = {}  # begun and not finished, by start_seq
        self._events = count(1)

    def begin(self, host: str, *, scheme: str = "http", port: int | None = None) -> Ticket:
        """A request to host name ``host`` has started; ``port`` defaults to the main port."""
        overlapped = self._in_flight[host] > 0
        self._in_flight[host] += 1
        where = self.port if port is None else port
        ticket = Ticket(host, self._clock(), overlapped, scheme, where, next(self._events))
        self._open[ticket.start_seq] = ticket
        return ticket

    def finish(
        self,
        ticket: Ticket,
        *,
        target: str,
        method: str,
        user_agent: str,
        status: int,
        if_none_match: str | None = None,
        if_modified_since: str | None = None,
        body_bytes: int = 0,
        generation: int = 0,
    ) -> None:
        """The request is over: call it with no await after the response's last byte."""
        self._in_flight[ticket.host] -= 1
        self._open.pop(ticket.start_seq, None)
        self._records.append(
            RequestRecord(
                host=ticket.host,
                target=target,
                method=method,
                user_agent=user_agent,
                started=ticket.started,
                ended=self._clock(),
                status=status,
                overlapped=ticket.overlapped,
                scheme=ticket.scheme,
                port=ticket.port,
                start_seq=ticket.start_seq,
                end_seq=next(self._events),
                if_none_match=if_none_match,
                if_modified_since=if_modified_since,
                body_bytes=body_bytes,
                generation=generation,
            )
        )

    @classmethod
    def of_records(cls, web: Web, port: int, records: list[RequestRecord]) -> Audit:
        """An audit of requests another server logged (a static copy of ``web`` served on
        ``port``): ``report`` judges them as if this server had seen them."""
        audit = cls(web)
        audit.port = port
        audit._records = list(records)
        return audit

    def records(self, generation: int | None = None) -> list[RequestRecord]:
        """Finished requests in the order they started; with ``generation``, only those
        answered from that generation of the web."""
        # Copy first: another thread may be appending while a test reads.
        found = sorted(list(self._records), key=lambda record: record.start_seq)
        if generation is None:
            return found
        return [record for record in found if record.generation == generation]

    def url(self, record: RequestRecord) -> str:
        """The URL as requested: its own scheme and port, the host name from the Host header."""
        return self.web.url(record.host, record.target, record.port, record.scheme)

    def fetched(self) -> list[str]:
        """URL of every finished request, robots.txt included, in the order they started."""
        return [self.url(record) for record in self.records()]

    def report(self, expected: set[str], *, generation: int | None = None) -> AuditReport:
        """The verdict on every request, or on those answered from ``generation`` alone. A URL
        is answered by a 200 or a 304 to a GET; answered twice, it was fetched once too often."""
        records = self.records(generation)
        web = self.web
        answered: Counter[str] = Counter(
            self.url(r)
            for r in records
            if r.status in (200, 304) and r.method == "GET" and not web.is_robots(r.host, r.target)
        )
        requested = {self.url(r): r for r in records}
        return AuditReport(
            requests=len(records),
            concurrent_violations=self._overlaps(records),
            robots_violations=sum(1 for r in records if web.is_disallowed(r.host, r.target)),
            crawl_delay_violations=self._crawl_delay_violations(records),
            repeated_fetches=sum(count - 1 for count in answered.values()),
            missing=tuple(sorted(expected - answered.keys())),
            unexpected=tuple(
                sorted(
                    url
                    for url, r in requested.items()
                    if url not in expected and not web.is_special(r.host, r.target)
                )
            ),
            conditional=sum(1 for r in records if r.conditional),
            not_modified=sum(1 for r in records if r.status == 304),
            body_bytes=sum(r.body_bytes for r in records),
        )

    def _overlaps(self, records: list[RequestRecord]) -> int:
        """Requests begun while another to the same host name (any origin) was in flight,
        from the intervals in event order; requests still in flight count as open-ended."""
        intervals: defaultdict[str, list[tuple[int, float]]] = defaultdict(list)
        for record in records:
            intervals[record.host].append((record.start_seq, record.end_seq))
        for ticket in list(self._open.values()):  # a copy: the server's thread may change it
            intervals[ticket.host].append((ticket.start_seq, float("inf")))
        violations = 0
        for spans in intervals.values():
            latest_end = 0.0
            for start, end in sorted(spans):
                violations += latest_end > start
                latest_end = max(latest_end, end)
        return violations

    def _crawl_delay_violations(self, records: list[RequestRecord]) -> int:
        # robots.txt itself is exempt: the crawler cannot know the delay before reading it.
        # Records come in event order; a host name's starts are compared across all its origins.
        starts: defaultdict[str, list[float]] = defaultdict(list)
        for record in records:
            if self.web.crawl_delay(record.host) and not self.web.is_robots(
                record.host, record.target
            ):
                starts[record.host].append(record.started)
        violations = 0
        for host, times in starts.items():
            least = self.web.crawl_delay(host) - CLOCK_SLACK
            violations += sum(1 for before, after in pairwise(times) if after - before < least)
        return violations
