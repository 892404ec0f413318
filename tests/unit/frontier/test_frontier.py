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


def test_a_crawl_to_its_end_serves_the_host_with_most_work_left_first() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0, to_the_end=True)
    for i in range(6):
        frontier.add(job("http://big", f"/{i}"))
    ready_robots(frontier, "http://big")
    for _ in range(2):  # big has fetched pages, and has the most left
        page = frontier.pop_ready()
        assert page is not None and page.host == "big"
        frontier.done(page, success=True)
    frontier.add(job("http://small", "/"))
    frontier.add(job("http://mid", "/a"))
    frontier.add(job("http://mid", "/b"))
    # Every host's first request comes before any other: robots.txt, then the first page.
    ready_robots(frontier, "http://small")
    ready_robots(frontier, "http://mid")
    firsts = [frontier.pop_ready(), frontier.pop_ready()]
    assert {page.host for page in firsts if page is not None} == {"small", "mid"}
    for page in firsts:
        assert page is not None
        frontier.done(page, success=True)
    # Then most work left first: big (4 left) before mid (1) until they are level; a tie
    # goes to the host that has waited longer. Small has none left.
    order = []
    while (page := frontier.pop_ready()) is not None:
        order.append(page.host)
        frontier.done(page, success=True)
    assert order == ["big", "big", "big", "mid", "big"]


def test_a_crawl_with_limits_keeps_the_fewest_fetched_order() -> None:
    frontier, _ = make(Clock(), delay=0.0)
    for host, pages in (("big", 6), ("mid", 2)):
        for i in range(pages):
            frontier.add(job(f"http://{host}", f"/{i}"))
        ready_robots(frontier, f"http://{host}")
    order = []
    while (page := frontier.pop_ready()) is not None:
        order.append(page.host)
        frontier.done(page, success=True)
    assert order[:4] == ["big", "mid", "big", "mid"]


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


# -- cases found by mutation testing (TESTING.md) ------------------------------------------------


def test_a_failed_robots_fetch_still_waits_for_the_host_delay() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=5.0, robots_retry_delay=1.0)
    frontier.add(job("http://a", "/"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    assert frontier.robots_unavailable("http://a") is None
    frontier.done(robots, success=False)
    assert frontier.next_wake() == 5.0  # the configured delay, longer than the retry wait


def test_next_wake_reports_waits_under_a_second() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.25)
    frontier.add(job("http://a", "/1"))
    frontier.add(job("http://a", "/2"))
    ready_robots(frontier, "http://a")
    assert frontier.next_wake() == 0.25


def test_the_host_budget_admits_exactly_that_many_urls() -> None:
    frontier, _ = make(Clock())
    admitted = [frontier.add(job("http://a", f"/{i}"), host_budget=2) for i in range(4)]
    assert admitted == [Admission.QUEUED, Admission.QUEUED] + [Admission.OVER_BUDGET] * 2
    # A duplicate is not counted against the budget, and other hosts have their own.
    assert frontier.add(job("http://a", "/0"), host_budget=2) is Admission.DUPLICATE
    assert frontier.add(job("http://b", "/0"), host_budget=1) is Admission.QUEUED
    assert frontier.pending == 3


def test_a_given_up_origin_drops_its_urls_but_not_those_of_the_hosts_other_origins() -> None:
    clock = Clock()
    frontier, stats = make(clock, delay=0.0, robots_retries=0)
    frontier.add(job("http://a", "/1"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.url == "http://a/robots.txt"
    assert frontier.robots_unavailable("http://a", give_up=True) is not None
    frontier.done(robots, success=False)
    assert stats.skipped_robots == 1
    # New URLs of the given-up origin are dropped and counted; the https origin is asked.
    assert frontier.add(job("http://a", "/2")) is Admission.QUEUED
    assert frontier.add(job("https://a", "/3")) is Admission.QUEUED
    assert stats.skipped_robots == 2
    frontier.retry(job("http://a", "/1"))  # a retry of a given-up origin's URL: dropped too
    frontier.retry(job("https://a", "/4"))
    assert stats.skipped_robots == 3
    assert frontier.pending == 2
    ready_robots(frontier, "https://a")
    pages = []
    while (page := frontier.pop_ready()) is not None:
        pages.append(page.url)
        frontier.done(page, success=True)
    assert pages == ["https://a/3", "https://a/4"]
    assert frontier.exhausted


def test_in_flight_counts_every_job_handed_out() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0, max_per_host=2)
    for i in range(3):
        frontier.add(job("http://a", f"/{i}"))
    frontier.add(job("http://b", "/0"))
    ready_robots(frontier, "http://a")
    ready_robots(frontier, "http://b")
    handed = [frontier.pop_ready() for _ in range(4)]
    first, second, third, last = handed
    assert first is not None and second is not None and third is not None
    assert last is None  # a has two in flight (its limit), b one
    assert frontier.in_flight == 3
    assert frontier.host("a").in_flight == 2
    frontier.done(first, success=True)
    assert frontier.in_flight == 2 and not frontier.exhausted
    assert frontier.pop_ready() is not None  # a's third URL, now that a slot is free
    assert frontier.in_flight == 3


def test_a_sleeping_host_given_more_urls_is_still_handed_out_once_at_a_time() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=1.0)
    frontier.add(job("http://a", "/0"))
    ready_robots(frontier, "http://a")  # a sleeps for its delay from here
    frontier.add(job("http://a", "/1"))
    frontier.add(job("http://a", "/2"))
    clock.now += 1.0
    page = frontier.pop_ready()
    assert page is not None
    assert frontier.pop_ready() is None  # one in flight, however often a was scheduled


def test_disallowed_urls_are_each_counted() -> None:
    clock = Clock()
    frontier, stats = make(clock, delay=0.0)
    for path in ("/private/1", "/private/2", "/public"):
        frontier.add(job("http://a", path))
    ready_robots(
        frontier, "http://a", parse_robots(b"User-agent: *\nDisallow: /private\n", "gossamer")
    )
    page = frontier.pop_ready()
    assert page is not None and page.url == "http://a/public"
    assert stats.skipped_robots == 2


def test_robots_retries_wait_longer_each_time_then_give_up() -> None:
    clock = Clock()
    frontier, stats = make(clock, delay=0.0, robots_retry_delay=10.0, robots_retries=2)
    frontier.add(job("http://a", "/1"))
    stats.skipped_robots = 5  # counted before: giving up adds to it
    for wait in (10.0, 20.0):
        robots = frontier.pop_ready()
        assert robots is not None and robots.robots
        assert frontier.robots_unavailable("http://a") is None
        frontier.done(robots, success=False)
        assert frontier.next_wake() == wait
        clock.now += wait - 0.01
        assert frontier.pop_ready() is None
        clock.now += 0.01
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    assert frontier.robots_unavailable("http://a") is not None  # the third failure: given up
    assert stats.skipped_robots == 6


def test_a_robots_txt_that_recovered_gets_its_retries_back() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0, robots_retry_delay=1.0, robots_retries=1, robots_ttl=5.0)
    for i in range(3):
        frontier.add(job("http://a", f"/{i}"))
    robots = frontier.pop_ready()
    assert robots is not None
    assert frontier.robots_unavailable("http://a") is None  # first failure: retry
    frontier.done(robots, success=False)
    clock.now += 1.0
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    frontier.set_robots("http://a", RobotsRules.allow_all())
    frontier.done(robots, success=True)
    page = frontier.pop_ready()
    assert page is not None and not page.robots
    frontier.done(page, success=True)
    clock.now += 5.0  # the rules expire and are fetched again: that fetch fails once
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    assert frontier.robots_unavailable("http://a") is None  # a retry, not given up
    assert frontier.host("a").origins["http://a"].deferred


def test_restore_brings_each_hosts_backlog_back_from_disk() -> None:
    clock = Clock()
    backlog = ListBacklog()
    backlog.rows = [
        (1, job("http://a", "/1")),
        (2, job("http://a", "/2")),
        (3, job("http://b", "/1")),
    ]
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
        window=64,
    )
    frontier.restore([], {"a": 2, "b": 1})
    assert frontier.pending == 3
    assert [frontier.host(h).backlog for h in ("a", "b")] == [2, 1]
    robots = [frontier.pop_ready(), frontier.pop_ready()]
    for r in robots:
        assert r is not None and r.robots
        frontier.set_robots(r.url.removesuffix("/robots.txt"), RobotsRules.allow_all())
        frontier.done(r, success=True)
    urls = []
    while (page := frontier.pop_ready()) is not None:
        urls.append(page.url)
        frontier.done(page, success=True)
    assert sorted(urls) == ["http://a/1", "http://a/2", "http://b/1"]
    assert frontier.exhausted and frontier.pending == 0


def test_a_refill_loads_one_window_at_a_time() -> None:
    clock = Clock()
    backlog = ListBacklog()
    backlog.rows = [(i, job("http://a", f"/{i}")) for i in range(1, 11)]
    frontier = Frontier(
        delay=0.0,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=1.0,
        robots_retries=1,
        stats=CrawlStats(),
        clock=clock,
        backlog=backlog,
        window=3,
    )
    frontier.restore([], {"a": 10})
    frontier.add(job("http://a", "/fresh"))  # spilled behind the backlog, not in memory
    assert len(frontier.host("a").queue) == 0
    frontier.pop_ready()  # a's window is empty: three rows are loaded to find the next job
    assert len(frontier.host("a").queue) == 3


def test_rows_the_disk_no_longer_holds_are_forgotten() -> None:
    # A resume counted three spilled URLs for a, but they were fetched in the earlier run.
    frontier, _ = make(Clock(), delay=0.0)
    frontier.restore([], {"a": 3})
    assert frontier.pending == 3
    assert frontier.pop_ready() is None
    assert frontier.pending == 0 and frontier.exhausted
    assert frontier.host("a").backlog == 0


def test_more_rows_on_disk_than_counted_are_all_crawled() -> None:
    clock = Clock()
    backlog = ListBacklog()
    backlog.rows = [(i, job("http://a", f"/{i}")) for i in range(1, 4)]
    frontier = Frontier(
        delay=0.0,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=1.0,
        robots_retries=1,
        stats=CrawlStats(),
        clock=clock,
        backlog=backlog,
        window=64,
    )
    frontier.restore([], {"a": 1})  # counted one; the table holds three
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    assert frontier.pending == 3  # corrected when the rows came in
    assert frontier.host("a").backlog == 0
    frontier.set_robots("http://a", RobotsRules.allow_all())
    frontier.done(robots, success=True)
    urls = []
    while (page := frontier.pop_ready()) is not None:
        urls.append(page.url)
        frontier.done(page, success=True)
    assert urls == ["http://a/1", "http://a/2", "http://a/3"]
    assert frontier.exhausted and frontier.pending == 0


def test_deferral_ends_a_grace_after_the_first_failure_or_now() -> None:
    clock = Clock()
    frontier, _ = make(clock, delay=0.0, robots_retry_delay=20.0)
    assert frontier.deferral_ends(30.0) == clock.now  # nothing deferred: nothing to wait for
    frontier.add(job("http://a", "/"))
    robots = frontier.pop_ready()
    assert robots is not None
    frontier.robots_unavailable("http://a")
    frontier.done(robots, success=False)
    failed_at = clock.now
    clock.now += 7.0
    assert frontier.deferral_ends(30.0) == failed_at + 30.0  # the retry at +20 is within
    assert frontier.deferral_ends(10.0) == clock.now  # a retry past the grace: not waited for


def test_dropping_deferred_hosts_keeps_the_others_work() -> None:
    clock = Clock()
    backlog = ListBacklog()
    frontier = Frontier(
        delay=0.0,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=100.0,
        robots_retries=3,
        stats=CrawlStats(),
        clock=clock,
        backlog=backlog,
        window=1,
    )
    for i in range(3):  # one in memory, two spilled to disk
        item = job("http://bad", f"/{i}")
        if frontier.add(item) is Admission.SPILLED:
            backlog.rows.append((len(backlog.rows) + 1, item))
    frontier.add(job("http://good", "/"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.url == "http://bad/robots.txt"
    frontier.robots_unavailable("http://bad")
    frontier.done(robots, success=False)
    assert frontier.drop_deferred() == ["http://bad"]
    assert frontier.pending == 1  # good's URL
    assert frontier.host("bad").backlog == 0 and not frontier.host("bad").has_work
    assert frontier.host("good").has_work
