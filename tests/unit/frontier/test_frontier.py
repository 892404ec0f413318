"""The frontier's politeness and ordering, driven by a fake clock."""

from __future__ import annotations

from gossamer.frontier import Admission, Frontier, Job, RobotsState
from gossamer.robots import RobotsRules, parse_robots
from gossamer.stats import CrawlStats
from gossamer.urls import host_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, **kw: float) -> tuple[Frontier, CrawlStats]:
    stats = CrawlStats()
    options = {
        "delay": 1.0,
        "max_per_host": 1,
        "crawl_delay_cap": 30.0,
        "robots_ttl": 3600.0,
        "robots_retry_delay": 10.0,
        "robots_retries": 2,
    }
    options.update(kw)
    return Frontier(stats=stats, clock=clock, **options), stats  # type: ignore[arg-type]


def job(origin: str, path: str = "/") -> Job:
    return Job(url=f"{origin}{path}", host=host_of(origin))


def ready_robots(frontier: Frontier, host: str, rules: RobotsRules | None = None) -> None:
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots and robots.url == f"{host}/robots.txt"
    frontier.set_robots(host, rules or RobotsRules.allow_all())
    frontier.done(robots, success=True)


def test_robots_txt_is_fetched_before_any_page_of_a_host() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0)
    frontier.add(job("http://a", "/x"))
    first = frontier.pop_ready()
    assert first is not None and first.robots
    # Nothing else from that host until robots.txt is known.
    assert frontier.pop_ready() is None
    frontier.set_robots("http://a", RobotsRules.allow_all())
    frontier.done(first, success=True)
    page = frontier.pop_ready()
    assert page is not None and page.url == "http://a/x"


def test_duplicate_urls_are_queued_once() -> None:
    frontier, _ = make(Clock())
    assert frontier.add(job("http://a", "/x")) is Admission.QUEUED
    assert frontier.add(job("http://a", "/x")) is Admission.DUPLICATE
    assert frontier.pending == 1


def test_one_request_in_flight_per_host_and_delay_between_requests() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=2.0)
    for i in range(3):
        frontier.add(job("http://a", f"/{i}"))
    ready_robots(frontier, "http://a")
    assert frontier.pop_ready() is None  # the robots.txt fetch started the delay
    clock.now += 2.0
    first = frontier.pop_ready()
    assert first is not None
    assert frontier.pop_ready() is None  # one in flight
    clock.now += 5.0
    assert frontier.pop_ready() is None  # still in flight, however long it takes
    frontier.done(first, success=True)
    assert frontier.pop_ready() is None
    assert frontier.next_wake() == 2.0
    clock.now += 2.0
    assert frontier.pop_ready() is not None


def test_crawl_delay_lengthens_the_gap_and_is_capped() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.5, crawl_delay_cap=3.0)
    frontier.add(job("http://a", "/1"))
    frontier.add(job("http://a", "/2"))
    ready_robots(
        frontier, "http://a", parse_robots(b"User-agent: *\nCrawl-delay: 60\n", "gossamer")
    )
    assert frontier.host("a").delay == 3.0
    clock.now += 3.0
    page = frontier.pop_ready()
    assert page is not None
    frontier.done(page, success=True)
    clock.now += 2.9
    assert frontier.pop_ready() is None
    clock.now += 0.1
    assert frontier.pop_ready() is not None


def test_hosts_with_fewest_fetches_go_first() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0)
    for i in range(5):
        frontier.add(job("http://big", f"/{i}"))
    ready_robots(frontier, "http://big")
    for _ in range(3):
        page = frontier.pop_ready()
        assert page is not None and page.host == "big"
        frontier.done(page, success=True)
    frontier.add(job("http://small", "/"))
    ready_robots(frontier, "http://small")
    page = frontier.pop_ready()
    assert page is not None and page.host == "small"


def test_disallowed_urls_are_dropped_and_counted() -> None:
    clock = Clock()
    frontier, stats = make(clock, delay=0.0)
    frontier.add(job("http://a", "/private/x"))
    frontier.add(job("http://a", "/public"))
    ready_robots(
        frontier, "http://a", parse_robots(b"User-agent: *\nDisallow: /private\n", "gossamer")
    )
    page = frontier.pop_ready()
    assert page is not None and page.url == "http://a/public"
    assert stats.skipped_robots == 1
    frontier.done(page, success=True)
    assert frontier.exhausted


def test_unreachable_robots_is_retried_then_the_host_is_given_up() -> None:
    clock = Clock()
    frontier, stats = make(clock, delay=0.0, robots_retry_delay=10.0, robots_retries=1)
    frontier.add(job("http://a", "/1"))
    frontier.add(job("http://a", "/2"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    assert frontier.robots_unavailable("http://a") is None
    frontier.done(robots, success=False)
    assert frontier.pop_ready() is None
    clock.now += 10.0
    again = frontier.pop_ready()
    assert again is not None and again.robots
    dropped = frontier.robots_unavailable("http://a")
    assert dropped is not None and [j.url for j in dropped] == ["http://a/1", "http://a/2"]
    frontier.done(again, success=False)
    assert frontier.host("a").origins["http://a"].state is RobotsState.GIVEN_UP
    assert stats.skipped_robots == 2
    assert frontier.exhausted


def test_backoff_delays_only_that_host() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0)
    frontier.add(job("http://slow", "/1"))
    frontier.add(job("http://slow", "/2"))
    frontier.add(job("http://fast", "/1"))
    frontier.add(job("http://fast", "/2"))
    ready_robots(frontier, "http://slow")
    ready_robots(frontier, "http://fast")
    a = frontier.pop_ready()
    b = frontier.pop_ready()
    assert a is not None and b is not None
    slow, fast = (a, b) if a.host == "slow" else (b, a)
    frontier.done(slow, success=False, backoff=60.0)
    frontier.done(fast, success=True)
    nxt = frontier.pop_ready()
    assert nxt is not None and nxt.host == "fast"
    assert frontier.pop_ready() is None


def test_robots_txt_expires_and_is_fetched_again() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0, robots_ttl=100.0)
    frontier.add(job("http://a", "/1"))
    frontier.add(job("http://a", "/2"))
    ready_robots(frontier, "http://a")
    page = frontier.pop_ready()
    assert page is not None and not page.robots
    frontier.done(page, success=True)
    clock.now += 101.0
    again = frontier.pop_ready()
    assert again is not None and again.robots


class ListBacklog:
    """An in-memory backlog with the database's contract: rows in id order, above ``after``."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, Job]] = []

    def load(self, host: str, after: int, limit: int) -> list[tuple[int, Job]]:
        hits = [(i, j) for i, j in self.rows if j.host == host and i > after]
        return hits[:limit]


def test_jobs_beyond_the_window_spill_and_come_back_in_order() -> None:
    clock = Clock()
    backlog = ListBacklog()
    stats = CrawlStats()
    frontier = Frontier(
        delay=0.0,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=1.0,
        robots_retries=1,
        stats=stats,
        clock=clock,
        backlog=backlog,
        window=3,
    )
    for i in range(10):
        item = job("http://a", f"/{i}")
        admission = frontier.add(item)
        if admission is Admission.SPILLED:
            backlog.rows.append((len(backlog.rows) + 1, item))
        assert admission is (Admission.QUEUED if i < 3 else Admission.SPILLED)
    assert frontier.pending == 10
    assert len(frontier.host("a").queue) == 3
    ready_robots(frontier, "http://a")
    order = []
    while (page := frontier.pop_ready()) is not None:
        order.append(page.url)
        frontier.done(page, success=True)
    assert order == [f"http://a/{i}" for i in range(10)]
    assert frontier.exhausted


def test_restore_counts_backlog_and_marks_seen() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0)
    frontier.restore(["http://a/old"], {"http://a": 2})
    assert frontier.pending == 2
    assert frontier.add(job("http://a", "/old")) is Admission.DUPLICATE
