"""The scheduling seam: where a crawl loop takes work and gives back what became of it.

Data flow: the frontier (in-process, one ``--workers`` share, or Redis) -> **seam.lease** ->
the crawl loop (``crawling/loop.py``: robots.txt or page fetch, record) -> **seam.page_done /
robots_done** -> the frontier. The seam is lease-shaped, as crawlee's request queues and
Frontera are: a ticket is the right to fetch one job of one host now; every ticket handed out
comes back exactly once, done or released, so a host's slot is never lost. Behind it:

* ``engine/seam.py``: one process, or one ``--workers`` process over its hash partition of the
  hosts, on the in-memory Mercator frontier;
* ``distributed/seam.py``: a shared crawl's worker, on the Redis frontier.

What a host's timing becomes after an answer is the politeness rule's
(``frontier/politeness.py``); which answer a fetch is, and whether its URL is retried, is the
loop's (one place for every engine); how each frontier stores both is the seam's own.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.frontier.politeness import Outcome
from gossamer.robots import RobotsRules

__all__ = ["PageDone", "Seam", "Ticket"]


@dataclass(frozen=True, slots=True)
class Ticket:
    """The right to fetch ``job`` now. A robots.txt job (``job.robots``) is its origin's
    robots.txt; ``handle`` is the seam's own (a Redis lease, whose job may be the page
    waiting behind that robots.txt)."""

    job: Job
    handle: object = None


@dataclass(frozen=True, slots=True)
class PageDone:
    """What became of a page fetch, as the frontier needs it."""

    answer: Outcome | None  # the politeness answer; None: an ordinary one (the host answered)
    retry: bool  # queue the URL once more (429/503, a fault of this machine)
    stored: bool  # a page counted towards the target


class Seam(Protocol):
    """What every way of running a crawl offers its crawl loops."""

    async def lease(self) -> Ticket | None:
        """The next job whose host may be asked now, waiting until there is one; None when
        this loop is over (the crawl finished, or stopped, or reached its limits)."""
        ...

    async def page_done(self, ticket: Ticket, done: PageDone) -> None:
        """A page job's outcome: its host's timing moves, a retry is queued, the links the
        page gave (already admitted through the seam's queue) become work."""
        ...

    async def robots_done(self, ticket: Ticket, rules: RobotsRules, final: FetchResult) -> None:
        """A robots.txt job's outcome (``final``: its last hop): the origin's rules, or the
        unavailable-robots.txt policy (ask again later, then defer; give up when unreachable)."""
        ...

    async def release(self, ticket: Ticket) -> None:
        """Give a ticket back after a fault of ours in the loop: the host's slot is freed
        as after a fault of the host, if the ticket was not done already."""
        ...

    def fetching(self) -> AbstractAsyncContextManager[None]:
        """Held around each request: a pause holds the request here."""
        ...

    def rules_for(self, url: str) -> RobotsRules | None:
        """The robots.txt rules known here for ``url``'s origin, None if none are (a
        rendered page's own requests are checked against them)."""
        ...

    def knows_robots(self, url: str) -> bool:
        """Whether ``url`` is a robots.txt whose valid answer is known (a robots.txt redirect
        ending there is not followed)."""
        ...
