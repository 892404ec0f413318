"""A distributed worker's admission queue: the links of the page just stored, for its lease.

Data flow: recorder -> admission (scope and trap rules) -> **LinkBuffer** -> the worker, which
sends them with the lease's completion -> Redis's seen-set, the crawl-wide deduplication. The
buffer keeps a local seen-set too, so a link this worker already sent is not sent again; what
it admits is new to this worker (``crawl.db``'s discovered URLs), which Redis may still know
from another. The per-host budget is Redis's to keep, crawl-wide.
"""

from __future__ import annotations

from gossamer.frontier import Admission, Job
from gossamer.frontier.seen import SeenSet

__all__ = ["LinkBuffer"]


class LinkBuffer:
    """The :class:`gossamer.crawling.admission.Queue` of a distributed worker."""

    def __init__(self) -> None:
        self._seen = SeenSet()
        self._jobs: list[Job] = []

    def seen(self, url: str) -> bool:
        return url in self._seen

    def add(self, job: Job, *, host_budget: int | None = None) -> Admission:
        if not self._seen.add(job.url):
            return Admission.DUPLICATE
        self._jobs.append(job)
        return Admission.QUEUED

    def take(self) -> list[Job]:
        """The jobs admitted since the last call (the store step runs without awaiting, so
        they are the links of the one page just recorded)."""
        jobs, self._jobs = self._jobs, []
        return jobs
