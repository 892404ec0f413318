"""A worker's rounds with the shared frontier: leases, completions and links in batches.

Data flow: the crawl loops (``crawling/loop.py``) -> the seam (``distributed/seam.py``) ->
**Rounds**: completions and links wait in an outbox per partition; leases wait in a pool ->
one round = one pipeline of ``lua.STEP`` calls (one per partition it has business with) ->
Redis -> the pool, for the loops waiting.

Why rounds: a call per page and per lease cost two round trips and ~50 Redis commands a
page. A round carries every completion, link and lease wanted since the last one, so its cost
is shared by the pages in it. A round starts when the loops wait for leases and the pool is
empty, or when ``BATCH`` completions wait, but lingers up to ``LINGER`` seconds for more.
Holding a finished lease a little longer asks nothing more of the host: its delay counts from
the completion, in Redis.

Two rules keep the end right across partitions: a completion goes out only in a round after
the one that queued its links in other partitions (so a job is always queued or leased
somewhere: never only in a worker's memory), and the crawl is finished only when two looks
at every partition, the second after the first, find nothing queued or leased and no epoch
moved between them (one look suffices with one partition, where a step is atomic).

Under a page target, leases are taken against credit (``lua_crawl.CREDIT``): a worker takes what it
can use, gives back what it cannot, and one that sees none left, with none of its own,
reclaims the credit of workers gone (``reclaim.py``) before it says the target is reached.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

from gossamer.distributed.frontier import (
    Completion,
    Deferred,
    Finished,
    Halted,
    Lease,
    RedisFrontier,
    StepCall,
    StepReply,
)
from gossamer.distributed.patience import Patience
from gossamer.distributed.reclaim import reclaim_gone
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, Outcome

__all__ = ["BATCH", "LINGER", "Rounds"]

log = logging.getLogger(__name__)

BATCH = 16  # completions that start a round without lingering
LINGER = 0.01  # seconds a round waits for more business once there is some
IDLE_LAST = 0.1  # seconds: the longest pause before asking partitions that had nothing
MAX_WAIT = 0.5  # longest sleep towards a host's next-allowed time before asking again
_UNUSED = Outcome(Answer.LOCAL, 0.0)  # a lease given back unfetched


class Rounds:
    """The pool of leases and the outbox of one worker; ``run`` is its pump."""

    def __init__(
        self,
        front: RedisFrontier,
        *,
        concurrency: int,
        patience: Patience,
        on_lost: Callable[[str], None],
        clock_offset: Callable[[], float],
    ) -> None:
        self.front = front
        self._concurrency = concurrency
        self._patience = patience
        self._on_lost = on_lost
        self._offset = clock_offset  # Redis's clock minus ours
        self.pool: list[Lease] = []
        self.held: dict[str, str] = {}  # host -> token: every lease this worker holds
        # (host, token) of the leases whose end waits to be sent (tokens count per partition)
        self._ending: set[tuple[str, str]] = set()
        self._waiting = 0
        self._has_lease = asyncio.Condition()
        self._outbox: dict[int, list[Completion]] = defaultdict(list)
        self._links: dict[int, list[str]] = defaultdict(list)
        self._after: list[tuple[int, Completion]] = []  # (first round allowed, completion)
        self._pending_since: float | None = None
        self._round = 0
        self._kick = asyncio.Event()
        self._ready_at: dict[int, float] = {}  # part -> frontier time worth asking again
        self._dry: tuple[int, ...] | None = None  # epochs of a look that found nothing
        self.credit = 0  # target credit not attached to a lease
        self._reserved: set[str] = set()  # hosts whose lease holds a page of the target
        self.target = -1  # the page target (0: none; -1: not known yet)
        self.ended: Finished | Deferred | Halted | None = None
        self._closing = False
        self._notifying: asyncio.Task[None] | None = None
        self.rounds = 0  # round trips made (for the benchmarks)

    # -- the loops' side ----------------------------------------------------------------------
    async def take(self) -> Lease | None:
        """A lease for a loop; None once the crawl ended for this worker."""
        async with self._has_lease:
            self._waiting += 1
            self._kick.set()
            try:
                await self._has_lease.wait_for(lambda: bool(self.pool) or self.ended is not None)
            finally:
                self._waiting -= 1
            return self.pool.pop() if self.pool and self.ended is None else None

    def holds(self, lease: Lease) -> bool:
        """This worker holds ``lease`` and has not ended it yet."""
        key = (lease.host, lease.token)
        return self.held.get(lease.host) == lease.token and key not in self._ending

    def complete(self, completion: Completion, links: Sequence[Job] = ()) -> None:
        """Queue a lease's end, and its page's links, for the next rounds (no wait)."""
        lease = completion.lease
        self._ending.add((lease.host, lease.token))
        part = self.front.part(lease.host)
        later = False
        for p, args in self.front.links_by_part(links).items():
            self._links[p] += args
            later = later or p != part
        if later:  # its links travel first, in the next round; it follows a round later
            self._after.append((self._round + 2, completion))
        else:
            self._outbox[part].append(completion)
        if self._pending_since is None:
            self._pending_since = time.monotonic()
        self._kick.set()

    def wake(self) -> None:
        """New work somewhere (another worker's step published it): ask again."""
        self._ready_at.clear()
        self._kick.set()

    def end(self, reason: Halted | Finished | Deferred) -> None:
        """No lease from now on; the outbox still goes out (``close``). Leases in the pool,
        never fetched, go back to their hosts' queues at once (no request was made: a fault
        of this machine's kind, waiting nothing more than the host's delay)."""
        if self.ended is None:
            self.ended = reason
        unused, self.pool = self.pool, []
        for lease in unused:
            self.complete(Completion(lease, _UNUSED, retry=lease.job))
        self._kick.set()
        self._notifying = asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._has_lease:
            self._has_lease.notify_all()

    # -- the pump ---------------------------------------------------------------------------
    async def run(self) -> None:
        """Make rounds until ``close`` and the outbox is empty."""
        while True:
            await self._next()
            if self._closing and not self._business():
                break
            await self._one_round()

    async def close(self) -> None:
        """The loops are done: the pump sends what waits and ends; unused credit goes back."""
        self._closing = True
        self._kick.set()

    async def give_back(self) -> None:
        if self.credit > 0:
            credit = self.credit
            self.credit = 0
            await self._patience.call(lambda: self.front.credit(0, give=credit))

    def _business(self) -> bool:
        return bool(self._after or any(self._outbox.values()) or any(self._links.values()))

    def _want(self) -> int:
        if self.ended is not None or self._closing:
            return 0
        return max(0, min(self._waiting, self._concurrency - len(self.held)) - len(self.pool))

    async def _next(self) -> None:
        """Wait until a round is worth making."""
        while True:
            self._kick.clear()
            if self._closing:
                return
            pending = sum(len(c) for c in self._outbox.values()) + len(self._after)
            want = self._want()
            asking = want > 0 and bool(self._askable())
            if pending >= BATCH or (self._closing and self._business()):
                return
            if pending or asking or any(self._links.values()):
                if self._pending_since is None:  # the linger counts from the first business
                    self._pending_since = time.monotonic()
                linger = self._pending_since + LINGER - time.monotonic()
                if linger <= 0 or (asking and self._waiting >= max(1, self._concurrency // 2)):
                    return
                await self._wait(linger)
                if self._kick.is_set():
                    continue
                return
            pause = IDLE_LAST if want == 0 else self._until_ready()
            await self._wait(pause)

    async def _wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._kick.wait(), max(0.0, seconds))

    def _now(self) -> float:
        return time.time() + self._offset()

    def _askable(self) -> list[int]:
        now = self._now()
        return [p for p in range(self.front.parts) if self._ready_at.get(p, 0.0) <= now]

    def _until_ready(self) -> float:
        soonest = min((self._ready_at.get(p, 0.0) for p in range(self.front.parts)), default=0.0)
        return min(max(soonest - self._now(), 0.002), MAX_WAIT)

    async def _one_round(self) -> None:
        self._round += 1
        self._pending_since = None
        calls: dict[int, StepCall] = {}
        sent: list[Completion] = []
        after, self._after = self._after, []
        for allowed, completion in after:
            if allowed <= self._round:
                self._outbox[self.front.part(completion.lease.host)].append(completion)
            else:
                self._after.append((allowed, completion))
        want = self._want()
        if want > 0 and self.target != 0:
            want = await self._credit_for(want)
        asking = self._askable() if want > 0 else []
        turn = self._round % len(asking) if asking else 0
        asking = asking[turn:] + asking[:turn]  # the first in line changes round by round
        # never more leases than wanted in all; a partition of no share still looks (want 0)
        shares = {p: want // len(asking) + (k < want % len(asking)) for k, p in enumerate(asking)}
        for part in set(self._outbox) | set(self._links) | set(asking):
            completions, links = self._outbox.pop(part, []), self._links.pop(part, [])
            sent += completions
            share = shares.get(part, -1)
            if completions or links or share >= 0:
                calls[part] = StepCall(part, completions, links, share, self.target > 0)
        if not calls:
            return
        self.rounds += 1
        # Sent again as they are if Redis is gone a while: a completion that was recorded is
        # then refused (its lease is released), links meet the seen-set, and leases given in
        # a lost answer are not renewed, so they expire and go back.
        batch = list(calls.values())
        replies = await self._patience.call(lambda: self.front.steps(batch))
        for completion in sent:
            host = completion.lease.host
            self._ending.discard((host, completion.lease.token))
            if self.held.get(host) == completion.lease.token:
                del self.held[host]
            if host in self._reserved:
                self._reserved.discard(host)
                if not completion.count_page:
                    self.credit += 1  # its page of the target is free again
        for reply in replies:
            self._take(reply, asked=reply.part in asking)
        if asking:
            self._judge(replies, asking)
            if self.credit > 0 and not any(r.leases for r in replies):
                await self.give_back()  # nothing to use it on now: others may have
        if self.pool or self.ended is not None:
            async with self._has_lease:
                self._has_lease.notify_all()

    def _take(self, reply: StepReply, *, asked: bool) -> None:
        for host in reply.lost:
            self._on_lost(host)
        for lease in reply.leases:
            self.held[lease.host] = lease.token
            self.pool.append(lease)
            if self.target > 0:
                self._reserved.add(lease.host)
                self.credit -= 1
        if not asked or reply.left == "more":
            self._ready_at.pop(reply.part, None)
        elif reply.left == "wait" and reply.until is not None:
            # asked again by then at the latest: what the partition holds may change (a
            # deferral's grace ends, a pause is lifted) without a word on the channel
            self._ready_at[reply.part] = min(reply.until, self._now() + MAX_WAIT)
        else:  # others' leases, nothing, deferred, paused: a wake or the pause asks again
            self._ready_at[reply.part] = self._now() + IDLE_LAST

    def _judge(self, replies: Sequence[StepReply], asking: Sequence[int]) -> None:
        """The end, once every partition was asked and none has anything for anyone."""
        lefts = {r.left for r in replies if r.part in asking}
        if "stopped" in lefts:
            self.end(Halted("stopped"))
            return
        if not lefts <= {"empty", "deferred"} or self.pool or self.held or self._business():
            self._dry = None
            return
        if len(asking) < self.front.parts:  # dry where it asked: ask them all next
            self._dry = None
            self._ready_at.clear()
            return
        epochs = tuple(r.epoch for r in sorted(replies, key=lambda r: r.part))
        if self.front.parts > 1 and self._dry != epochs:
            self._dry = epochs  # look once more: a step elsewhere may have been under way
            self._ready_at.clear()
            return
        if "deferred" in lefts:
            self.end(Deferred(tuple(sorted(w for r in replies for w in r.why))))
        else:
            self.end(Finished())

    async def _credit_for(self, want: int) -> int:
        """How many of ``want`` leases the page target allows now (asking for credit)."""
        if self.credit >= want and self.target > 0:
            return want
        take = want - max(self.credit, 0) if self.target != 0 else want
        answer = await self._patience.call(lambda: self.front.credit(take))
        self.target = answer.target
        if answer.state == "stopped":
            self.end(Halted("stopped"))
            return 0
        if answer.target == 0:
            return want
        if answer.granted < 0:  # taken for gone: its credit is another's now
            self.credit = 0
        else:
            self.credit += answer.granted
        if self.credit <= 0 and not self._reserved and answer.left == 0:
            stored = await self._patience.call(self.front.pages)
            if stored >= answer.target:
                self.end(Halted("target"))
                return 0
            if await self._patience.call(lambda: reclaim_gone(self.front)) > 0:
                self._kick.set()
        return max(0, min(want, self.credit))
