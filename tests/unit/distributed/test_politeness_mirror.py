"""The Lua mirror of the politeness rule: random outcome sequences through
``frontier.politeness.after`` and through a real redis-server's STEP and CRAWL_DELAY
scripts end in identical host states (delay, next allowed time to the bit, faults in a row),
with the crawl's delay or a ``[[site]]`` table's for the host (``gossamer.sites``), which
stands for the crawl's in every rule.

Each example is a fresh crawl on the module's server, its clock injected and moved by the
example (forwards and a little backwards), so no test waits.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

from gossamer.config import CrawlConfig, PolitenessConfig, SiteConfig
from gossamer.distributed import Done, Leased, RedisFrontier
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import (
    Answer,
    HostTiming,
    Outcome,
    after,
    robots_retry_wait,
    with_crawl_delay,
)
from tests.unit.distributed.redis_rig import FakeClock, RedisServer

HOST = "a.test"
_names = itertools.count()


@dataclass(frozen=True, slots=True)
class Step:
    """One completion (``outcome``), or a robots.txt read giving the host ``crawl_delay``."""

    dt: float  # clock step before it
    outcome: Outcome | None = None
    crawl_delay: float | None = None


_seconds = st.floats(0.0, 5_000.0, allow_nan=False, allow_infinity=False)
_outcomes = st.one_of(
    st.sampled_from([Answer.OK, Answer.FAULT, Answer.LOCAL, Answer.UNAVAILABLE]).map(Outcome),
    st.builds(Outcome, st.just(Answer.SLOW), st.none() | _seconds),  # 429/503, Retry-After
    st.builds(  # a robots.txt deferred: the origin's next attempt, after n failures
        Outcome,
        st.sampled_from([Answer.UNAVAILABLE, Answer.LOCAL]),
        st.builds(robots_retry_wait, st.integers(1, 6), st.floats(0.0, 120.0)),
    ),
)
_steps = st.lists(
    st.one_of(
        st.builds(Step, st.floats(-5.0, 200.0), _outcomes),
        st.builds(Step, st.floats(0.0, 5.0), st.none(), st.none() | st.floats(0.0, 90.0)),
    ),
    min_size=1,
    max_size=30,
)
_pacing = st.tuples(
    st.floats(0.0, 3.0),  # delay
    st.floats(0.0, 40.0),  # crawl_delay_cap
    st.floats(1.0, 400.0),  # max_backoff
    st.none() | st.floats(0.0, 60.0),  # the host's [[site]] delay (None: no table)
)


async def _mirror(
    server: RedisServer, pacing: tuple[float, float, float, float | None], steps: list[Step]
) -> None:
    crawl_delay, cap, max_backoff, own = pacing
    polite = PolitenessConfig(delay=crawl_delay, crawl_delay_cap=cap, max_backoff=max_backoff)
    sites = () if own is None else (SiteConfig(match="*.test", delay=own),)
    config = CrawlConfig(seeds=Path("seeds.txt"), out=Path("out"), politeness=polite, sites=sites)
    delay = crawl_delay if own is None else own  # what politeness.py is given for the host
    clock = FakeClock()
    front = RedisFrontier(Redis.from_url(server.url), f"m{next(_names)}", "w", clock=clock)
    try:
        assert await front.create(config)
        job = Job(url=f"http://{HOST}/", host=HOST)
        assert await front.add([job]) == 1
        state = HostTiming(delay)
        assert await front.timing(HOST) == state
        now = clock.now
        for step in steps:
            now += step.dt
            if step.outcome is None:
                state = with_crawl_delay(state, step.crawl_delay, delay=delay, cap=cap)
                clock.now = now
                assert await front.set_crawl_delay(HOST, step.crawl_delay) == state.delay
            else:
                clock.now = max(now, state.next_time)  # a lease is granted once the host is due
                leased = await front.lease()
                assert isinstance(leased, Leased), leased
                clock.now = now  # and completed at the step's time
                done = await front.complete(leased.lease, outcome=step.outcome, retry=job)
                assert isinstance(done, Done)
                state = after(state, step.outcome, now, max_backoff)
            assert await front.timing(HOST) == state, step
    finally:
        await front.redis.aclose()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(pacing=_pacing, steps=_steps)
def test_the_lua_scripts_move_a_host_as_the_python_rule_does(
    redis_server: RedisServer, pacing: tuple[float, float, float, float | None], steps: list[Step]
) -> None:
    asyncio.run(_mirror(redis_server, pacing, steps))
