"""Per-host politeness state, per-origin robots.txt state, and the unit of work handed out.

A *host* is a host name (:func:`gossamer.urls.host_of`): every scheme and port of one name
share one politeness slot, because they are one server as far as load goes. robots.txt is
per *origin* (RFC 9309), so a host holds the robots state of each of its origins.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from enum import Enum

from gossamer.frontier.politeness import HostTiming
from gossamer.robots import RobotsRules


@dataclass(frozen=True, slots=True)
class Revisit:
    """What a recrawl knows of a page it asks again (``crawling/recrawl.py``).

    ``conditions`` are the request headers its stored validators give (If-None-Match,
    If-Modified-Since). The rest travels with the job in a shared crawl, where the worker that
    fetches the page may not hold it in its own folder: the stored content's SHA-1
    (``doc_id``) and length, the schedule's ``interval`` and ``changed_at``, the validators,
    and ``refers``: the stored response record (WARC-Record-ID, target URI, WARC-Date,
    payload digest), which a 304's revisit record names. Zero and None: not known here.
    """

    conditions: tuple[tuple[str, str], ...] = ()
    doc_id: str | None = None
    length: int = 0
    interval: float = 0.0
    changed_at: float = 0.0
    refers: tuple[str, str, str, str] | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """One URL to fetch. ``robots`` jobs fetch an origin's robots.txt before anything else.

    ``host`` is the host name of ``url`` (its politeness key).
    """

    url: str
    host: str
    depth: int = 0
    referrer: str | None = None
    retries: int = 0
    hops: int = 0  # redirects followed to reach this URL
    robots: bool = False
    fallbacks: tuple[str, ...] = ()  # seed alternatives to try if this one cannot be reached
    revisit: Revisit | None = None  # a recrawl's visit to a page stored before (issue 31)

    def again(self) -> Job:
        """The same job, queued once more (a retry after 429/503 or a fault of this machine)."""
        return replace(self, retries=self.retries + 1)


_NO_DELAY = HostTiming(0.0)  # immutable, so every host may start from the same value


class RobotsState(Enum):
    UNKNOWN = "unknown"  # not fetched yet, or expired: the next job is the robots.txt fetch
    FETCHING = "fetching"
    READY = "ready"
    GIVEN_UP = "given-up"  # robots.txt stayed unreachable: the origin's URLs are dropped


@dataclass(slots=True)
class OriginRobots:
    """What the frontier knows of one origin's robots.txt."""

    state: RobotsState = RobotsState.UNKNOWN
    rules: RobotsRules | None = None
    expires: float = 0.0
    failures: int = 0  # consecutive unavailable answers; >0 while UNKNOWN means deferred
    deferred_at: float = 0.0  # clock time of the first of those answers

    @property
    def deferred(self) -> bool:
        """Waiting to ask again after an unavailable robots.txt (5xx, 429, unreachable)."""
        return self.failures > 0 and self.state is RobotsState.UNKNOWN


@dataclass(slots=True)
class HostState:
    """Everything the frontier knows about one host name."""

    key: str
    queue: deque[Job] = field(default_factory=deque)  # the in-memory window
    backlog: int = 0  # jobs of this host waiting on disk
    loaded_upto: int = 0  # highest backlog row id already loaded into the window
    origins: dict[str, OriginRobots] = field(default_factory=dict)  # robots.txt per origin
    robots_fetching: int = 0  # origins whose robots.txt is being fetched now
    given_up: int = 0  # origins given up, so admission checks the origin only when needed
    # delay, next allowed time (monotonic) and run of faults: moved only by the politeness
    # rule (frontier/politeness.py)
    timing: HostTiming = field(default_factory=lambda: _NO_DELAY)
    # its site's delay (before Crawl-delay) and in-flight limit: the crawl's, or a [[site]]
    # table's (gossamer.sites), fixed when the host is first met
    site_delay: float = 0.0
    max_in_flight: int = 1
    in_flight: int = 0
    fetched: int = 0  # jobs completed, for the fewest-fetched-first order
    pages: int = 0  # page jobs completed (not robots.txt): the makespan order's first pages
    admitted: int = 0  # URLs ever queued for this host, against the per-host budget
    heap: str = ""  # "ready", "sleeping" or "" : which scheduling heap holds this host

    @property
    def delay(self) -> float:
        """Effective minimum gap between requests (the site's delay or Crawl-delay)."""
        return self.timing.delay

    @property
    def next_time(self) -> float:
        """Monotonic time before which no request may start."""
        return self.timing.next_time

    @property
    def errors_in_row(self) -> int:
        """Consecutive faults (5xx, 429/503, transport, unavailable robots.txt)."""
        return self.timing.errors_in_row

    @property
    def has_work(self) -> bool:
        return bool(self.queue) or self.backlog > 0

    @property
    def deferred(self) -> bool:
        """Some origin of this host waits to retry an unavailable robots.txt."""
        return any(robots.deferred for robots in self.origins.values())

    @property
    def crawl_delay(self) -> float | None:
        """The longest Crawl-delay its origins' robots.txt files name (None: none names one);
        a host name is one server, so the most cautious origin sets its pace."""
        return max(
            (
                r.rules.crawl_delay
                for r in self.origins.values()
                if r.rules is not None and r.rules.crawl_delay is not None
            ),
            default=None,
        )

    def robots(self, origin: str) -> OriginRobots:
        state = self.origins.get(origin)
        if state is None:
            state = self.origins[origin] = OriginRobots()
        return state
