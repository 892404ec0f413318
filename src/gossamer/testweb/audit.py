"""The server-side judge of a crawl: a log of every request and the checks run over it.

Role in the data flow: the test web's server calls :meth:`Audit.begin` and :meth:`Audit.finish`
around each request; tests, ``make demo`` and the benchmarks call :meth:`Audit.report` when the
crawl is over. The audit sees only what reached the wire, and takes its ground truth (which
paths robots.txt forbids, which URLs are special) from the generator, never from a robots.txt
parser, so it stays independent of the crawler it judges.

A request is in flight from the moment its handler starts until the handler has produced the
response, which is before the body is sent; so a crawler that waits for each response before
sending the next request to that host can never be counted as overlapping.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

from gossamer.testweb.model import Web

# Timer resolution and scheduling jitter on the server side; a gap this much shorter than the
# Crawl-delay is still counted as obeying it.
CLOCK_SLACK = 0.005


@dataclass(frozen=True, slots=True)
class Ticket:
    """What :meth:`Audit.begin` hands back for the matching :meth:`Audit.finish`."""

    host: str
    started: float
    overlapped: bool  # another request to the same host was in flight at the start


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the server saw it. ``target`` is the path with its query."""

    host: str
    target: str
    method: str
    user_agent: str
    started: float
    ended: float
    status: int
    overlapped: bool


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The verdict on one crawl; ``ok()`` ignores ``unexpected``, which is for debugging."""

    requests: int
    concurrent_violations: int  # requests begun while another to the same host was in flight
    robots_violations: int  # requests for paths the generator disallowed for 'gossamer'
    crawl_delay_violations: int  # request starts closer than the host's Crawl-delay
    repeated_fetches: int  # extra 200 answers to GETs of one URL (robots files excluded)
    missing: tuple[str, ...]  # expected URLs never answered 200 to a GET
    unexpected: tuple[str, ...]  # requested URLs neither expected nor special

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
        lines += [f"    missing    {url}" for url in self.missing[:10]]
        lines += [f"    unexpected {url}" for url in self.unexpected[:10]]
        return "\n".join(lines)


class Audit:
    """Request log of one server. All writes happen on the server's event loop thread."""

    def __init__(self, web: Web, clock: Callable[[], float] = time.monotonic) -> None:
        self.web = web
        self.port = 0  # set by the server once it is bound; URLs in reports carry it
        self._clock = clock
        self._records: list[RequestRecord] = []
        self._in_flight: Counter[str] = Counter()

    def begin(self, host: str) -> Ticket:
        overlapped = self._in_flight[host] > 0
        self._in_flight[host] += 1
        return Ticket(host, self._clock(), overlapped)

    def finish(
        self, ticket: Ticket, *, target: str, method: str, user_agent: str, status: int
    ) -> None:
        self._in_flight[ticket.host] -= 1
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
            )
        )

    def records(self) -> list[RequestRecord]:
        """Finished requests in the order they started."""
        # Copy first: another thread may be appending while a test reads.
        return sorted(list(self._records), key=lambda record: record.started)

    def url(self, record: RequestRecord) -> str:
        return self.web.url(record.host, record.target, self.port)

    def fetched(self) -> list[str]:
        """URL of every finished request, robots.txt included, in the order they started."""
        return [self.url(record) for record in self.records()]

    def report(self, expected: set[str]) -> AuditReport:
        records = self.records()
        web = self.web
        answered: Counter[str] = Counter(
            self.url(r)
            for r in records
            if r.status == 200 and r.method == "GET" and not web.is_robots(r.host, r.target)
        )
        requested = {self.url(r): r for r in records}
        return AuditReport(
            requests=len(records),
            concurrent_violations=sum(1 for r in records if r.overlapped),
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
        )

    def _crawl_delay_violations(self, records: list[RequestRecord]) -> int:
        # robots.txt itself is exempt: the crawler cannot know the delay before reading it.
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
