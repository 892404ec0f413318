"""The retry and backoff policy: Retry-After, doubling waits, faults of this machine."""

from __future__ import annotations

import email.utils

import pytest

from gossamer.fetch import FetchResult
from gossamer.frontier import Backoff, HostState, HostTiming, Job
from gossamer.frontier.backoff import LOCAL_FAULT_PAUSE

POLICY = Backoff(max_retries=2, max_backoff=100.0)
NOW = 1_700_000_000.0


def answer(status: int, **headers: str) -> FetchResult:
    return FetchResult(url="http://a.test/", status=status, response_headers=tuple(headers.items()))


def test_a_429_waits_what_retry_after_asks_capped_and_is_retried_a_few_times() -> None:
    host = HostState(key="a.test", timing=HostTiming(1.0))
    outcome = POLICY.after_response(answer(429, **{"Retry-After": "30"}), host, 0, NOW)
    assert (outcome.success, outcome.backoff, outcome.retry) == (False, 30.0, True)
    capped = POLICY.after_response(answer(503, **{"Retry-After": "9999"}), host, 1, NOW)
    assert capped.backoff == 100.0 and capped.retry
    assert not POLICY.after_response(answer(429), host, 2, NOW).retry  # max_retries reached


def test_retry_after_as_an_http_date() -> None:
    date = email.utils.formatdate(NOW + 20, usegmt=True)
    outcome = POLICY.after_response(answer(429, **{"Retry-After": date}), HostState("a"), 0, NOW)
    assert outcome.backoff == pytest.approx(20.0, abs=1.0)


def test_without_retry_after_faults_in_a_row_double_the_wait() -> None:
    host = HostState(key="a.test")
    waits = []
    for errors in range(4):
        host.timing = HostTiming(0.5, errors_in_row=errors)
        waits.append(POLICY.after_response(answer(500), host, 0, NOW).backoff)
    assert waits == [1.0, 2.0, 4.0, 8.0]  # from at least 1 s
    host.timing = HostTiming(0.5, errors_in_row=40)
    assert POLICY.after_response(answer(0), host, 0, NOW).backoff == 100.0
    assert POLICY.after_response(answer(429), host, 0, NOW).backoff == 100.0


def test_a_success_or_a_plain_4xx_ends_the_run_of_faults() -> None:
    host = HostState(key="a.test", timing=HostTiming(0.0, errors_in_row=3))
    for status in (200, 301, 404):
        outcome = POLICY.after_response(answer(status), host, 0, NOW)
        assert (outcome.success, outcome.backoff, outcome.retry) == (True, 0.0, False)


def test_a_fault_of_this_machine_is_not_held_against_the_host() -> None:
    outcome = POLICY.after_local_fault(0)
    assert (outcome.success, outcome.backoff, outcome.retry) == (True, LOCAL_FAULT_PAUSE, True)
    assert not POLICY.after_local_fault(2).retry


def test_a_job_queued_again_keeps_everything_but_counts_the_retry() -> None:
    job = Job(url="http://a.test/", host="a.test", depth=2, referrer="r", hops=1, fallbacks=("x",))
    again = job.again()
    assert again.retries == 1 and again.again().retries == 2
    assert (again.url, again.depth, again.referrer, again.hops, again.fallbacks) == (
        job.url,
        2,
        "r",
        1,
        ("x",),
    )
