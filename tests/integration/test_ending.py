"""How a crawl command ends, in every mode, with real signals: a stopped crawl exits 3 (and
``--resume`` continues it), an ended one 0, and a signal in the crawl's last moment still
leaves the summary on stdout."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.cli.ending import EXIT_STOPPED
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import signal_after_fetches
from .modes import DEADLINE, Mode, mode_fixture

CONFIG = "[politeness]\ndelay = 0.05\n[scope]\nmax_depth = 25\n"
SPEC = WebSpec(seed=5, hosts=6, pages_per_host=30)


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


def _start(
    mode: Mode, site: ThreadedTestWeb, tmp: Path, *flags: str
) -> list[subprocess.Popen[str]]:
    seeds, config = tmp / "seeds.txt", tmp / "c.toml"
    seeds.write_text("".join(f"{url}\n" for url in site.seeds()), encoding="utf-8")
    config.write_text(CONFIG, encoding="utf-8")
    procs = []
    for command in _commands(mode, seeds, tmp / "out", "--config", str(config), *flags):
        procs.append(
            subprocess.Popen(
                [*command[:3], "-vv", *command[3:]],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    mode.started.extend(procs)
    return procs


def _commands(mode: Mode, seeds: Path, out: Path, *flags: str) -> list[list[str]]:
    """The crawl's command lines (a shared crawl's second is its joining worker)."""
    first = mode.command(seeds, out, *flags)
    if mode.name != "shared":
        return [first]
    assert mode.redis is not None
    joiner = [
        *first[:3], "worker", "--out", str(out.with_name("out-2")), "--frontier",
        mode.redis.url, "--resolve", first[first.index("--resolve") + 1], "--no-progress",
        "--worker-name", "second",
    ]  # fmt: skip
    return [first, joiner]


@pytest.mark.parametrize("mode", ["one", "workers", "shared"], indirect=True)
def test_a_crawl_stopped_by_sigterm_exits_3_in_every_mode(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    procs = _start(mode, site, tmp_path)
    signal_after_fetches(procs[0], 15, signal.SIGTERM)
    for other in procs[1:]:
        other.send_signal(signal.SIGTERM)
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=DEADLINE)
        assert proc.returncode == EXIT_STOPPED, stderr
        assert "stopped:" in stdout and "Crawled" in stdout


def test_ctrl_c_exits_3_and_the_crawl_resumes_to_its_end(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    mode = Mode("one")
    procs = _start(mode, site, tmp_path)
    signal_after_fetches(procs[0], 15, signal.SIGINT)
    _, stderr = procs[0].communicate(timeout=DEADLINE)
    assert procs[0].returncode == EXIT_STOPPED, stderr
    resumed = subprocess.run(
        [*mode.command(tmp_path / "seeds.txt", tmp_path / "out")[:3], "crawl", "--resume",
         str(tmp_path / "out"), "--no-progress"],
        capture_output=True, text=True, check=False, timeout=DEADLINE,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    # The resume's notice reads like the CLI's own lines: no timestamp, level or logger.
    notices = [line for line in resumed.stderr.splitlines() if "resuming" in line]
    assert notices and all(line.startswith("gossamer: resuming") for line in notices)
    assert "level=" not in resumed.stderr


@pytest.mark.parametrize("mode", ["one", "workers"], indirect=True)
def test_a_sigterm_as_the_crawl_ends_still_prints_the_summary(
    mode: Mode, site: ThreadedTestWeb, tmp_path: Path
) -> None:
    """The signal is sent when the page target stops the crawl: it lands while the last
    fetches drain, the reports are written or the summary is printed, never killing it."""
    (proc,) = _start(mode, site, tmp_path, "--max-pages", "10")
    assert proc.stderr is not None
    for line in proc.stderr:
        if "stopping reason=target" in line:
            proc.send_signal(signal.SIGTERM)
            break
    stdout, stderr = proc.communicate(timeout=DEADLINE)
    assert proc.returncode in (0, EXIT_STOPPED), stderr
    assert "Crawled" in stdout and "stopped:" in stdout
    assert (tmp_path / "out" / "reports" / "stats.txt").is_file()
