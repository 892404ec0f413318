"""Issue 27: every way of running a crawl keeps the promises one process keeps.

Each test runs the real command line in each mode (``modes.py``: ``--workers 1``,
``--workers 2``, and, where the shared crawl offers the promise, ``--frontier redis://`` with
two processes) and judges what a user sees: exit status and its one error line, the progress
line, ``stats.json`` and the other reports, the stop reason, and the server's audit.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import Role
from tests.unit.distributed.cluster_rig import redis_cluster

from .conftest import signal_after_fetches
from .modes import DEADLINE, Finished, Mode, gossamer, mode_fixture

# Loopback politeness; the RFC's minute before asking an unavailable robots.txt again is
# kept, so only --robots-wait can end the wait for it.
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 60.0\nrobots_retries = 1\n"
    "robots_wait = 0.3\n[scope]\nmax_depth = 25\n"
)
SPEC = WebSpec(seed=5, hosts=6, pages_per_host=12)

LOCAL = ["one", "workers"]
ALL = [*LOCAL, "shared"]
WITH_CLUSTER = [*ALL, "cluster"]  # the promises held on a Redis Cluster too


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def _seeds(tmp: Path, urls: list[str]) -> tuple[Path, Path]:
    seeds, config = tmp / "seeds.txt", tmp / "c.toml"
    seeds.write_text("".join(f"{url}\n" for url in urls), encoding="utf-8")
    config.write_text(CONFIG, encoding="utf-8")
    return seeds, config


def _stats(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "reports" / "stats.json").read_text())
    return data


def _errors(finished: Finished) -> list[str]:
    return [line for line in finished.stderr.splitlines() if line.startswith("gossamer: error:")]


@pytest.mark.parametrize("mode", ALL, indirect=True)
def test_a_lone_unavailable_robots_seed_is_a_bad_seed(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    host = site.web.hosts_with(Role.ROBOTS_ERROR)[0]
    seed = site.web.url(host, "/", site.port)
    origin = seed.rstrip("/")
    seeds, config = _seeds(tmp_path, [seed])
    finished = mode.run(seeds, tmp_path / "out", "--config", config)
    # A shared crawl is judged by the process that brought the seeds; one that joined ends 0.
    assert finished.codes[0] == 2 and set(finished.codes[1:]) <= {0}, finished.stderr
    (line,) = _errors(finished)
    assert line.startswith(
        f"gossamer: error: bad seed: nothing was crawled: robots.txt of {origin}"
    )
    assert "stayed unavailable" in line
    stats = _stats(finished.out)
    assert stats["deferred"] == [origin]
    uncrawled = (finished.out / "reports" / "discovered-not-crawled.txt").read_text()
    assert uncrawled.splitlines() == [
        f"{seed}\tdeferred: robots.txt unavailable, retried on resume"
    ]
    assert "deferred (robots.txt 500)" in (finished.out / "reports" / "domains.tsv").read_text()


def test_the_study_threads_give_the_same_verdict(site: ThreadedTestWeb, tmp_path: Path) -> None:
    """The study's threaded engine ends a crawl by the same rule (``crawling/verdict.py``)."""
    host = site.web.hosts_with(Role.ROBOTS_ERROR)[0]
    seed = site.web.url(host, "/", site.port)
    seeds, config = _seeds(tmp_path, [seed])
    command = Mode("one").command(seeds, tmp_path / "out", "--config", config)
    command = [*command[: command.index("--workers")], "--engine", "threads", "--threads", "2"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=DEADLINE)
    assert done.returncode == 2, done.stderr
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("gossamer: error:")]
    origin = seed.rstrip("/")
    assert line.startswith(
        f"gossamer: error: bad seed: nothing was crawled: robots.txt of {origin}"
    )
    assert _stats(tmp_path / "out")["deferred"] == [origin]


@pytest.mark.parametrize("mode", WITH_CLUSTER, indirect=True)
def test_a_whole_web_gives_the_same_reports(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    """Full coverage with a clean audit; the 5xx-robots host deferred, and asked again by the
    next run; trap counters kept, whichever process met the traps."""
    seeds, config = _seeds(tmp_path, site.seeds())
    finished = mode.run(seeds, tmp_path / "out", "--config", config)
    assert set(finished.codes) == {0}, finished.stderr
    report = site.report()
    assert report.ok(), report.summary()
    broken = site.web.hosts_with(Role.ROBOTS_ERROR)
    origins = {site.web.url(h, "/", site.port).rstrip("/") for h in broken}
    every = [_stats(folder) for folder in finished.folders]
    for stats in every:  # each process says what it left to the next run
        assert set(stats["deferred"]) == origins
    errors: dict[str, int] = {}
    for stats in every:
        for kind, count in stats["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    # The trap host's ever-deeper paths are refused and counted, whichever process saw them.
    assert errors.get("trap_repeated_segment", 0) > 0, errors
    asked = _robots_asked(site, broken)
    again = mode.run(seeds, tmp_path / "out", "--config", config)
    assert set(again.codes) == {0}, again.stderr
    assert _robots_asked(site, broken) > asked  # the next run asks the deferred host again


def _robots_asked(site: ThreadedTestWeb, hosts: list[str]) -> int:
    return sum(1 for r in site.audit.records() if r.host in hosts and r.target == "/robots.txt")


@pytest.mark.parametrize("mode", WITH_CLUSTER, indirect=True)
def test_the_page_target_is_exact(mode: Mode, site: ThreadedTestWeb, tmp_path: Path) -> None:
    seeds, config = _seeds(tmp_path, site.seeds())
    finished = mode.run(seeds, tmp_path / "out", "--config", config, "--max-pages", "23")
    assert set(finished.codes) == {0}, finished.stderr
    assert "stopped: target" in finished.stdout
    # Every process's stored pages together (a shared crawl's are in two folders).
    assert sum(_stats(folder)["pages"] for folder in finished.folders) == 23


@pytest.mark.parametrize("mode", WITH_CLUSTER, indirect=True)
def test_the_time_limit_stops_the_crawl_for_time(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds, config = _seeds(tmp_path, site.seeds())
    # One request per host every 0.4 s: the web takes far longer than the limit.
    finished = mode.run(
        seeds, tmp_path / "out", "--config", config, "--delay", "0.4", "--time", "2s"
    )
    assert set(finished.codes) == {0}, finished.stderr
    assert "stopped: time" in finished.stdout
    left = (finished.out / "reports" / "discovered-not-crawled.txt").read_text().splitlines()
    assert left  # the crawl did not run dry: the limit ended it


@pytest.mark.parametrize("mode", ALL, indirect=True)
def test_a_terminal_shows_the_progress_line(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds, config = _seeds(tmp_path, site.seeds())
    command = mode.command(seeds, tmp_path / "out", "--config", config, "--delay", "0.1")
    command.remove("--no-progress")
    main, child = pty.openpty()
    proc = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=child, stdin=subprocess.DEVNULL
    )
    os.close(child)
    seen = b""
    try:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal closes when the crawl's last process ends
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(main)
        proc.wait(timeout=DEADLINE)
    assert proc.returncode == 0, seen.decode(errors="replace")[-2000:]
    lines = [part for part in seen.decode(errors="replace").split("\r") if " p/s  queue " in part]
    assert len(lines) >= 2  # painted over itself as the crawl went
    final = lines[-1].split("\n")[0].split()
    assert int(final[0]) == _stats(tmp_path / "out")["pages"]


@pytest.mark.parametrize("mode", ALL, indirect=True)
def test_recover_keeps_the_duration_a_stopped_crawl_wrote(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds, config = _seeds(tmp_path, site.seeds())
    out = tmp_path / "out"
    command = mode.command(seeds, out, "--config", config, "--delay", "0.2")
    proc = subprocess.Popen(
        [*command[:3], "-vv", *command[3:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    signal_after_fetches(proc, 20, signal.SIGTERM)
    proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 3  # stopped before its end
    written = float(_stats(out)["duration_seconds"])
    recovered = subprocess.run(
        gossamer("recover", out), capture_output=True, text=True, check=False, timeout=DEADLINE
    )
    assert recovered.returncode == 0, recovered.stderr
    assert float(_stats(out)["duration_seconds"]) == pytest.approx(written, abs=0.05)


@pytest.mark.parametrize("mode", LOCAL, indirect=True)
def test_interim_reports_mark_the_hosts_in_visit(mode: Mode, tmp_path: Path) -> None:
    """domains.tsv's in_visit, rewritten while the crawl runs (the --workers coordinator
    learns which hosts its workers visit from their statuses)."""
    slow = WebSpec(seed=5, hosts=4, pages_per_host=8, latency=0.3)  # always a request out
    with ThreadedTestWeb(build_web(slow)) as site:
        _interim_reports(mode, site, tmp_path)


def _interim_reports(mode: Mode, site: ThreadedTestWeb, tmp_path: Path) -> None:
    seeds, config = _seeds(tmp_path, site.seeds())
    with config.open("a") as extra:
        extra.write("\n[crawl]\nreport_interval = 0.2\n")
    procs = mode.start(seeds, tmp_path / "out", "--config", config)
    domains = tmp_path / "out" / "reports" / "domains.tsv"
    seen_in_visit = False
    # Read the report another process rewrites, until a row says in visit or the crawl ends.
    while procs[0].poll() is None and not seen_in_visit:
        try:
            rows = [line.split("\t") for line in domains.read_text().splitlines()[1:]]
        except FileNotFoundError:
            rows = []
        seen_in_visit = any(row[-1] == "1" for row in rows)
        time.sleep(0.05)  # a short poll of a file another process rewrites, bounded by its end
    procs[0].send_signal(signal.SIGTERM)  # seen (or ended): the rest of the crawl adds nothing
    finished = mode.wait(procs, tmp_path / "out")
    assert set(finished.codes) <= {0, 3}, finished.stderr  # 3: stopped before its end
    assert seen_in_visit
    final = [line.split("\t") for line in domains.read_text().splitlines()[1:]]
    assert final and all(row[-1] == "0" for row in final)  # nothing in visit once ended


__all__ = ["redis_cluster"]  # the cluster mode's fixture, one cluster for the module
