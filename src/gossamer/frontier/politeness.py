"""The politeness state machine: what a host's timing becomes after each outcome.

Data flow: fetch result -> ``backoff`` (which answer, retried or not) -> **politeness** ->
``Frontier.done`` / ``HostGate.release`` / the shared frontier's COMPLETE script, which is
this module's mirror in Lua (``distributed/lua.py``; ``tests/unit/distributed/
test_politeness_mirror.py`` drives both with random outcomes and holds them equal).

A host's timing (:class:`HostTiming`) is its delay, the time before which no request may
start, and its run of faults. Every engine moves it only through the functions below:

* the delay is the crawl's ``delay`` or the host's robots.txt Crawl-delay (the longest over
  its origins), whichever is longer, the Crawl-delay capped by ``crawl_delay_cap``;
* after an outcome the host rests its delay, or longer if the outcome asks: a fault (5xx but
  503, no answer) doubles ``max(delay, 1 s)`` per fault already in the run, at most
  ``MAX_DOUBLINGS`` times, never beyond ``max_backoff``; 429 or 503 waits what Retry-After
  asked (else as a fault), also capped by ``max_backoff``; a fault of this machine pauses
  ``LOCAL_FAULT_PAUSE``; an unavailable robots.txt waits for its origin's next attempt
  (``robots_retry_delay`` doubled per unavailable answer before it), given in the outcome;
* 429, 503, faults and an unavailable robots.txt lengthen the run of faults; any other
  outcome ends it, a fault of this machine included (it says nothing about the host);
* the next allowed time only ever moves later.

The functions are pure and allocate one small tuple per transition.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

__all__ = [
    "LOCAL_FAULT_PAUSE",
    "MAX_DOUBLINGS",
    "Answer",
    "HostTiming",
    "Outcome",
    "after",
    "defer",
    "deferral_end",
    "error_backoff",
    "rest",
    "robots_retry_wait",
    "settle",
    "with_crawl_delay",
]

LOCAL_FAULT_PAUSE = 1.0  # seconds a host waits after a fault of this machine, not of the host
MAX_DOUBLINGS = 16  # the backoff stops doubling after this many faults in a row


class HostTiming(NamedTuple):
    """One host name's politeness state.

    A NamedTuple rather than a frozen dataclass: a new one is made for every page, and a
    frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field) costs about four
    times as much as a tuple's."""

    delay: float  # effective minimum gap between requests (the crawl's delay or Crawl-delay)
    next_time: float = 0.0  # clock time before which no request may start
    errors_in_row: int = 0  # consecutive faults, for the backoff


class Answer(Enum):
    """What a finished request (or robots.txt attempt) tells about its host."""

    OK = "ok"  # the host answered: its run of faults ends
    FAULT = "fault"  # 5xx (not 503) or no answer: exponential backoff
    SLOW = "slow"  # 429 or 503: Retry-After, else as a fault
    LOCAL = "local"  # this machine ran out of something: not the host's doing
    UNAVAILABLE = "unavailable"  # robots.txt 5xx, 429 or unreachable


@dataclass(frozen=True, slots=True)
class Outcome:
    """The input of a transition: the answer, and the rest it named if it named one."""

    answer: Answer
    # SLOW: the seconds Retry-After asked for; LOCAL or UNAVAILABLE of a robots.txt fetch:
    # the seconds until the origin's next attempt (robots_retry_wait). None: not named.
    wait: float | None = None


_ENDS_RUN = frozenset({Answer.OK, Answer.LOCAL})


def with_crawl_delay(
    state: HostTiming, crawl_delay: float | None, *, delay: float, cap: float
) -> HostTiming:
    """The host's timing under its robots.txt Crawl-delay (the longest of its origins'; None:
    no origin names one), with the crawl's ``delay`` and ``crawl_delay_cap``."""
    if crawl_delay is not None:
        delay = max(delay, min(crawl_delay, cap))
    if delay == state.delay:
        return state
    return HostTiming(delay, state.next_time, state.errors_in_row)


def error_backoff(state: HostTiming, max_backoff: float) -> float:
    """The wait after one more fault: ``max(delay, 1 s)`` doubled per fault already in the
    run (at most ``MAX_DOUBLINGS`` times), capped by ``max_backoff``."""
    base = max(state.delay, 1.0)
    return float(min(base * 2 ** min(state.errors_in_row, MAX_DOUBLINGS), max_backoff))


def robots_retry_wait(failures: int, retry_delay: float) -> float:
    """Seconds to the next attempt at a robots.txt after ``failures`` unavailable answers."""
    return float(retry_delay * 2 ** (failures - 1))


def rest(state: HostTiming, outcome: Outcome, max_backoff: float) -> float:
    """How long ``outcome`` asks the host to rest; the delay is counted in by ``settle``."""
    answer = outcome.answer
    if answer is Answer.OK:
        return 0.0
    if answer is Answer.FAULT:
        return error_backoff(state, max_backoff)
    wait = outcome.wait
    if answer is Answer.SLOW:
        return min(wait if wait is not None else error_backoff(state, max_backoff), max_backoff)
    if wait is not None:
        return wait
    return LOCAL_FAULT_PAUSE if answer is Answer.LOCAL else 0.0


def settle(state: HostTiming, *, fault: bool, rest: float, now: float) -> HostTiming:
    """The host's timing once a request has ended at ``now``: the run of faults one longer
    (``fault``) or ended, and no new request before ``max(delay, rest)`` has passed."""
    # Once per page: unpacked, and compared inline rather than through max(), which halves it.
    delay, before, errors = state
    later = now + (delay if delay > rest else rest)
    return HostTiming(delay, later if later > before else before, errors + 1 if fault else 0)


def defer(state: HostTiming, until: float) -> HostTiming:
    """No request before ``until`` (an origin's next robots.txt attempt), whatever follows."""
    if until <= state.next_time:
        return state
    return HostTiming(state.delay, until, state.errors_in_row)


def deferral_end(waiting: Iterable[tuple[float, float]], grace: float, now: float) -> float:
    """When a crawl left with only hosts waiting to retry an unavailable robots.txt stops
    waiting for them. ``waiting``: each such host's (first unavailable answer, next attempt).
    Each gets ``grace`` seconds (``--robots-wait``) from its first unavailable answer, if its
    next attempt falls within them; an attempt due later would only delay the end, so such a
    host is not waited for at all (the end is ``now`` if no host is)."""
    return max((at + grace for at, nxt in waiting if nxt <= at + grace), default=now)


def after(state: HostTiming, outcome: Outcome, now: float, max_backoff: float) -> HostTiming:
    """The host's timing after ``outcome`` at ``now``: the whole rule in one call."""
    fault = outcome.answer not in _ENDS_RUN
    return settle(state, fault=fault, rest=rest(state, outcome, max_backoff), now=now)
