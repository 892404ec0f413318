"""Issue 9: a host whose robots.txt answers 5xx never keeps the crawl alive, and rules that are
still valid are not fetched again on resume (they are kept in crawl.db)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.engine import Crawler, CrawlOutcome
from gossamer.errors import SeedError
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import Role

from .conftest import local_config


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(WebSpec(seed=5, hosts=6, pages_per_host=8))) as running:
        yield running


def config(site: ThreadedTestWeb, tmp: Path, seeds: list[str]) -> CrawlConfig:
    path = tmp / "seeds.txt"
    path.write_text("".join(f"{url}\n" for url in seeds), encoding="utf-8")
    # The RFC's retry after a 5xx is a minute away; the crawl must not wait for it.
    politeness = PolitenessConfig(delay=0.0, robots_retry_delay=60.0, robots_wait=0.2)
    return local_config(path, tmp / "out", politeness=politeness)


def run(config: CrawlConfig) -> CrawlOutcome:
    seeds = parse_seeds(config.seeds.read_text(encoding="utf-8"))
    return asyncio.run(Crawler(config, seeds).run())


def robots_requests(site: ThreadedTestWeb) -> Counter[str]:
    return Counter(r.host for r in site.audit.records() if r.target == "/robots.txt")


def broken_host(site: ThreadedTestWeb) -> str:
    return site.web.hosts_with(Role.ROBOTS_ERROR)[0]


def test_only_a_5xx_robots_host_ends_at_once_and_says_why(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    host = broken_host(site)
    seed = site.web.url(host, "/", site.port)
    cfg = config(site, tmp_path, [seed])
    with pytest.raises(SeedError) as failure:
        run(cfg)
    message = str(failure.value)
    assert "nothing was crawled" in message and "robots.txt" in message
    assert "--resume" in message
    assert robots_requests(site) == Counter({host: 1})  # no idle retries
    uncrawled = (cfg.out / "reports" / "discovered-not-crawled.txt").read_text().splitlines()
    assert uncrawled == [f"{seed}\tdeferred: robots.txt unavailable, retried on resume"]
    domains = (cfg.out / "reports" / "domains.tsv").read_text()
    assert f"{host}\t" in domains and "deferred (robots.txt 500)" in domains
    # A resume asks that robots.txt again (and, still 500, stops again the same way).
    with pytest.raises(SeedError):
        run(cfg)
    assert robots_requests(site) == Counter({host: 2})


def test_valid_rules_are_not_fetched_again_on_resume(site: ThreadedTestWeb, tmp_path: Path) -> None:
    broken = broken_host(site)
    seeds = [*site.seeds(), site.web.url(broken, "/", site.port)]
    cfg = config(site, tmp_path, seeds)
    first = run(cfg)
    assert first.reason == "exhausted" and first.stats.pages > 0
    assert first.stats.deferred == [f"http://{broken}:{site.port}"]
    before = robots_requests(site)
    assert before[broken] == 1 and all(count == 1 for count in before.values())
    # Same folder again: every rule is still valid except the deferred host's.
    second = run(cfg)
    assert second.reason == "exhausted"
    after = robots_requests(site)
    assert after - before == Counter({broken: 1})
