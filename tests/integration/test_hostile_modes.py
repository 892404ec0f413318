"""Issue 26's hostile cases in the two other ways a crawl runs: ``--workers 2`` and a shared
crawl on Redis (one process is ``test_hostile.py``'s combined crawl).

Each mode crawls the cases of what servers really send (non-ASCII reason phrases, a
robots.txt cut by the network, raw UTF-8 in Location, no Content-Type, a PDF labelled HTML, a
page nested 150,000 deep) beside the calm host, through the real command line, and the
outcome of each is judged from the rows of every process's ``crawl.db``, the server's log and
``warcio check``.
"""

from __future__ import annotations

import gzip
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.testweb.hostile import CALM_TARGETS, HOSTILE_DOMAIN, HOSTILE_RESOLVE, HostileServer
from gossamer.testweb.hostile.cases import CUT_ROBOTS_LINKS, DEEP_LINKS

from .loopthread import LoopThread
from .modes import Finished, Mode, mode_fixture

CASES = (
    "calm",
    "reason-utf8",
    "reason-latin1",
    "robots-gzip-cut",
    "location-utf8",
    "no-type",
    "pdf-as-html",
    "deep-nesting",
)
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.2\nrobots_retries = 1\n"
    "robots_wait = 0.3\n[scope]\nmax_depth = 25\nsitemaps = false\n"
    "[fetch]\nconnect_timeout = 2.0\nread_timeout = 5.0\ntotal_timeout = 10.0\n"
)


@pytest.fixture
def mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    yield from mode_fixture(request, tmp_path)


class Outcome:
    """What one crawl of the cases left: every process's rows, and the server's log."""

    def __init__(self, finished: Finished, server: HostileServer) -> None:
        self.finished = finished
        self.port = server.port
        self.hits = {case: [hit.target for hit in server.hits(case)] for case in CASES}
        self.rows: dict[str, tuple[int, str | None, str | None, Path]] = {}
        for folder in finished.folders:
            conn = sqlite3.connect(folder / "crawl.db")
            try:
                found = conn.execute("SELECT url, status, error, content_type FROM pages")
                for url, status, error, kind in found:
                    self.rows[url] = (int(status), error, kind, folder)
            finally:
                conn.close()

    def url(self, case: str, target: str = "/") -> str:
        return f"http://{case}.{HOSTILE_DOMAIN}:{self.port}{target}"

    def row(self, case: str, target: str = "/") -> tuple[int, str | None]:
        status, error, _, _ = self.rows[self.url(case, target)]
        return status, error

    def kind(self, case: str, target: str = "/") -> str | None:
        return self.rows[self.url(case, target)][2]


@pytest.fixture
def outcome(mode: Mode, tmp_path: Path) -> Iterator[Outcome]:
    with LoopThread(HostileServer) as server:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(server.url(case) + "\n" for case in CASES))
        config = tmp_path / "c.toml"
        config.write_text(CONFIG)
        flags = ("--config", config, "--resolve", HOSTILE_RESOLVE, "--concurrency", "16")
        finished = mode.run(seeds, tmp_path / "out", *flags)
        yield Outcome(finished, server)


@pytest.mark.parametrize("mode", ["workers", "shared"], indirect=True)
def test_what_servers_really_send_in_every_mode(outcome: Outcome) -> None:
    run = outcome
    assert set(run.finished.codes) == {0}, run.finished.stderr[-3000:]
    assert "Traceback" not in run.finished.stderr
    # The calm host beside them is complete.
    assert all(run.row("calm", target) == (200, None) for target in CALM_TARGETS)
    # Non-ASCII reason phrases: recorded, archived, the crawl went on.
    assert run.row("reason-utf8") == (200, None)
    assert run.row("reason-utf8", "/suite.html") == (200, None)
    assert run.row("reason-latin1") == (404, None)
    # A robots.txt cut by the network is unavailable: the pages it forbids are never asked.
    assert run.row("robots-gzip-cut", "/robots.txt") == (200, "bad_encoding")
    assert not set(CUT_ROBOTS_LINKS) & set(run.hits["robots-gzip-cut"])
    # Raw UTF-8 in Location is read as UTF-8.
    assert run.row("location-utf8", "/caf%C3%A9") == (200, None)
    assert "/caf%C3%83%C2%A9" not in run.hits["location-utf8"]
    # Sniffed types: HTML without a type has its links followed; a %PDF- body is a PDF.
    assert (run.row("no-type"), run.kind("no-type")) == ((200, None), "text/html")
    assert "/a.html" in run.hits["no-type"]
    assert (run.row("pdf-as-html"), run.kind("pdf-as-html")) == ((200, None), "application/pdf")
    # The page nested 150,000 deep is stored and read as far as the bound allows.
    assert run.row("deep-nesting") == (200, None)
    assert set(DEEP_LINKS) <= set(run.hits["deep-nesting"])
    # Every WARC file of every process passes warcio check.
    warcio = Path(sys.executable).parent / "warcio"
    for folder in run.finished.folders:
        for path in sorted((folder / "warc").glob("*.warc.gz")):
            checked = subprocess.run(
                [str(warcio), "check", str(path)], capture_output=True, text=True, check=False
            )
            assert checked.returncode == 0, checked.stdout + checked.stderr
            assert gzip.decompress(path.read_bytes())  # whole gzip members
