"""The ``--time`` limit: a crawl stops with reason "time", and a resumed crawl's limit counts
the duration of its earlier runs, read from the statistics they saved (never from a clock)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import crawl, query

SPEC = WebSpec(seed=7, hosts=6, pages_per_host=10, latency=0.0)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def saved_duration(out: Path) -> float:
    """The crawl's duration as its last run saved it in ``crawl.db``."""
    [(text,)] = query(out / "crawl.db", "SELECT value FROM meta WHERE key = 'stats'")
    return float(json.loads(str(text))["duration_seconds"])


def test_a_crawl_stops_at_its_time_limit(site: ThreadedTestWeb, tmp_path: Path) -> None:
    # A limit of 0 s has run out before the first request can be sent: nothing is fetched,
    # and every seed is left for a resume.
    run = crawl(site, tmp_path, time_limit=0.0)
    assert run.outcome.reason == "time"
    assert run.outcome.stats.requests == 0
    assert site.audit.fetched() == []
    left = (run.out / "reports" / "discovered-not-crawled.txt").read_text().splitlines()
    assert sorted(left) == sorted(site.seeds())


def test_a_resumed_crawl_counts_the_time_of_its_earlier_runs(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    first = crawl(site, tmp_path, max_pages=5)
    assert first.outcome.reason == "target"
    earlier = saved_duration(first.out)
    requests = len(site.audit.fetched())

    # A limit the earlier run has used up: the resumed run stops before any request.
    spent = crawl(site, tmp_path, time_limit=earlier)
    assert spent.outcome.reason == "time"
    assert spent.outcome.stats.elapsed_before == earlier
    assert spent.outcome.stats.pages == 5
    assert len(site.audit.fetched()) == requests
    assert saved_duration(spent.out) >= earlier  # carried on again

    # A limit with room left: the crawl goes on to the end.
    again = saved_duration(spent.out)
    rest = crawl(site, tmp_path, time_limit=again + 3600.0)
    assert rest.outcome.reason == "exhausted"
    assert rest.outcome.stats.elapsed_before == again
    report = site.report()
    assert report.missing == () and report.repeated_fetches == 0
