"""kill -9 between the two hops of a redirected robots.txt, then resume.

A robots.txt that redirects (``/robots.txt`` 301 -> ``/robots-real.txt``) is fetched whole,
then its hops are archived one after the other, each recorded as it is written. A kill that
lands between the two (the first hop's "fetched" log line, which the kill -9 loop counts to
time its kills, is written right there) leaves the 301 archived and no answer: the rules were
never known, so the resume must ask robots.txt again, and the 301 is archived a second time.
That is what the kill -9 loop of ``test_crash_resume.py`` once saw as "a lasting robots.txt
stored twice"; the answer the redirect led to is stored once.

The crawl kills itself right after recording the first hop (a wrapper of the recorder, in
the crawl's own process), so the moment is certain and nothing waits on time.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.testweb.model import RobotsVariant
from gossamer.urls import origin_of

from .conftest import RESOLVE

SPEC = WebSpec(seed=1, hosts=8, pages_per_host=3, crawl_delay_hosts=False)

# ``python -c``: the crawl command, killed by SIGKILL once the first hop of a redirected
# robots.txt is archived and recorded, before the next hop is.
KILLED_BETWEEN_HOPS = """
import os, signal, sys
from gossamer.cli import main
from gossamer.crawling.recorder import Recorder

record = Recorder.record_robots

def record_then_die(self, job, hop, location):
    answer = record(self, job, hop, location)
    if hop.is_redirect:
        os.kill(os.getpid(), signal.SIGKILL)
    return answer

Recorder.record_robots = record_then_die
sys.exit(main(sys.argv[1:]))
"""


def statuses(out: Path) -> dict[str, list[int]]:
    """The status of every response record, per URL, in WARC order."""
    found: dict[str, list[int]] = {}
    for path in sorted((out / "warc").glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "response":
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    found.setdefault(url, []).append(int(record.http_headers.get_statuscode()))
    return found


def test_a_kill_between_robots_hops_asks_robots_txt_again(tmp_path: Path) -> None:
    web = build_web(SPEC)
    host = web.host_with_robots(RobotsVariant.REDIRECT)
    assert host is not None
    out = tmp_path / "out"
    with ThreadedTestWeb(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text(site.url(host, "/") + "\n")
        # The seed page alone (no link is followed), in one process.
        args = ["crawl", str(seeds), "--out", str(out), "--resolve", RESOLVE]
        args += ["--workers", "1", "--max-depth", "0", "--delay", "0"]
        killed = subprocess.run(
            [sys.executable, "-c", KILLED_BETWEEN_HOPS, *args], capture_output=True, check=False
        )
        assert killed.returncode == -9, killed.stderr
        robots, real = site.url(host, "/robots.txt"), site.url(host, "/robots-real.txt")
        assert statuses(out) == {robots: [301]}  # the answer itself was never archived
        resumed = subprocess.run(
            [sys.executable, "-m", "gossamer", "crawl", "--resume", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert resumed.returncode == 0, resumed.stderr
    archived = statuses(out)
    assert archived[robots] == [301, 301]
    assert archived[real] == [200]
    conn = sqlite3.connect(out / "crawl.db")
    try:
        kept = conn.execute("SELECT origin, status FROM robots").fetchall()
    finally:
        conn.close()
    assert (origin_of(robots), 200) in kept  # the answer the redirect led to, kept at last
