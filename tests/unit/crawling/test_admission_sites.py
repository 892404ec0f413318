"""Admission's host budget per site: a ``[[site]]`` table's ``max_pages`` is the URL budget of
the hosts it names (through the frontier's ``host_budget``); the others keep the crawl's
``max_pages_per_host``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, ScopeConfig, SiteConfig
from gossamer.crawling.admission import Admitter
from gossamer.frontier import Frontier
from gossamer.sites import SiteRules
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    with MetadataDB(tmp_path / "crawl.db") as opened:
        yield opened


def test_a_sites_url_budget_is_its_own(db: MetadataDB) -> None:
    scope = ScopeConfig(max_pages_per_host=4)
    sites = (SiteConfig(match="*.small.test", max_pages=2), SiteConfig(match="big.test"))
    rules = SiteRules.of(CrawlConfig(seeds=Path("s"), out=Path("o"), scope=scope, sites=sites))
    stats = CrawlStats()
    frontier = Frontier(
        delay=0.0,
        max_per_host=1,
        crawl_delay_cap=30.0,
        robots_ttl=3600.0,
        robots_retry_delay=10.0,
        robots_retries=2,
        stats=stats,
        clock=time.monotonic,
    )
    admitter = Admitter(scope, frontier=frontier, stats=stats, db=db, sites=rules)
    queued = {
        host: sum(admitter.admit(f"http://{host}/{n}", 1, None) for n in range(6))
        for host in ("www.small.test", "big.test", "other.test")
    }
    # big.test's table sets no budget: the crawl's
    assert queued == {"www.small.test": 2, "big.test": 4, "other.test": 4}
    assert stats.errors["trap_host_budget"] == 4 + 2 + 2  # the URLs over each budget
