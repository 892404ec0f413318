"""The calendar trap of the bundled test web, stopped by its URL family (issue 15).

The trap host's calendar links each month to the next one only, without end. With no depth
limit, the per-host budget (10,000 URLs) used to be all that stopped it: 9,995 calendar pages on
this web. The family rule (``ScopeConfig.max_family``) cuts the chain after that many months,
counts the refusal as ``trap_family``, and leaves every expected page of the web crawled.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import ScopeConfig
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import Role

from .conftest import crawl

SPEC = WebSpec(seed=3, hosts=24, pages_per_host=25)
SLACK = 2  # pages past the limit a correct crawl may fetch (none, as the rule is written)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _calendar_pages(site: ThreadedTestWeb) -> list[str]:
    trap_hosts = set(site.web.hosts_with(Role.TRAP))
    assert trap_hosts, "the test web has a trap host"
    return [
        record.target
        for record in site.audit.records()
        if record.host in trap_hosts and record.target.startswith("/cal/")
    ]


@pytest.mark.parametrize("max_family", [ScopeConfig().max_family, 10])
def test_the_calendar_stops_at_the_family_limit(
    site: ThreadedTestWeb, tmp_path: Path, max_family: int | None
) -> None:
    assert max_family is not None
    # No depth limit: only the trap rules and the per-host budget can stop the calendar.
    run = crawl(site, tmp_path, scope=ScopeConfig(max_depth=None, max_family=max_family))
    calendar = _calendar_pages(site)
    assert max_family <= len(calendar) <= max_family + SLACK
    assert len(set(calendar)) == len(calendar)
    errors = run.outcome.stats.errors
    assert errors["trap_family"] >= 1
    assert errors["trap_host_budget"] == 0  # the family rule got there first
    report = site.report()
    assert run.outcome.reason == "exhausted"
    assert report.missing == ()
    assert report.repeated_fetches == 0


def test_without_the_rule_the_budget_is_the_last_stop(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    scope = ScopeConfig(max_depth=None, max_family=None, max_pages_per_host=150)
    run = crawl(site, tmp_path, scope=scope)
    assert len(_calendar_pages(site)) > 100  # the whole budget, less the trap's other pages
    assert run.outcome.stats.errors["trap_family"] == 0
    assert run.outcome.stats.errors["trap_host_budget"] >= 1
    assert site.report().missing == ()
