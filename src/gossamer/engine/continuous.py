"""``gossamer crawl --continuous``: a crawl that keeps its pages fresh until it is stopped.

Data flow: the crawl runs to its end (``crawl_here``) -> **continuous** waits until the next
page of ``crawl.db``'s schedule is due -> a ``due`` recrawl starts (``crawling/revisits``)
-> the crawl runs again, revisiting what is due and crawling what the changed pages lead to
-> and so on. Each round is an ordinary resume of the folder, so a round killed half-way is
picked up like any crawl. SIGINT or SIGTERM while it waits ends it as a stopped crawl.
"""

from __future__ import annotations

import logging
import select
import time
from pathlib import Path

from gossamer.engine.interrupts import woken_by_signals
from gossamer.store.reads import CrawlRecords

__all__ = ["DUE", "NOTHING", "STOPPED", "next_due", "wait_for_due"]

log = logging.getLogger(__name__)

DUE = "due"  # a page is due: run a round
NOTHING = "nothing"  # no page to revisit at all
STOPPED = "stopped"  # a signal ended the wait
_LOOK_AGAIN = 60.0  # seconds between looks at the schedule while waiting (it may change)


def next_due(out: Path) -> float | None:
    """When the crawl's next page is due (wall-clock seconds); None: it has none."""
    with CrawlRecords(out / "crawl.db") as records:
        return records.next_due()


def wait_for_due(out: Path) -> str:
    """Wait until a page of the crawl in ``out`` is due: :data:`DUE`, :data:`NOTHING`, or
    :data:`STOPPED` when SIGINT or SIGTERM came first."""
    told = False
    with woken_by_signals() as woken:
        while True:
            due = next_due(out)
            if due is None:
                return NOTHING
            remaining = due - time.time()
            if remaining <= 0:
                return DUE
            if not told:
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(due))
                log.warning("continuous: next page due at %s; waiting (Ctrl-C stops)", when)
                told = True
            signalled, _, _ = select.select([woken], [], [], min(remaining, _LOOK_AGAIN))
            if signalled:
                return STOPPED
