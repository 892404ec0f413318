"""Issue 30, per-site rules: a ``[[site]]`` table's delay and in-flight limit hold at the
server for its site while the other sites keep the crawl's, a robots.txt Crawl-delay larger
than a site's delay still wins, and a site's own User-Agent is the one its robots.txt is read
for; in one process, with ``--workers 2`` and in a shared crawl (``modes.py``). Judged from
the test web's request log alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.audit import CLOCK_SLACK, RequestRecord
from gossamer.testweb.model import RobotsVariant, Role

from .modes import Mode, mode_fixture

# Four hosts: one with a Crawl-delay (0.1 to 0.3 s), three ordinary ones; no special hosts.
SPEC = WebSpec(seed=11, hosts=4, pages_per_host=5, special_hosts=False)
SITE_DELAY = 0.5


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _most_at_once(records: list[RequestRecord]) -> int:
    """The most requests the server had in flight at once, from its event order."""
    events = sorted([(r.start_seq, 1) for r in records] + [(r.end_seq, -1) for r in records])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def _unrested(records: list[RequestRecord], delay: float) -> list[int]:
    """For each request: how many requests to its host ended less than ``delay`` before it
    began. The crawler waits ``delay`` after each end it has seen, so those are requests it
    still had in flight (their end not yet read): with ``max_per_host`` N, at most N - 1."""
    return [
        sum(1 for r in records if r.end_seq < record.start_seq and record.started - r.ended < delay)
        for record in records
    ]


@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_a_sites_delay_limit_and_agent_hold_for_it_alone(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    normal = site.web.hosts_with(Role.NORMAL)
    (delayed,) = site.web.hosts_with(Role.CRAWL_DELAY)
    # its robots.txt shuts out "otherbot" and lets "gossamer" in
    other = site.web.host_with_robots(RobotsVariant.AGENT_GROUP)
    assert other is not None
    slow = next(host for host in normal if host != other)
    seeds, config = tmp_path / "seeds.txt", tmp_path / "c.toml"
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
    config.write_text(
        "[politeness]\ndelay = 0.0\n\n"
        f'[[site]]\nmatch = "{slow}"\ndelay = "{SITE_DELAY}s"\nmax_per_host = 2\n\n'
        # looser than its robots.txt: the Crawl-delay wins
        f'[[site]]\nmatch = "{delayed}"\ndelay = 0\n\n'
        f'[[site]]\nmatch = "{other}"\nuser_agent = "otherbot/1.0"\n',
        encoding="utf-8",
    )
    finished = mode.run(seeds, tmp_path / "out", "--config", config)
    assert set(finished.codes) == {0}, finished.stderr
    report = site.report()
    assert not report.robots_violations, report.summary()
    assert {url for url in report.missing if f"//{other}:" not in url} == set(), report.summary()
    assert report.crawl_delay_violations == 0, report.summary()

    records = site.audit.records()
    by_host = {host: [r for r in records if r.host == host] for host in {r.host for r in records}}
    # a shared crawl leases a host to one worker at a time: one request at once, whatever
    # max_per_host says (docs/CONFIG.md)
    limit = 1 if mode.name == "shared" else 2
    assert _most_at_once(by_host[slow]) <= limit
    for host in set(by_host) - {slow}:
        assert _most_at_once(by_host[host]) == 1, host  # the crawl's max_per_host
    assert len(by_host[slow]) >= 6
    unrested = _unrested(by_host[slow], SITE_DELAY - CLOCK_SLACK)
    assert max(unrested) <= limit - 1, unrested  # each after the delay, up to limit at once
    # the Crawl-delay host's starts are its robots.txt's Crawl-delay apart, not 0 s
    starts = [r.started for r in by_host[delayed] if r.target != "/robots.txt"]
    gap = site.web.crawl_delay(delayed) - CLOCK_SLACK
    assert all(b - a >= gap for a, b in pairwise(starts)), starts

    # the site's agent asked its robots.txt, and was refused the rest
    assert {(r.target, r.user_agent) for r in by_host[other]} == {("/robots.txt", "otherbot/1.0")}
    assert all(r.user_agent.startswith("Gossamer/") for r in by_host[slow])

    stored = _stored_sites(mode, finished.out)
    assert [table["match"] for table in stored] == [slow, delayed, other]


def _stored_sites(mode: Mode, out: Path) -> list[dict[str, object]]:
    """The tables the crawl keeps: in crawl.json, or a shared crawl's settings in Redis."""
    if mode.redis is None:
        saved = json.loads((out / "crawl.json").read_text(encoding="utf-8"))
        tables: list[dict[str, object]] = saved["config"]["sites"]
        return tables
    from redis import Redis  # noqa: PLC0415 (a shared crawl's client, installed with it)

    client = Redis.from_url(mode.redis.url)
    try:
        (key,) = client.keys("gossamer:*:settings")
        stored = json.loads(client.get(key))  # type: ignore[arg-type]
    finally:
        client.close()
    tables = stored["settings"]["sites"]
    return tables
