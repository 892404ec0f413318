"""The politeness rule (frontier/politeness.py): each transition by example, and the engines'
call sequences (Backoff + Frontier.done, robots_unavailable + done, HostGate) against it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gossamer.fetch import FetchResult
from gossamer.frontier import Backoff, Frontier, HostTiming, Job
from gossamer.frontier.politeness import (
    LOCAL_FAULT_PAUSE,
    Answer,
    Outcome,
    after,
    robots_retry_wait,
    with_crawl_delay,
)
from gossamer.robots import RobotsRules, parse_robots
from gossamer.stats import CrawlStats
from gossamer.threads.politeness import HostGate

MAX_BACKOFF = 100.0
OK = Outcome(Answer.OK)
FAULT = Outcome(Answer.FAULT)


def test_an_ordinary_answer_rests_the_delay_and_ends_the_run_of_faults() -> None:
    state = HostTiming(2.0, next_time=0.0, errors_in_row=3)
    assert after(state, OK, 10.0, MAX_BACKOFF) == HostTiming(2.0, 12.0, 0)


def test_faults_double_from_at_least_one_second_up_to_the_cap() -> None:
    state = HostTiming(0.5)
    rests = []
    for _ in range(9):
        nxt = after(state, FAULT, 0.0, MAX_BACKOFF)
        rests.append(nxt.next_time)
        state = HostTiming(0.5, 0.0, nxt.errors_in_row)
    assert rests == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 100.0, 100.0]
    assert state.errors_in_row == 9


def test_doubling_stops_after_sixteen_faults() -> None:
    huge = 1e12
    state = HostTiming(1.0, errors_in_row=40)
    assert after(state, FAULT, 0.0, huge).next_time == 2.0**16


def test_429_and_503_wait_what_retry_after_asks_capped_else_as_a_fault() -> None:
    state = HostTiming(1.0, errors_in_row=2)
    asked = after(state, Outcome(Answer.SLOW, 30.0), 0.0, MAX_BACKOFF)
    assert asked == HostTiming(1.0, 30.0, 3)
    assert after(state, Outcome(Answer.SLOW, 9999.0), 0.0, MAX_BACKOFF).next_time == MAX_BACKOFF
    assert after(state, Outcome(Answer.SLOW, 0.0), 0.0, MAX_BACKOFF).next_time == 1.0  # delay
    assert after(state, Outcome(Answer.SLOW), 0.0, MAX_BACKOFF).next_time == 4.0  # 1 s x 2^2


def test_a_fault_of_this_machine_pauses_briefly_and_counts_no_fault() -> None:
    state = HostTiming(0.0, errors_in_row=5)
    assert after(state, Outcome(Answer.LOCAL), 0.0, MAX_BACKOFF) == HostTiming(
        0.0, LOCAL_FAULT_PAUSE, 0
    )


def test_an_unavailable_robots_txt_counts_a_fault_and_waits_for_the_next_attempt() -> None:
    state = HostTiming(1.0)
    wait = robots_retry_wait(3, 10.0)
    assert wait == 40.0
    assert after(state, Outcome(Answer.UNAVAILABLE, wait), 5.0, MAX_BACKOFF) == HostTiming(
        1.0, 45.0, 1
    )
    given_up = after(state, Outcome(Answer.UNAVAILABLE), 5.0, MAX_BACKOFF)
    assert given_up == HostTiming(1.0, 6.0, 1)  # no attempt waited for: only the delay


def test_the_next_allowed_time_never_moves_earlier() -> None:
    state = HostTiming(1.0, next_time=500.0)
    assert after(state, OK, 10.0, MAX_BACKOFF).next_time == 500.0


def test_the_delay_is_the_longer_of_the_crawls_and_the_capped_crawl_delay() -> None:
    state = HostTiming(1.0, 7.0, 2)
    assert with_crawl_delay(state, 5.0, delay=1.0, cap=30.0) == HostTiming(5.0, 7.0, 2)
    assert with_crawl_delay(state, 90.0, delay=1.0, cap=30.0).delay == 30.0
    assert with_crawl_delay(state, 0.5, delay=1.0, cap=30.0) is state
    assert with_crawl_delay(HostTiming(5.0), None, delay=1.0, cap=30.0).delay == 1.0


# -- the engines' call sequences are the rule -------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _frontier(clock: Clock, retry_delay: float = 10.0) -> Frontier:
    return Frontier(
        delay=0.5,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=retry_delay,
        robots_retries=100,
        stats=CrawlStats(),
        clock=clock,
    )


def _answer(status: int, retry_after: str | None) -> FetchResult:
    headers = () if retry_after is None else (("Retry-After", retry_after),)
    return FetchResult(url="http://a.test/", status=status, response_headers=headers)


def _politeness_outcome(status: int, retry_after: str | None) -> Outcome:
    if status == -1:
        return Outcome(Answer.LOCAL)
    if status in (429, 503):
        return Outcome(Answer.SLOW, None if retry_after is None else float(retry_after))
    return FAULT if status == 0 or status >= 500 else OK


_steps = st.lists(
    st.tuples(
        st.sampled_from([200, 404, 429, 503, 500, 0, -1]),  # -1: a fault of this machine
        st.none() | st.integers(0, 200).map(str),
        st.floats(0.0, 50.0, allow_nan=False),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(_steps)
def test_backoff_then_frontier_done_is_the_rule(steps: list[tuple[int, str | None, float]]) -> None:
    """The in-process engine's sequence (Backoff picks the wait, Frontier.done settles it)
    and the threaded engine's (the same Backoff, HostGate.release) are ``after``."""
    clock = Clock()
    frontier = _frontier(clock)
    gate = HostGate(delay=0.5, crawl_delay_cap=30.0, clock=clock)
    policy = Backoff(max_retries=3, max_backoff=MAX_BACKOFF)
    frontier.add(Job(url="http://a.test/", host="a.test"))
    expected = HostTiming(0.5)
    for status, retry_after, step in steps:
        clock.now += step
        host = frontier.host("a.test")
        if status == -1:
            told = policy.after_local_fault(0)
        else:
            told = policy.after_response(_answer(status, retry_after), host, 0, clock.now)
        host.in_flight += 1  # as pop_ready leaves it
        frontier.done(
            Job(url="http://a.test/", host="a.test"), success=told.success, backoff=told.backoff
        )
        gate.state("a.test")  # known to the gate, as after its claim
        gate.release("a.test", requested=True, success=told.success, backoff=told.backoff)
        expected = after(expected, _politeness_outcome(status, retry_after), clock.now, MAX_BACKOFF)
        assert host.timing == expected
        assert gate.state("a.test").timing == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0.0, 500.0, allow_nan=False)), max_size=8))
def test_robots_unavailable_then_done_is_the_rule(steps: list[tuple[bool, float]]) -> None:
    """The frontier's robots.txt deferral (robots_unavailable, then done) is ``after`` with
    the origin's retry wait; ``keep`` (a fault of this machine) is a LOCAL answer."""
    clock = Clock()
    frontier = _frontier(clock, retry_delay=3.0)
    frontier.add(Job(url="http://a.test/x", host="a.test"))
    expected = HostTiming(0.5)
    for failures, (local, step) in enumerate(steps, start=1):
        clock.now += step
        robots = Job(url="http://a.test/robots.txt", host="a.test", robots=True)
        frontier.host("a.test").in_flight += 1
        assert frontier.robots_unavailable("http://a.test", keep=local) is None
        frontier.done(robots, success=local)
        wait = robots_retry_wait(failures, 3.0)
        answer = Answer.LOCAL if local else Answer.UNAVAILABLE
        expected = after(expected, Outcome(answer, wait), clock.now, MAX_BACKOFF)
        assert frontier.host("a.test").timing == expected


def test_a_crawl_delay_sets_the_pace_of_frontier_and_gate_alike() -> None:
    clock = Clock()
    frontier = _frontier(clock)
    gate = HostGate(delay=0.5, crawl_delay_cap=30.0, clock=clock)
    slow = parse_robots(b"User-agent: *\nCrawl-delay: 4\n", "gossamer")
    for origin in ("http://a.test", "https://a.test"):
        frontier.set_robots(origin, RobotsRules.allow_all() if "https" in origin else slow)
        gate.set_rules(origin, "a.test", RobotsRules.allow_all() if "https" in origin else slow)
    expected = with_crawl_delay(HostTiming(0.5), 4.0, delay=0.5, cap=30.0)
    assert frontier.host("a.test").timing == expected == gate.state("a.test").timing
