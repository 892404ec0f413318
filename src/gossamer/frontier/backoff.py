"""Frontier, retries: which answer a fetch result is, and whether its URL is fetched again.

Data flow: fetch result -> engine pipeline -> **backoff** -> ``Frontier.retry`` / ``done``.
The wait each answer implies is the politeness rule's (``frontier/politeness.py``, the one
place it is written); this module reads the result and decides the retry:

* 429 or 503: wait what Retry-After asks (else as for a fault), and fetch the URL again, up
  to ``max_retries`` times;
* 5xx or a transport fault: the doubling backoff;
* a fault of this machine (out of file handles, memory or ports): not the host's doing, so the
  host only pauses briefly and the URL is queued again;
* anything else: the host's ordinary delay, and its run of faults ends.
"""

from __future__ import annotations

import email.utils
from dataclasses import dataclass

from gossamer.fetch import FetchResult
from gossamer.frontier import politeness
from gossamer.frontier.hosts import HostState
from gossamer.frontier.politeness import LOCAL_FAULT_PAUSE, Answer

__all__ = ["LOCAL_FAULT_PAUSE", "Backoff", "Outcome", "answer_of", "retried", "retry_after"]


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
_FAULT = politeness.Outcome(Answer.FAULT)
_LOCAL = politeness.Outcome(Answer.LOCAL)
_ANY = politeness.HostTiming(0.0)  # a local fault's pause does not depend on the host
_RETRIED = (Answer.SLOW, Answer.LOCAL)


def answer_of(result: FetchResult, now: float) -> politeness.Outcome | None:
    """The politeness answer of a page fetch that reached the host (or failed on the way):
    None for an ordinary answer, which only ends the run of faults."""
    status = result.status
    if status in (429, 503):
        return politeness.Outcome(Answer.SLOW, retry_after(result.header("Retry-After"), now))
    if status == 0 or status >= 500:
        return _FAULT
    return None


def retried(answer: politeness.Outcome | None, retries: int, max_retries: int) -> bool:
    """Whether a page's URL is asked again: after 429 or 503, or a fault of this machine, up
    to ``max_retries`` times (``retries``: how often it was asked again already)."""
    return answer is not None and answer.answer in _RETRIED and retries < max_retries


@dataclass(frozen=True, slots=True)
class Backoff:
    """The retry policy, and the politeness rule's wait for each answer."""

    max_retries: int  # retries of one URL after 429/503 or a local fault
    max_backoff: float  # cap on any wait

    def after_response(
        self, result: FetchResult, host: HostState, retries: int, now: float
    ) -> Outcome:
        """The outcome of a page fetch that reached the host (or failed on the way there)."""
        answer = answer_of(result, now)
        if answer is None:
            return _SUCCESS
        wait = politeness.rest(host.timing, answer, self.max_backoff)
        return Outcome(
            success=False, backoff=wait, retry=retried(answer, retries, self.max_retries)
        )

    def after_local_fault(self, retries: int) -> Outcome:
        """This machine ran out of something: the URL is queued again a few times."""
        wait = politeness.rest(_ANY, _LOCAL, self.max_backoff)
        return Outcome(success=True, backoff=wait, retry=retried(_LOCAL, retries, self.max_retries))
