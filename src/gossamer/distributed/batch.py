"""One batch step of the shared frontier: what a worker sends to a partition, what comes back.

Data flow: the seam's rounds (``distributed/rounds.py``) -> **batch** (a :class:`StepCall`
as the ``lua.STEP`` arguments) -> Redis -> **batch** (the reply as a :class:`StepReply`) ->
the seam. Values here are plain frozen data; the frontier client (``frontier.py``) sends them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gossamer.distributed.codec import decode_job, encode_job, seen_member
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Outcome
from gossamer.sites import SiteRules
from gossamer.urls import host_of

__all__ = ["Completion", "Lease", "StepCall", "StepReply", "admission", "parse_reply", "text"]

REAP_LIMIT = 32  # expired leases returned per step (the rest on the next steps)


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to fetch ``job`` from ``host`` now; ``token`` fences a stale completion."""

    host: str
    token: str
    job: Job


@dataclass(frozen=True, slots=True)
class Completion:
    """The end of a lease: how the host answered (``outcome``: a politeness outcome), the job
    to queue again (``retry``), whether a page was stored (``count_page``), and for an
    unavailable robots.txt the origin and why (``deferred``: ``origin TAB why``)."""

    lease: Lease
    outcome: Outcome
    retry: Job | None = None
    count_page: bool = False
    deferred: str = ""


@dataclass(frozen=True, slots=True)
class StepCall:
    """A batch for one partition: completions, admission arguments of links (six per URL,
    :func:`admission`), and up to ``want`` leases (``reserve``: each holds a page of the
    target); ``want`` 0 asks none but says what the partition holds (a look), -1 neither."""

    part: int
    completions: Sequence[Completion] = ()
    links: Sequence[str] = ()
    want: int = -1
    reserve: bool = False

    def args(self, prefix: str, now: str, worker: str, ttl: float) -> list[str]:
        out = [prefix, now, worker, repr(ttl), str(self.want), "1" if self.reserve else "0"]
        out += [str(REAP_LIMIT), str(len(self.completions)), str(len(self.links) // 6)]
        for c in self.completions:
            wait = c.outcome.wait
            out += [
                c.lease.host,
                c.lease.token,
                c.outcome.answer.value,
                "" if wait is None else repr(float(wait)),
                "" if c.retry is None else encode_job(c.retry),
                "1" if c.count_page else "0",
                c.deferred,
            ]
        out += self.links
        return out


@dataclass(frozen=True, slots=True)
class StepReply:
    """What a partition answered: its control ``state``, links queued, its
    ``epoch`` (moves with every change of its queues or leases), then what is ``left`` once
    the leases were given: ``more`` (all wanted given), ``wait`` (until ``until``, frontier
    clock), ``idle`` (others' leases only), ``empty`` (nothing queued or leased), ``deferred``
    (only hosts whose robots.txt is unavailable, past their grace: ``why``), or the state
    (``paused``, ``stopped``)."""

    part: int
    state: str
    queued: int
    epoch: int
    left: str
    until: float | None
    lost: tuple[str, ...] = ()
    leases: tuple[Lease, ...] = ()
    why: tuple[tuple[str, str], ...] = field(default=())


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def parse_reply(part: int, reply: Sequence[Any]) -> StepReply:
    state, queued, epoch, left, until = (text(v) for v in reply[:5])
    at = 5
    nlost = int(reply[at])
    lost = tuple(text(h) for h in reply[at + 1 : at + 1 + nlost])
    at += 1 + nlost
    nleases = int(reply[at])
    leases = []
    for i in range(at + 1, at + 1 + 3 * nleases, 3):
        host = text(reply[i])
        leases.append(
            Lease(host=host, token=text(reply[i + 1]), job=decode_job(reply[i + 2], host))
        )
    at += 1 + 3 * nleases
    ndeferred = int(reply[at])
    found = (text(entry).partition("\t") for entry in reply[at + 1 : at + 1 + ndeferred])
    why = tuple(sorted((origin, reason) for origin, _, reason in found))
    return StepReply(
        part=part,
        state=state,
        queued=int(queued),
        epoch=int(epoch),
        left=left,
        until=float(until) if until else None,
        lost=lost,
        leases=tuple(leases),
        why=why,
    )


def admission(job: Job, sites: SiteRules | None) -> list[str]:
    """The six STEP arguments of one URL: shard, fingerprint, host, job JSON, and the URL
    budget and delay of its host's [[site]] tables ('' where the crawl's apply)."""
    shard, member = seen_member(job.url)
    host = job.host or host_of(job.url)
    budget = delay = ""
    if sites:
        rule = sites.for_host(host)
        if rule.matched:
            budget = str(rule.max_pages or 0)
            delay = repr(rule.delay)
    return [shard, member, host, encode_job(job), budget, delay]
