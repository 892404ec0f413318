"""Frontier, host state over time: how long a host waits after an answer, and what is retried.

Data flow: fetch result -> engine pipeline -> **backoff** -> ``Frontier.done`` / ``retry``.
The frontier holds each host's run of consecutive faults (``HostState.errors_in_row``); this
module turns an outcome into the wait that run implies:

* 429 or 503: wait what Retry-After asks (else as for a fault), capped by ``max_backoff``,
  and fetch the URL again, up to ``max_retries`` times;
* 5xx or a transport fault: wait the host's delay (at least 1 s) doubled per fault in a row,
  capped by ``max_backoff``;
* a fault of this machine (out of file handles, memory or ports): not the host's doing, so the
  host only pauses briefly and the URL is queued again;
* anything else: the host's ordinary delay, and its run of faults ends.
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass

from gossamer.fetch import FetchResult
from gossamer.frontier.hosts import HostState

__all__ = ["LOCAL_FAULT_PAUSE", "Backoff", "Outcome", "retry_after"]

LOCAL_FAULT_PAUSE = 1.0  # seconds a host waits after a fault of this machine, not of the host
_MAX_DOUBLINGS = 16


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the frontier is told about a finished job."""

    success: bool  # ends the host's run of faults
    backoff: float = 0.0  # seconds the host waits beyond its delay
    retry: bool = False  # queue the URL once more


_SUCCESS = Outcome(success=True)


@dataclass(frozen=True, slots=True)
class Backoff:
    """The retry and backoff policy, from the politeness settings."""

    max_retries: int  # retries of one URL after 429/503 or a local fault
    max_backoff: float  # cap on any wait

    def after_response(
        self, result: FetchResult, host: HostState, retries: int, now: float
    ) -> Outcome:
        """The outcome of a page fetch that reached the host (or failed on the way there)."""
        status = result.status
        if status in (429, 503):
            wait = retry_after(result.header("Retry-After"), now)
            backoff = wait if wait is not None else self.error_backoff(host)
            return Outcome(
                success=False,
                backoff=min(backoff, self.max_backoff),
                retry=retries < self.max_retries,
            )
        if status == 0 or status >= 500:
            return Outcome(success=False, backoff=self.error_backoff(host))
        return _SUCCESS

    def after_local_fault(self, retries: int) -> Outcome:
        """This machine ran out of something: the URL is queued again a few times."""
        return Outcome(success=True, backoff=LOCAL_FAULT_PAUSE, retry=retries < self.max_retries)

    def error_backoff(self, host: HostState) -> float:
        """Exponential backoff after consecutive faults of one host, capped."""
        base = max(host.delay, 1.0)
        return float(min(base * 2 ** min(host.errors_in_row, _MAX_DOUBLINGS), self.max_backoff))
