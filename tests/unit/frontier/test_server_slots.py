"""Issue 9: one politeness slot per host name; robots.txt per origin; a crawl that ends."""

from __future__ import annotations

from gossamer.frontier import Frontier, Job, RobotsState
from gossamer.robots import RobotsRules, parse_robots
from gossamer.stats import CrawlStats
from gossamer.urls import host_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(clock: Clock, **kw: float) -> Frontier:
    options: dict[str, float] = {
        "delay": 0.0,
        "max_per_host": 1,
        "crawl_delay_cap": 30.0,
        "robots_ttl": 3600.0,
        "robots_retry_delay": 60.0,
        "robots_retries": 3,
    }
    options.update(kw)
    return Frontier(stats=CrawlStats(), clock=clock, **options)  # type: ignore[arg-type]


def job(url: str) -> Job:
    return Job(url=url, host=host_of(url))


ORIGINS = ("http://a.test", "https://a.test", "http://a.test:8080")


def answer_robots(frontier: Frontier, rules: RobotsRules | None = None) -> list[str]:
    """Answer every robots.txt fetch handed out until a page comes; the origins asked."""
    asked = []
    while (robots := frontier.pop_ready()) is not None and robots.robots:
        origin = robots.url.removesuffix("/robots.txt")
        asked.append(origin)
        frontier.set_robots(origin, rules or RobotsRules.allow_all())
        frontier.done(robots, success=True)
    assert robots is None or not robots.robots
    if robots is not None:  # a page came out: put it back as in flight, then finish it
        frontier.done(robots, success=True)
    return asked


def test_every_scheme_and_port_of_a_host_share_one_slot() -> None:
    clock = Clock()
    frontier = make(clock)
    for origin in ORIGINS:
        frontier.add(job(f"{origin}/page"))
    in_flight: list[Job] = []
    seen_robots = set()
    # Drive the whole crawl; never two jobs out at once for a.test, robots.txt included.
    while not frontier.exhausted:
        got = frontier.pop_ready()
        assert got is not None
        assert frontier.pop_ready() is None, "a second request to one server while one is out"
        in_flight.append(got)
        if got.robots:
            origin = got.url.removesuffix("/robots.txt")
            seen_robots.add(origin)
            frontier.set_robots(origin, RobotsRules.allow_all())
        frontier.done(got, success=True)
    assert seen_robots == set(ORIGINS)  # robots.txt stays per origin
    assert sorted(j.url for j in in_flight if not j.robots) == sorted(f"{o}/page" for o in ORIGINS)


def test_crawl_delay_of_one_origin_holds_for_the_whole_host() -> None:
    clock = Clock()
    frontier = make(clock, delay=0.0)
    frontier.add(job("https://a.test/1"))
    frontier.add(job("http://a.test/2"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.url == "https://a.test/robots.txt"
    frontier.set_robots("https://a.test", parse_robots(b"User-agent: *\nCrawl-delay: 5\n", "g"))
    frontier.done(robots, success=True)
    assert frontier.pop_ready() is None  # robots.txt was a request too
    clock.now += 5.0
    first = frontier.pop_ready()
    assert first is not None and first.url == "https://a.test/1"
    frontier.done(first, success=True)
    # The http origin's robots.txt is the next request, and it too waits out the delay.
    assert frontier.pop_ready() is None
    clock.now += 4.9
    assert frontier.pop_ready() is None
    clock.now += 0.1
    second = frontier.pop_ready()
    assert second is not None and second.url == "http://a.test/robots.txt"


def test_rules_of_one_origin_do_not_apply_to_another() -> None:
    clock = Clock()
    frontier = make(clock)
    frontier.add(job("https://a.test/private/x"))
    frontier.add(job("http://a.test/private/x"))
    disallow = parse_robots(b"User-agent: *\nDisallow: /private/\n", "g")
    handed = []
    while not frontier.exhausted:
        got = frontier.pop_ready()
        assert got is not None
        if got.robots:
            origin = got.url.removesuffix("/robots.txt")
            rules = disallow if origin.startswith("https") else RobotsRules.allow_all()
            frontier.set_robots(origin, rules)
        else:
            handed.append(got.url)
        frontier.done(got, success=True)
    assert handed == ["http://a.test/private/x"]


def test_known_rules_are_offered_for_reuse_until_they_expire() -> None:
    clock = Clock()
    frontier = make(clock, robots_ttl=100.0)
    assert frontier.robots_rules("https://a.test") is None
    rules = RobotsRules.allow_all()
    frontier.set_robots("https://a.test", rules)
    assert frontier.robots_rules("https://a.test") is rules
    assert frontier.robots_rules("http://a.test") is None
    clock.now += 100.0
    assert frontier.robots_rules("https://a.test") is None


def test_restored_rules_keep_their_remaining_lifetime() -> None:
    clock = Clock()
    frontier = make(clock, robots_ttl=3600.0)
    frontier.set_robots("http://a.test", RobotsRules.allow_all(), ttl=10.0)
    frontier.add(job("http://a.test/x"))
    page = frontier.pop_ready()
    assert page is not None and not page.robots  # no robots.txt fetch: the rules are valid
    frontier.done(page, success=True)
    frontier.add(job("http://a.test/y"))
    clock.now += 10.0
    again = frontier.pop_ready()
    assert again is not None and again.robots  # expired: fetched again


def test_only_deferred_hosts_left_is_noticed_and_dropped() -> None:
    clock = Clock()
    frontier = make(clock)
    frontier.add(job("http://down.test/1"))
    frontier.add(job("http://down.test/2"))
    frontier.add(job("http://up.test/1"))
    got = {}
    for _ in range(2):
        robots = frontier.pop_ready()
        assert robots is not None and robots.robots
        got[robots.host] = robots
    assert not frontier.deferred_only()  # two robots.txt fetches in flight
    assert frontier.robots_unavailable("http://down.test") is None  # a 503: retry later
    frontier.done(got["down.test"], success=False)
    frontier.set_robots("http://up.test", RobotsRules.allow_all())
    frontier.done(got["up.test"], success=True)
    assert not frontier.deferred_only()  # up.test still has a page ready
    page = frontier.pop_ready()
    assert page is not None and page.url == "http://up.test/1"
    assert not frontier.deferred_only()  # in flight
    frontier.done(page, success=True)
    assert frontier.pop_ready() is None
    assert frontier.deferred_only()
    assert frontier.deferred_origins() == ["http://down.test"]
    assert frontier.drop_deferred() == ["http://down.test"]
    assert frontier.exhausted
    assert frontier.host("down.test").origins["http://down.test"].state is RobotsState.UNKNOWN


def test_a_given_up_origin_drops_only_its_own_urls() -> None:
    clock = Clock()
    frontier = make(clock)
    frontier.add(job("https://a.test/1"))
    frontier.add(job("http://a.test/2"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.url == "https://a.test/robots.txt"
    dropped = frontier.robots_unavailable("https://a.test", give_up=True)
    assert dropped is not None and [j.url for j in dropped] == ["https://a.test/1"]
    frontier.done(robots, success=False)
    assert answer_robots(frontier) == ["http://a.test"]
    assert frontier.exhausted
    # Later links to the given-up origin are refused at once; the other origin still works.
    frontier.add(job("https://a.test/3"))
    assert frontier.pending == 0


def robots_fail_first(frontier: Frontier, origin: str) -> None:
    """A first link to ``origin``, whose robots.txt (the job handed out) is unavailable."""
    frontier.add(job(f"{origin}/1"))
    robots = frontier.pop_ready()
    assert robots is not None and robots.robots
    frontier.robots_unavailable(origin)
    frontier.done(robots, success=False)


def test_each_deferred_origin_gets_its_grace_from_its_first_failure() -> None:
    clock = Clock()
    frontier = make(clock, robots_retry_delay=10.0)
    robots_fail_first(frontier, "http://down.test")
    assert frontier.deferral_ends(30.0) == 1030.0  # its retry, at 1010, falls within
    clock.now += 5.0
    robots_fail_first(frontier, "http://late.test")
    assert frontier.deferral_ends(30.0) == 1035.0  # the latest deferral decides
    # A second failure of the same origin does not restart its grace; its next attempt
    # (20 s later, at 1030) still falls within it.
    clock.now += 5.0
    retry = frontier.pop_ready()
    assert retry is not None and retry.url == "http://down.test/robots.txt"
    frontier.robots_unavailable("http://down.test")
    frontier.done(retry, success=False)
    assert frontier.deferral_ends(30.0) == 1035.0


def test_a_deferred_origin_whose_retry_comes_after_its_grace_is_not_waited_for() -> None:
    # RFC 9309's retry is a minute away by default: waiting 30 s for it would only delay the
    # end of the crawl, which leaves the origin to a resume at once.
    clock = Clock()
    frontier = make(clock, robots_retry_delay=60.0)
    robots_fail_first(frontier, "http://down.test")
    assert frontier.deferred_only()
    assert frontier.deferral_ends(30.0) == 1000.0  # now
    assert frontier.deferral_ends(90.0) == 1090.0  # a grace that reaches the retry
    assert frontier.drop_deferred() == ["http://down.test"]
    # Dropped, the host still sleeps in the heap until its retry time, with no work: the
    # crawl is no longer "waiting for deferred hosts" (a worker would spin on it).
    assert not frontier.deferred_only()
    assert frontier.exhausted
