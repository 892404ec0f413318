"""The ``--time`` limit: a crawl stops with reason "time", and a resumed crawl's limit counts
the duration of its earlier runs, read from the statistics they saved (never from a clock)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import RESOLVE, crawl, local_config, query

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


def files_of(out: Path) -> dict[str, bytes]:
    """Every WARC and index file of the crawl, and its reports, by name."""
    paths = [*(out / "warc").iterdir(), *out.glob("index*.cdxj"), *(out / "reports").iterdir()]
    return {str(path.relative_to(out)): path.read_bytes() for path in paths}


def registry(out: Path) -> list[list[str]]:
    """The ``domains`` table of crawl.db, row by row as domains.tsv writes it."""
    rows = query(
        out / "crawl.db",
        "SELECT host, pages, bytes, printf('%.3f', time_spent), errors, robots_status, seeds,"
        " depths, in_visit FROM domains ORDER BY pages DESC, host",
    )
    return [[str(value) for value in row] for row in rows]


def test_a_resume_with_no_time_left_fetches_nothing_and_opens_no_warc_file(
    site: ThreadedTestWeb, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = crawl(site, tmp_path, max_pages=5)
    before = files_of(first.out)
    requests = len(site.audit.fetched())
    # robots.txt answers expired at once: a resume with time left would fetch them again.
    expired = replace(local_config(tmp_path, tmp_path).politeness, robots_ttl=0.0)

    spent = crawl(site, tmp_path, time_limit=saved_duration(first.out), politeness=expired)
    assert spent.outcome.reason == "time"
    assert len(site.audit.fetched()) == requests  # not even a robots.txt
    after = files_of(spent.out)
    assert sorted(after) == sorted(before)  # no new WARC file, nothing lost
    changed = {name for name in before if before[name] != after[name]}
    assert changed <= {"reports/stats.json", "reports/stats.txt", "reports/domains.tsv"}
    # Errors aside (a resume recounts them from the rows, which also hold a sitemap's 404
    # that the live count leaves out), the registry is what the first run wrote.
    assert without_errors(after["reports/domains.tsv"]) == without_errors(
        before["reports/domains.tsv"]
    )
    assert "already spent" in caplog.text
    tsv = (spent.out / "reports" / "domains.tsv").read_text().splitlines()[1:]
    assert registry(spent.out) == [line.split("\t") for line in tsv]
    assert sum(int(row[1]) for row in registry(spent.out)) == 5


def test_a_resume_with_workers_and_no_time_left_starts_no_worker(tmp_path: Path) -> None:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(running.seeds()) + "\n")
        out = tmp_path / "out"
        args = ["--resolve", RESOLVE, "--delay", "0", "--workers", "2"]
        first = cli(seeds, "--out", out, "--max-pages", "6", "--time", "1h", *args)
        assert first.returncode == 0, first.stderr
        use_up_the_hour(out)
        before = files_of(out)
        requests = len(running.audit.fetched())

        spent = cli("--resume", out, "--time", "1h", *args)
        assert spent.returncode == 0, spent.stderr
        assert "already spent" in spent.stderr
        assert len(running.audit.fetched()) == requests
    after = files_of(out)
    assert sorted(after) == sorted(before)
    tsv = (out / "reports" / "domains.tsv").read_text().splitlines()[1:]
    assert registry(out) == [line.split("\t") for line in tsv]
    assert sum(int(row[1]) for row in registry(out)) == 6


def use_up_the_hour(out: Path) -> None:
    """Make the saved duration of the crawl in ``out`` one hour, whatever the clock said."""
    conn = sqlite3.connect(out / "crawl.db")
    try:
        with conn:
            [(text,)] = conn.execute("SELECT value FROM meta WHERE key = 'stats'").fetchall()
            saved = json.loads(text) | {"duration_seconds": 3600.0}
            conn.execute("UPDATE meta SET value = ? WHERE key = 'stats'", (json.dumps(saved),))
    finally:
        conn.close()


def without_errors(tsv: bytes) -> list[list[str]]:
    return [line.split("\t")[:4] + line.split("\t")[5:] for line in tsv.decode().splitlines()]


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gossamer", "crawl", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
