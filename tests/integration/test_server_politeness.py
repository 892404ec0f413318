"""Issue 9, end to end: one server answering on two http ports and on https is one host.

The test web serves an alias host on three origins whose pages link to each other in mixed
forms, with a robots.txt Crawl-delay, beside a host whose robots.txt answers 500. The
server-side audit judges per host NAME: never two requests in flight to one name, Crawl-delay
kept across origins, no URL fetched twice (robots.txt included), and the 5xx host costs the
crawl one request, not minutes of retries.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import FetchConfig, PolitenessConfig
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web, make_certificates
from gossamer.testweb.model import Role
from gossamer.urls import host_of

from .conftest import CrawlRun, crawl


@contextlib.contextmanager
def aliased_site(certs_dir: Path) -> Iterator[tuple[ThreadedTestWeb, Path]]:
    """The test web with its alias host, on two http ports and https; and the CA file."""
    certs = make_certificates(certs_dir)
    # A little server latency widens the window in which a second request would overlap.
    web = build_web(WebSpec(seed=11, hosts=10, pages_per_host=8, aliases=True, latency=0.002))
    with ThreadedTestWeb(web, extra_ports=[0], ssl_context=certs.server_context) as site:
        yield site, certs.ca_file


@pytest.fixture(scope="module")
def aliased(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ThreadedTestWeb, Path]]:
    """The server of the module's one crawl (``run``): tests read its audit, none crawls it."""
    with aliased_site(tmp_path_factory.mktemp("certs")) as served:
        yield served


@pytest.fixture(scope="module")
def run(
    aliased: tuple[ThreadedTestWeb, Path], tmp_path_factory: pytest.TempPathFactory
) -> CrawlRun:
    site, ca_file = aliased
    # Several requests per host allowed, so only the per-name slot can keep them apart.
    politeness = PolitenessConfig(delay=0.0, robots_retry_delay=60.0, robots_wait=0.5)
    return crawl(
        site,
        tmp_path_factory.mktemp("crawl"),
        politeness=politeness,
        fetch=FetchConfig(ca_file=str(ca_file)),
    )


def test_the_alias_host_is_reached_over_every_origin(
    aliased: tuple[ThreadedTestWeb, Path], run: CrawlRun
) -> None:
    site, _ = aliased
    alias = site.web.aliased_hosts()[0]
    origins = {(r.scheme, r.port) for r in site.audit.records() if r.host == alias}
    assert len(origins) == 3  # main http port, second http port, https


def test_one_server_is_one_politeness_slot(
    aliased: tuple[ThreadedTestWeb, Path], run: CrawlRun
) -> None:
    site, _ = aliased
    report = site.report()
    assert report.concurrent_violations == 0
    assert report.crawl_delay_violations == 0
    assert report.repeated_fetches == 0
    assert report.robots_violations == 0
    assert report.missing == ()


def test_no_robots_txt_is_fetched_twice(
    aliased: tuple[ThreadedTestWeb, Path], run: CrawlRun
) -> None:
    site, _ = aliased
    robots = Counter(
        (r.scheme, r.host, r.port) for r in site.audit.records() if r.target == "/robots.txt"
    )
    assert robots and max(robots.values()) == 1


def test_the_5xx_robots_host_does_not_hold_the_crawl(
    aliased: tuple[ThreadedTestWeb, Path], run: CrawlRun
) -> None:
    site, _ = aliased
    broken = site.web.hosts_with(Role.ROBOTS_ERROR)[0]
    asked = [r for r in site.audit.records() if r.host == broken]
    assert [r.target for r in asked] == ["/robots.txt"]  # once: its retry is a minute away
    assert run.outcome.reason == "exhausted"
    assert [host_of(origin) for origin in run.outcome.stats.deferred] == [broken]


def test_the_registry_counts_per_host_name(run: CrawlRun) -> None:
    hosts = run.outcome.stats.hosts
    assert all(":" not in name and "/" not in name for name in hosts)


def test_several_requests_per_host_still_share_one_slot_per_name(tmp_path: Path) -> None:
    # A server of its own: the module's server keeps the audit of its one crawl.
    (tmp_path / "certs").mkdir()
    with aliased_site(tmp_path / "certs") as (site, ca_file):
        politeness = PolitenessConfig(
            delay=0.0, max_per_host=2, robots_retry_delay=60.0, robots_wait=0.5
        )
        crawl(site, tmp_path, politeness=politeness, fetch=FetchConfig(ca_file=str(ca_file)))
        records = site.audit.records()
    open_now: Counter[str] = Counter()
    most: Counter[str] = Counter()
    events = sorted(
        [(r.start_seq, 1, r.host) for r in records] + [(r.end_seq, -1, r.host) for r in records]
    )
    for _, step, host in events:
        open_now[host] += step
        most[host] = max(most[host], open_now[host])
    assert max(most.values()) <= 2  # two per host NAME, whatever the origins
