"""The page target of a ``--workers`` crawl, handed out to the workers in grants.

Data flow: the coordinator (``engine/workers.py``) holds the **budget**; each worker
(``engine/partition.py``'s ``Part``) may store as many pages as it has been granted, asks for
more before it runs out, and gives back what it holds when it runs dry. A fixed share per
worker would end a crawl short of its target whenever one worker's hosts hold fewer pages
than its share while another's hold more; grants follow the work instead.

The coordinator can tell that the target is reached without counting pages itself: every
page granted is either stored or still held by a worker, and a worker says when it is
*full* (it has stored all it holds, nothing is in flight) or *idle* (it has nothing to
crawl, and gave back what it did not use). With nothing left to grant and every worker full
or idle, the pages stored equal the target. A message only counts once the worker has seen
every grant sent to it, as the end-of-crawl rule counts forwarded batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GRANT_MAX", "PageBudget", "grant_size"]

GRANT_MAX = 256  # the most pages one grant hands out


def grant_size(left: int, workers: int) -> int:
    """How many pages one grant hands out when ``left`` are still to be granted: a few
    grants per worker, so the last pages go where the work is."""
    return max(1, min(GRANT_MAX, left // (4 * workers)))


@dataclass(slots=True)
class PageBudget:
    """The coordinator's ledger of a page target over ``workers`` workers."""

    left: int  # pages not granted yet
    workers: int
    sent: list[int] = field(init=False)  # grants sent, per worker
    full: list[bool] = field(init=False)
    waiting: list[int] = field(default_factory=list)  # workers that asked and got nothing

    def __post_init__(self) -> None:
        self.sent = [0] * self.workers
        self.full = [False] * self.workers

    def first_grants(self) -> list[int]:
        """What each worker holds when it starts (its first grant, already counted)."""
        size = grant_size(self.left, self.workers)
        grants = []
        for k in range(self.workers):
            grant = min(size, self.left)
            self.left -= grant
            self.sent[k] += 1
            grants.append(grant)
        return grants

    def ask(self, k: int, seen: int, full: bool) -> int:
        """Worker ``k`` wants more (``full``: it has stored all it holds); ``seen``: grants
        it had when it asked. The pages granted now, or 0 (it waits for pages given back)."""
        self.full[k] = full and seen == self.sent[k]
        if self.left == 0:
            if k not in self.waiting:
                self.waiting.append(k)
            return 0
        return self._grant(k)

    def give_back(self, k: int, pages: int) -> list[tuple[int, int]]:
        """Worker ``k`` ran dry holding ``pages`` it will not use: they go to the workers
        waiting; (worker, pages) for each grant made."""
        if k in self.waiting:
            self.waiting.remove(k)
        self.full[k] = False
        self.left += pages
        grants = []
        while self.left and self.waiting:
            waiter = self.waiting.pop(0)
            grants.append((waiter, self._grant(waiter)))
        return grants

    def current(self, k: int, seen: int) -> bool:
        """Whether worker ``k`` had seen every grant sent to it when it said ``seen``."""
        return seen == self.sent[k]

    def reached(self, idle: list[bool]) -> bool:
        """The target is reached: nothing left to grant, every worker full or idle."""
        return self.left == 0 and all(i or f for i, f in zip(idle, self.full, strict=True))

    def _grant(self, k: int) -> int:
        grant = min(grant_size(self.left, self.workers), self.left)
        self.left -= grant
        self.sent[k] += 1
        self.full[k] = False
        return grant
