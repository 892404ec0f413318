"""What the shared frontier answers a worker: a lease or why there is none, a completion's
fate, the page target's credit.

Data flow: Redis (``lua.STEP``, ``lua_crawl.CREDIT``) -> ``frontier.py`` / ``rounds.py`` ->
**answers** -> the seam (``seam.py``), which ends the worker's crawl on ``Finished``,
``Deferred`` or ``Halted``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gossamer.distributed.batch import Lease, StepReply

__all__ = [
    "Credit",
    "Deferred",
    "Done",
    "Finished",
    "Halted",
    "Idle",
    "LeaseAnswer",
    "Leased",
    "Lost",
    "Wait",
    "summarise",
]


@dataclass(frozen=True, slots=True)
class Leased:
    lease: Lease


@dataclass(frozen=True, slots=True)
class Wait:
    """No host is ready before ``until`` (frontier clock)."""

    until: float


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing ready, but other workers hold leases: their links may bring work."""


@dataclass(frozen=True, slots=True)
class Finished:
    """No queued job and no lease anywhere: the crawl has run dry."""


@dataclass(frozen=True, slots=True)
class Deferred:
    """Nothing left but hosts waiting to retry an unavailable robots.txt, past their grace:
    the crawl ends, leaving these origins to its next run; ``why`` each robots.txt was
    unavailable (its status or error kind; empty if not known)."""

    why: tuple[tuple[str, str], ...]  # (origin, why), by origin

    @property
    def origins(self) -> tuple[str, ...]:
        return tuple(origin for origin, _ in self.why)


@dataclass(frozen=True, slots=True)
class Halted:
    """The crawl is paused or stopped, or its page target is stored (``state``)."""

    state: str


@dataclass(frozen=True, slots=True)
class Lost:
    """The lease had expired and was reaped (or taken over): the completion was refused."""


@dataclass(frozen=True, slots=True)
class Done:
    """The completion was recorded."""

    queued: int  # new links queued
    pages: int = 0  # pages stored crawl-wide, after this one


@dataclass(frozen=True, slots=True)
class Credit:
    """The page target's credit: ``granted`` now (-1: this worker was taken for gone, its
    credit reclaimed), ``left`` crawl-wide, the crawl's control ``state``, its ``target``."""

    granted: int
    left: int
    state: str
    target: int


LeaseAnswer = Leased | Wait | Idle | Finished | Deferred | Halted


def summarise(replies: Sequence[StepReply]) -> Wait | Idle | Finished | Deferred | Halted:
    """What the partitions' answers say together, when none gave a lease. ``Finished`` from
    one look is exact for one partition only; the rounds confirm it across several."""
    lefts = {reply.left for reply in replies}
    for state in ("stopped", "paused"):
        if state in lefts:
            return Halted(state)
    if lefts <= {"empty", "deferred"} and "deferred" in lefts:
        return Deferred(tuple(sorted(w for reply in replies for w in reply.why)))
    if lefts <= {"empty"}:
        return Finished()
    waits = [reply.until for reply in replies if reply.left == "wait" and reply.until is not None]
    if waits:
        return Wait(min(waits))
    return Idle()
