"""Per-host politeness state and the unit of work the frontier hands out."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from gossamer.robots import RobotsRules


@dataclass(frozen=True, slots=True)
class Job:
    """One URL to fetch. ``robots`` jobs fetch the host's robots.txt before anything else."""

    url: str
    host: str
    depth: int = 0
    referrer: str | None = None
    retries: int = 0
    hops: int = 0  # redirects followed to reach this URL
    robots: bool = False
    fallbacks: tuple[str, ...] = ()  # seed alternatives to try if this one cannot be reached


class RobotsState(Enum):
    UNKNOWN = "unknown"  # not fetched yet, or expired: the next job is the robots.txt fetch
    FETCHING = "fetching"
    READY = "ready"
    GIVEN_UP = "given-up"  # robots.txt stayed unreachable: the host's URLs are dropped


@dataclass(slots=True)
class HostState:
    """Everything the frontier knows about one host (scheme://host:port)."""

    key: str
    queue: deque[Job] = field(default_factory=deque)  # the in-memory window
    backlog: int = 0  # jobs of this host waiting on disk
    loaded_upto: int = 0  # highest backlog row id already loaded into the window
    robots_state: RobotsState = RobotsState.UNKNOWN
    rules: RobotsRules | None = None
    robots_expires: float = 0.0
    robots_failures: int = 0
    delay: float = 0.0  # effective minimum gap between requests (config or Crawl-delay)
    next_time: float = 0.0  # monotonic time before which no request may start
    in_flight: int = 0
    fetched: int = 0  # jobs completed, for the fewest-fetched-first order
    admitted: int = 0  # URLs ever queued for this host, against the per-host budget
    errors_in_row: int = 0  # consecutive 5xx or transport faults, for backoff
    heap: str = ""  # "ready", "sleeping" or "" : which scheduling heap holds this host

    @property
    def has_work(self) -> bool:
        return (bool(self.queue) or self.backlog > 0) and (
            self.robots_state is not RobotsState.GIVEN_UP
        )
