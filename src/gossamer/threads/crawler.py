"""One crawler thread: take a job, wait for its host, fetch, record, put the new jobs back.

Data flow: shared frontier -> **crawler thread** -> host gate (politeness, robots.txt) ->
fetch (Gossamer's own ``Fetcher`` on an event loop of the thread's own) -> under the store
lock: WARC + CDXJ, the recorder (``crawl.db``, statistics, links through admission) -> the
thread's admitted jobs -> shared frontier; in the seed 000 pipeline also the page's URL
into the thread's bounded buffer.

Blocking strategies wait in ``take`` on their semaphore or condition; the others return at
once, and the thread backs off (waiting on the crawl's stop event, so a stop ends it at once).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from gossamer.crawling.exchange import fetched, fetched_robots
from gossamer.errors import StoreError
from gossamer.fetch import LOCAL_FAULTS, FetchResult
from gossamer.fetch.fetcher import Fetcher
from gossamer.frontier import Job
from gossamer.frontier.backoff import Backoff, Outcome
from gossamer.robots import UNCONNECTABLE, RobotsRules, lasting
from gossamer.threads.frontiers import BLOCKING, SharedFrontier
from gossamer.threads.politeness import HostGate
from gossamer.threads.shared import Ledger, Outbox, Tally, ThreadCounts, Ticket
from gossamer.urls import origin_of, path_query_of
from gossamer.urls.parts import robots_url

__all__ = ["CrawlerThread", "Shared"]

log = logging.getLogger(__name__)

TAKE_WAIT = 0.05  # seconds a blocking take waits before the thread checks for the end
MAX_BACKOFF = 0.02  # longest pause of a thread that found nothing, or only resting hosts

PageSink = Callable[[int, Job, FetchResult], None]


@dataclass(slots=True)
class Shared:
    """Everything the crawler threads share; built and owned by the engine."""

    frontier: SharedFrontier[Ticket]
    gate: HostGate
    outbox: Outbox
    tally: Tally
    ledger: Ledger
    store: threading.Lock  # over the recorder, WARC, CDXJ, statistics and crawl.db
    stop: threading.Event
    backoff: Backoff
    record: Callable[[Job, FetchResult], Outcome]  # archive + record a page (store lock held)
    # (store lock held) the rules, and the final hop as judged
    record_robots: Callable[[Job, list[FetchResult]], tuple[RobotsRules, FetchResult]]
    fall_back: Callable[[Job], None]  # a seed's next form (store lock held)
    is_sitemap: Callable[[Job], bool]  # (store lock held)
    reserve_page: Callable[[], bool | None]  # room under the page target? (store lock held)
    release_page: Callable[[], None]
    skipped_robots: Callable[[], None]  # (store lock held)
    make_fetcher: Callable[[], Fetcher]
    page_sink: PageSink | None = None
    # One release per thread once its fetcher is open (or it failed): the time limit counts
    # crawling, not each thread's client set-up, which a loaded machine can stretch.
    ready: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))


class CrawlerThread(threading.Thread):
    """A crawler thread; ``counts`` and ``fault`` are read after it has been joined."""

    def __init__(self, index: int, shared: Shared) -> None:
        super().__init__(name=f"crawler-{index}", daemon=True)
        self.index = index
        self._s = shared
        self.counts = ThreadCounts()
        self.fault: BaseException | None = None
        self._held: list[Job] = []  # jobs the full frontier did not take
        self._pause = 0.0

    def run(self) -> None:
        released = False
        try:
            with asyncio.Runner() as runner:
                fetcher = self._s.make_fetcher()
                runner.run(fetcher.__aenter__())
                self._s.ready.release()
                released = True
                try:
                    self._loop(runner, fetcher)
                finally:
                    runner.run(fetcher.__aexit__(None, None, None))
        except BaseException as exc:  # reported by the engine after the join
            self.fault = exc
            self._s.stop.set()
        finally:
            if not released:
                self._s.ready.release()

    def _loop(self, runner: asyncio.Runner, fetcher: Fetcher) -> None:
        s = self._s
        blocking = s.frontier.name in BLOCKING
        while not s.stop.is_set():
            self._put_held()
            ticket = s.frontier.take(TAKE_WAIT if blocking else 0.0)
            if ticket is None:
                if s.tally.idle(self.index, len(s.frontier) + len(self._held)):
                    break
                if not blocking:
                    self._rest(MAX_BACKOFF)
                continue
            self.counts.takes += 1
            s.tally.busy(self.index)
            if s.ledger.claim(ticket):  # else: one put handed out twice, a collision
                self._handle(ticket.job, runner, fetcher)

    def _rest(self, seconds: float) -> None:
        """Back off a little more each time nothing was found (at most ``MAX_BACKOFF``)."""
        self._pause = min(max(self._pause * 2, 0.0005), seconds)
        self._s.stop.wait(self._pause)

    def _handle(self, job: Job, runner: asyncio.Runner, fetcher: Fetcher) -> None:
        s = self._s
        wait = s.gate.claim(job.host)
        if wait > 0:
            self.counts.requeued += 1
            self._put(job)
            self._rest(min(wait, MAX_BACKOFF))
            return
        self._pause = 0.0
        try:
            self._with_slot(job, runner, fetcher)
        except StoreError:
            s.gate.release(job.host, requested=False)
            s.stop.set()
            raise

    def _with_slot(self, job: Job, runner: asyncio.Runner, fetcher: Fetcher) -> None:
        """Holding the host's slot: robots.txt first if unknown, else the page."""
        s = self._s
        origin = origin_of(job.url)
        rules = s.gate.rules(origin)
        if rules is None:
            self._robots(job, origin, runner, fetcher)
            return
        if not rules.is_allowed(path_query_of(job.url)):
            s.gate.release(job.host, requested=False)
            with s.store:
                s.skipped_robots()
            s.tally.finished()
            return
        with s.store:
            room = s.reserve_page()
            sitemap = bool(room) and s.is_sitemap(job)
        if not room:
            s.gate.release(job.host, requested=False)
            if room is None:
                s.stop.set()  # the page target is reached
                return
            self._put(job)  # fetches in flight may reach the target: wait for them
            self._s.stop.wait(MAX_BACKOFF)
            return
        try:
            result = runner.run(fetched(job.url, fetcher.fetch(job.url, any_type=sitemap)))
        except BaseException:
            with s.store:
                s.release_page()
            raise
        with s.store:  # one hold: the reservation becomes the page with no gap between
            s.release_page()
            outcome = s.record(job, result)
            new = self._take_admitted()
        s.gate.release(job.host, requested=True, success=outcome.success, backoff=outcome.backoff)
        if s.page_sink is not None and result.status and result.error not in LOCAL_FAULTS:
            s.page_sink(self.index, job, result)
        if outcome.retry:
            self._put(job.again())  # still the same piece of work: the tally is unchanged
        else:
            s.tally.finished()
        self._hand_over(new)

    def _robots(self, job: Job, origin: str, runner: asyncio.Runner, fetcher: Fetcher) -> None:
        """Fetch the origin's robots.txt with this slot; the page job goes back to wait."""
        s = self._s
        robots_job = Job(url=robots_url(origin), host=job.host, robots=True)
        fetch = fetcher.fetch_robots(robots_job.url, known=s.gate.knows_robots)
        hops = runner.run(fetched_robots(robots_job.url, fetch))
        with s.store:
            rules, final = s.record_robots(robots_job, hops)
            fall_back = final.error in UNCONNECTABLE and bool(job.fallbacks)
            if fall_back:
                s.fall_back(job)
            new = self._take_admitted()
        s.gate.set_robots(origin, job.host, rules, final)
        made_request = final.error not in LOCAL_FAULTS
        s.gate.release(job.host, requested=made_request, success=lasting(final.status, final.error))
        self._hand_over(new)
        if fall_back:
            s.tally.finished()  # replaced by its next form, already admitted
        else:
            self._put(job)

    def _take_admitted(self) -> list[Job]:
        """The jobs admission gave this thread (store lock held); counted before the put."""
        mine = self._s.outbox.mine()
        new = list(mine)
        mine.clear()
        self._s.tally.admitted(len(new))
        return new

    def _hand_over(self, jobs: list[Job]) -> None:
        for job in jobs:
            self._put(job)

    def _put(self, job: Job) -> None:
        if self._held or not self._s.frontier.put(Ticket(job)):
            self._held.append(job)
            self.counts.held += 1
            return
        self.counts.puts += 1

    def _put_held(self) -> None:
        """Offer the jobs the full frontier refused again, oldest first, until it refuses."""
        held = self._held
        while held:
            if not self._s.frontier.put(Ticket(held[0])):
                return
            held.pop(0)
            self.counts.puts += 1

    @property
    def held(self) -> list[Job]:
        return self._held
