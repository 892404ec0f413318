"""The in-process frontier under ``[[site]]`` tables: a matching host starts from its site's
delay and in-flight limit, the others from the crawl's; a larger Crawl-delay still wins."""

from __future__ import annotations

from pathlib import Path

from gossamer.config import CrawlConfig, PolitenessConfig, SiteConfig
from gossamer.frontier import Frontier, Job
from gossamer.robots import parse_robots
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.urls import host_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SITE = SiteConfig(match="*.slow.test", delay=0.5, max_per_host=2)


def make(clock: Clock, *tables: SiteConfig) -> Frontier:
    polite = PolitenessConfig(delay=0.2, max_per_host=1, crawl_delay_cap=30.0)
    config = CrawlConfig(seeds=Path("s"), out=Path("o"), politeness=polite, sites=tables)
    return Frontier(
        delay=polite.delay,
        max_per_host=polite.max_per_host,
        crawl_delay_cap=polite.crawl_delay_cap,
        robots_ttl=3600.0,
        robots_retry_delay=10.0,
        robots_retries=2,
        stats=CrawlStats(),
        clock=clock,
        sites=SiteRules.of(config),
    )


def fill(frontier: Frontier, origin: str, pages: int, robots: str = "") -> None:
    for n in range(pages):
        frontier.add(Job(url=f"{origin}/p{n}", host=host_of(origin)))
    ticket = frontier.pop_ready()
    assert ticket is not None and ticket.robots
    frontier.set_robots(origin, parse_robots(robots.encode(), "gossamer"))
    frontier.done(ticket, success=True)


def taken(frontier: Frontier) -> list[Job]:
    jobs = []
    while (job := frontier.pop_ready()) is not None:
        jobs.append(job)
    return jobs


def test_a_site_host_takes_its_limit_and_delay_while_others_keep_the_crawls() -> None:
    clock = Clock()
    frontier = make(clock, SITE)
    fill(frontier, "http://www.slow.test", 6)
    fill(frontier, "http://other.test", 6)
    assert taken(frontier) == []  # both wait out their delay after robots.txt
    clock.now += 0.2
    assert [job.host for job in taken(frontier)] == ["other.test"]  # 0.2 s: only the crawl's
    clock.now += 0.3
    site = [job for job in taken(frontier) if job.host == "www.slow.test"]
    assert len(site) == 2  # its own limit: two at once
    assert frontier.host("www.slow.test").delay == 0.5
    assert frontier.host("other.test").delay == 0.2
    frontier.done(site[0], success=True)
    clock.now += 0.49
    assert not [job for job in taken(frontier) if job.host == "www.slow.test"]
    clock.now += 0.01
    assert [job.host for job in taken(frontier)] == ["www.slow.test"]


def test_a_larger_crawl_delay_wins_over_the_sites_delay_and_a_smaller_one_does_not() -> None:
    frontier = make(Clock(), SITE, SiteConfig(match="fast.slow.test", delay=0.0))
    fill(frontier, "http://a.slow.test", 1, "User-agent: *\nCrawl-delay: 3\n")
    fill(frontier, "http://b.slow.test", 1, "User-agent: *\nCrawl-delay: 0.1\n")
    fill(frontier, "http://fast.slow.test", 1, "User-agent: *\nCrawl-delay: 1\n")
    assert frontier.host("a.slow.test").delay == 3.0
    assert frontier.host("b.slow.test").delay == 0.5
    assert frontier.host("fast.slow.test").delay == 1.0  # looser than robots.txt: never


def test_a_host_with_a_crawl_delay_is_asked_one_request_at_a_time() -> None:
    clock = Clock()
    frontier = make(clock, SITE)
    fill(frontier, "http://a.slow.test", 4, "User-agent: *\nCrawl-delay: 1\n")
    fill(frontier, "http://b.slow.test", 4)
    clock.now += 1.0
    hosts = [job.host for job in taken(frontier)]
    assert hosts.count("a.slow.test") == 1  # its Crawl-delay: one at a time
    assert hosts.count("b.slow.test") == 2  # its site's limit


class Ticking(Clock):
    """A clock that moves on at every reading, and stops a frontier that keeps asking it."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        assert self.readings < 1_000, "the frontier spins"
        self.now += self.step
        return self.now


def test_a_host_moved_later_while_ready_sleeps_until_its_time() -> None:
    """A host with a free slot waits in the ready heap while its other request is in flight;
    when that request's end moves its next time later, the next pass puts it to sleep, even
    when that time comes between the pass's start and a later reading of the clock."""
    clock = Ticking(0.0)
    frontier = make(clock, SITE)
    fill(frontier, "http://www.slow.test", 3)
    clock.now += 0.5
    first = frontier.pop_ready()
    assert first is not None and not first.robots
    frontier.done(first, success=True)  # its next time: 0.5 s on, while it sits ready
    clock.now += 0.5 - 0.0015
    clock.step = 0.001  # the end of its delay falls between two readings of the next pass
    assert frontier.pop_ready() is None
    assert frontier.pop_ready() is not None  # and the next pass hands out its page
