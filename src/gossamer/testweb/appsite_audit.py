"""The app site's judge: a log of every request and the verdict on a crawl of the site.

Role in the data flow: none in production. :class:`~gossamer.testweb.appsite.AppSiteServer`
calls :meth:`RequestLog.begin` and :meth:`RequestLog.finish` around each request; a test asks
for :meth:`RequestLog.report` when its crawl is over. The rules are those of
:mod:`gossamer.testweb.audit`, judged on the app site's own ground truth
(:class:`~gossamer.testweb.appsite.AppSite`) instead of a generated ``Web``:

- a request begun while another to its host name is in flight overlaps (the in-flight count
  at its start; a request still in flight counts too);
- on a host whose robots.txt sets a Crawl-delay, a request that starts less than the delay
  after the previous one ended breaks it (robots.txt itself aside), as the crawler's
  politeness rests the delay after each outcome;
- a request for a path robots.txt disallows breaks robots.txt;
- a request whose Host header is an IP literal went to a private address;
- a second GET of one HTML page is a page repeat (a failure), of anything else a subresource
  repeat (counted only: a browser loads a page's script and logo again on every page).

Requests are ordered by the log's own sequence, not by the clock.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gossamer.testweb.audit import CLOCK_SLACK

if TYPE_CHECKING:  # only for annotations: appsite imports this module
    from gossamer.testweb.appsite import AppSite

__all__ = ["AppSiteReport", "RequestLog", "Ticket", "host_of"]


@dataclass(frozen=True, slots=True)
class AppSiteReport:
    """The verdict on one crawl of the site; ``subresource_repeats`` is not a failure."""

    requests: int
    overlaps: int  # requests begun while another to the same host name was in flight
    crawl_delay_violations: int  # starts closer than the Crawl-delay to the previous end
    robots_violations: int  # requests for a path robots.txt disallows
    private_requests: int  # requests whose Host was an IP literal
    page_repeats: int  # extra GETs of one HTML page URL
    subresource_repeats: int  # extra GETs of one script, image or API URL (robots.txt aside)
    missing: tuple[str, ...]  # expected page URLs never answered 200 to a GET

    def ok(self) -> bool:
        return not (
            self.overlaps
            or self.crawl_delay_violations
            or self.robots_violations
            or self.private_requests
            or self.page_repeats
            or self.missing
        )

    def summary(self) -> str:
        """A few lines for a failing assertion or a terminal."""
        lines = [
            f"app site: {'OK' if self.ok() else 'FAILED'} after {self.requests} requests",
            f"  overlaps {self.overlaps}, crawl-delay {self.crawl_delay_violations}, "
            f"robots {self.robots_violations}, private {self.private_requests}",
            f"  page repeats {self.page_repeats}, subresource repeats {self.subresource_repeats}",
        ]
        return "\n".join(lines + [f"  missing {url}" for url in self.missing[:10]])


@dataclass(frozen=True, slots=True)
class Ticket:
    host: str
    private: bool  # the Host header was an IP literal
    started: float
    overlapped: bool
    seq: int


@dataclass(frozen=True, slots=True)
class Record:
    ticket: Ticket
    target: str
    method: str
    status: int
    ended: float


@dataclass
class RequestLog:
    """Every request, written on the server's loop only; read from any thread (copies)."""

    clock: Callable[[], float]
    records: list[Record] = field(default_factory=list)
    in_flight: Counter[str] = field(default_factory=Counter)
    open: dict[int, Ticket] = field(default_factory=dict)
    seq: int = 0

    def begin(self, host: str, private: bool) -> Ticket:
        self.seq += 1
        ticket = Ticket(host, private, self.clock(), self.in_flight[host] > 0, self.seq)
        self.in_flight[host] += 1
        self.open[ticket.seq] = ticket
        return ticket

    def finish(self, ticket: Ticket, target: str, method: str, status: int) -> None:
        """Call it with no await after the response's last byte was handed over."""
        self.in_flight[ticket.host] -= 1
        self.open.pop(ticket.seq, None)
        self.records.append(Record(ticket, target, method, status, self.clock()))

    def report(self, site: AppSite, port: int, expected: set[str]) -> AppSiteReport:
        records = sorted(list(self.records), key=lambda record: record.ticket.seq)
        still_open = list(self.open.values())
        pages = site.pages_of("script_built", port) | site.pages_of("server_built", port)
        asked: Counter[str] = Counter()
        answered: set[str] = set()
        for record in records:
            url = site.url(record.ticket.host, record.target, port)
            if record.method == "GET" and record.target != "/robots.txt":
                asked[url] += 1
                answered.update([url] if record.status == 200 else [])
        repeats = {url: count - 1 for url, count in asked.items()}
        return AppSiteReport(
            requests=len(records),
            overlaps=sum(r.ticket.overlapped for r in records)
            + sum(t.overlapped for t in still_open),
            crawl_delay_violations=delay_violations(site, records),
            robots_violations=sum(site.is_disallowed(r.ticket.host, r.target) for r in records),
            private_requests=sum(r.ticket.private for r in records),
            page_repeats=sum(n for url, n in repeats.items() if url in pages),
            subresource_repeats=sum(n for url, n in repeats.items() if url not in pages),
            missing=tuple(sorted(expected - answered)),
        )


def delay_violations(site: AppSite, records: list[Record]) -> int:
    """Requests to a host with a Crawl-delay begun sooner than it after the previous ended;
    robots.txt is exempt, as the crawler cannot know the delay before reading it."""
    last_end: dict[str, float] = {}
    violations = 0
    for record in records:
        host = record.ticket.host
        delay = site.delay_of(host)
        if not delay or record.target == "/robots.txt":
            continue
        if host in last_end and record.ticket.started - last_end[host] < delay - CLOCK_SLACK:
            violations += 1
        last_end[host] = max(last_end.get(host, 0.0), record.ended)
    return violations


def host_of(header: str) -> tuple[str, bool]:
    """The Host header's name without its port, lowercased, and whether it is an IP literal."""
    name = header.lower()
    if name.startswith("["):
        name = name[1 : name.find("]")]
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return name, False
    return name, True
