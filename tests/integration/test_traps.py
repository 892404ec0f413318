"""The calendar trap of the bundled test web, stopped by its URL family (issue 15).

The trap host's calendar links each month to the next one only, without end. With no depth
limit, the per-host budget (10,000 URLs) used to be all that stopped it: 9,995 calendar pages on
this web. The family rule (``ScopeConfig.max_family``) cuts the chain after that many months,
counts the refusal as ``trap_family``, and leaves every expected page of the web crawled.

Issue 27: the families are kept in ``crawl.db``, so a crawl stopped half-way along the calendar
and resumed gives it the same pages as one run, in one process and with ``--workers 2``
(the real command line, ``modes.py``); before, each resume gave it ``max_family`` more, and
with ``--workers`` so did running a finished crawl again.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import ScopeConfig
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import Role

from .conftest import crawl
from .modes import DEADLINE, Mode, mode_fixture

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


# -- across a stop and a resume (issue 27) ---------------------------------------------------
LIMIT = 30  # max_family here: a calendar of 30 pages, stopped half-way
RESUMED_SPEC = WebSpec(seed=3, hosts=10, pages_per_host=8)
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.2\nrobots_retries = 1\n"
    f"[scope]\nmax_family = {LIMIT}\n"
)
# The calendar's host alone is paced, so that the test's signal, sent when it has read of
# half the calendar in the crawl's log, lands while that half is still the crawl's present:
# unpaced, a loaded machine had fetched the whole calendar by the time the test had read of
# half of it. The rest of the web is crawled at full speed.
CALENDAR_DELAY = 0.05


def _config(site: ThreadedTestWeb) -> str:
    (trap,) = site.web.hosts_with(Role.TRAP)
    return f'{CONFIG}[[site]]\nmatch = "{trap}"\ndelay = {CALENDAR_DELAY}\n'


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


def _signal_after_calendar(proc: subprocess.Popen[str], count: int, sig: int) -> None:
    """Send ``sig`` once the crawl's log has told of ``count`` calendar fetches (the event
    waited on: the crawler's own log lines)."""
    assert proc.stderr is not None
    fetched = 0
    for line in proc.stderr:
        if "fetched url=" in line and "/cal/" in line:
            fetched += 1
            if fetched == count:
                proc.send_signal(sig)
                return


def _calendar_rows(out: Path) -> int:
    conn = sqlite3.connect(out / "crawl.db")
    try:
        (count,) = conn.execute(
            "SELECT count(*) FROM pages WHERE url LIKE '%/cal/%' AND purpose = 'page'"
        ).fetchone()
    finally:
        conn.close()
    return int(count)


@pytest.mark.parametrize(
    ("mode", "sig"),
    [("one", signal.SIGTERM), ("workers", signal.SIGTERM), ("workers", signal.SIGKILL)],
    indirect=["mode"],
)
def test_a_resumed_crawl_gives_the_calendar_what_one_run_gives(
    mode: Mode, tmp_path: Path, sig: int
) -> None:
    with ThreadedTestWeb(build_web(RESUMED_SPEC)) as site:
        seeds, config = tmp_path / "seeds.txt", tmp_path / "c.toml"
        seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
        config.write_text(_config(site), encoding="utf-8")
        out = tmp_path / "out"
        command = mode.command(seeds, out, "--config", config)
        proc = subprocess.Popen(
            [*command[:3], "-vv", *command[3:]],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _signal_after_calendar(proc, LIMIT // 2, sig)
        proc.communicate(timeout=DEADLINE)
        assert proc.returncode == (3 if sig == signal.SIGTERM else -sig)  # 3: stopped
        stopped = len(set(_calendar_pages(site)))
        assert LIMIT // 2 <= stopped < LIMIT  # stopped half-way along the chain
        # A kill may lose the last batch of rows: the resume replays it from the WARC files.
        resumed = mode.run(seeds, out, "--config", config)
        assert resumed.codes == (0,), resumed.stderr[-2000:]
        calendar = _calendar_pages(site)
        report = site.report()
        # The finished crawl run again: --workers offers its never-queued links (the refused
        # month among them) to admission again, which gave the calendar LIMIT more each time.
        again = mode.run(seeds, out, "--config", config)
        assert again.codes == (0,), again.stderr[-2000:]
        assert _calendar_pages(site) == calendar
    assert len(set(calendar)) == LIMIT  # as one run: test_the_calendar_stops_at_the_family_limit
    assert _calendar_rows(out) == LIMIT
    # Only a request in flight when the crawl was killed is asked again.
    assert len(calendar) - len(set(calendar)) <= (0 if sig == signal.SIGTERM else 1)
    assert report.missing == ()
