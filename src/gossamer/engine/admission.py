"""Which found URLs enter the crawl: scope and trap rules, ownership, then the frontier.

Data flow: parse (links), redirects, seeds and other workers' forwards -> **admission** ->
frontier (queued once, by the seen-set) and the ``urls`` table of ``crawl.db``. Every URL the
crawl finds passes through :meth:`Admitter.admit`, in a live crawl and in replay alike, so a
resumed or recovered crawl refuses and counts exactly what the live one did.

One rule is approximate across a restart: the URL families of ``max_family``
(:class:`~gossamer.urls.traps.TrapFamilies`) live in memory only, and both the replay and the
resumed crawl start with none. A chain cut before the restart has its refused link offered
again (``catch_up`` re-offers every link never queued), and a family met again starts from the
depth it is met at, so each restart can give a calendar up to ``max_family`` more pages. The
per-host budget bounds it as before: a restart carries it over (each host's URLs queued in
earlier runs are counted from ``crawl.db``).
"""

from __future__ import annotations

from typing import Protocol

from gossamer.config import ScopeConfig
from gossamer.engine.partition import Part
from gossamer.frontier import Admission, Job
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.urls import host_of
from gossamer.urls.traps import TrapFamilies, strip_session_ids, trap_reason

__all__ = ["Admitter", "Queue"]


class Queue(Protocol):
    """Where admitted URLs go: the crawl's frontier (or the threaded engine's outbox)."""

    def seen(self, url: str) -> bool: ...

    def add(self, job: Job, *, host_budget: int | None = None) -> Admission: ...


class Admitter:
    """Applies the scope rules to every URL found and queues the new ones."""

    def __init__(
        self,
        scope: ScopeConfig,
        *,
        frontier: Queue,
        stats: CrawlStats,
        db: MetadataDB,
        part: Part | None = None,
    ) -> None:
        self._scope = scope
        self._frontier = frontier
        self._stats = stats
        self._db = db
        self._part = part  # set when this crawler is one worker of a partitioned crawl
        # Kept by the worker that owns a host: it sees every URL of that host, whoever found it.
        self._families = TrapFamilies(scope.max_family) if scope.max_family is not None else None

    def admit(
        self,
        url: str,
        depth: int,
        referrer: str | None,
        *,
        hops: int = 0,
        fallbacks: tuple[str, ...] = (),
    ) -> bool:
        """Apply the scope rules and queue ``url`` if it is new; True if it was queued."""
        scope = self._scope
        host = host_of(url)
        if scope.strip_session_ids:
            # Before dedup: a fresh session id in every link would make every URL new.
            stripped = strip_session_ids(url)
            if stripped != url:
                self._stats.record_error("trap_session_id", host)
                url = stripped
        trap = trap_reason(
            url,
            max_length=scope.max_url_length,
            max_depth=scope.max_path_depth,
            max_repeats=scope.max_path_repeats,
        )
        if trap is not None:
            self._stats.skipped_other += 1
            self._stats.record_error(trap, host)
            return False
        if scope.max_depth is not None and depth > scope.max_depth:
            self._stats.skipped_other += 1
            return False
        if self._part is not None and not self._part.mine_host(host):
            # Another worker owns this host: it deduplicates and records the URL.
            self._part.forward(url, depth, referrer)
            return False
        if self._refused_family(url, host, depth, referrer):
            return False
        job = Job(
            url=url, host=host, depth=depth, referrer=referrer, hops=hops, fallbacks=fallbacks
        )
        return self._queue(job)

    def _refused_family(self, url: str, host: str, depth: int, referrer: str | None) -> bool:
        """True if ``url`` continues a self-feeding family too far (counted unless queued)."""
        families = self._families
        if families is None or families.verdict(url, depth, referrer) is None:
            return False
        if not self._frontier.seen(url):
            # A URL queued before the chain grew too long is a duplicate, not a trap.
            self._stats.skipped_other += 1
            self._stats.record_error("trap_family", host)
        return True

    def _queue(self, job: Job) -> bool:
        admission = self._frontier.add(job, host_budget=self._scope.max_pages_per_host)
        if admission is Admission.DUPLICATE:
            return False
        if admission is Admission.OVER_BUDGET:
            self._stats.skipped_other += 1
            self._stats.record_error("trap_host_budget", job.host)
            return False
        self._stats.discovered += 1
        self._db.add_discovered(
            [(job.url, job.host, job.depth, job.referrer)], spilled=admission is Admission.SPILLED
        )
        return True

    def fall_back(self, job: Job) -> None:
        """A URL that could not be reached: queue its next form (a seed's https -> http)."""
        if job.fallbacks:
            self.admit(job.fallbacks[0], job.depth, job.referrer, fallbacks=job.fallbacks[1:])
