"""kill -9 at random moments, resume each time: nothing is lost and little is repeated.

After the kills, every row of crawl.db points at its URL's last response record, and the only
bytes ever cut were torn tails (a torn exchange ending in an incomplete gzip member, each
kept in a ``.torn`` file).

The crawler runs as a real process; the test waits on its own log lines ("fetched url=...")
to pick the moment of each SIGKILL, so nothing sleeps. The same web is crawled once without
interruption for reference.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import zlib
from collections import Counter
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.store.warcscan import Damage, scan
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .archive_checks import assert_pages_match_warc
from .conftest import RESOLVE, query

WARCIO = Path(sys.executable).parent / "warcio"
KILLS = 7
CONCURRENCY = 8
WORKERS = 2  # the default mode on a two-core machine, named so the bound below holds anywhere
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.2\nrobots_retries = 1\n"
    "[scope]\nmax_depth = 25\n"
)


def start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gossamer", "-vv", "crawl", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# What the crawls said beside their fetch lines (an internal error's traceback, say), for
# the assertion messages: also what they said after the kill, while the pipe drained.
SAID: list[str] = []


def run_until(proc: subprocess.Popen[str], kill_after: int | None) -> None:
    assert proc.stderr is not None
    fetched = 0
    for line in proc.stderr:
        if "fetched url=" not in line:
            SAID.append(line)
        if "fetched url=" in line:
            fetched += 1
            if kill_after is not None and fetched >= kill_after:
                proc.kill()
                break
    _, rest = proc.communicate(timeout=120)
    SAID.extend(line for line in rest.splitlines(keepends=True) if "fetched url=" not in line)


def faults_said() -> str:
    """The records of internal errors the crawls logged, each with its traceback (the lines
    up to the next record, which starts with its date at -vv); a log of thousands of lines
    (matplotlib's at the end) would push them out of a message cut to its last lines."""
    blocks: list[str] = []
    keep = False
    for line in SAID:
        if line[:2].isdigit():  # a record's first line
            keep = "internal error" in line
        if keep:
            blocks.append(line)
    return "".join(blocks)[:20_000] or "(no internal error was logged)"


def fetched_pages(out: Path) -> set[str]:
    conn = sqlite3.connect(out / "crawl.db")
    try:
        rows = conn.execute(
            "SELECT url FROM pages WHERE purpose = 'page' AND status BETWEEN 200 AND 299"
            " AND error IS NULL"
        ).fetchall()
    finally:
        conn.close()
    return {url for (url,) in rows}


def archived(out: Path) -> tuple[Counter[str], set[str]]:
    """Response records per URL, and the URLs that got a 429/503 answer (retried on purpose)."""
    counts: Counter[str] = Counter()
    refused: set[str] = set()
    for path in sorted((out / "warc").glob("*.warc.gz")):
        check = subprocess.run([WARCIO, "check", str(path)], capture_output=True, check=False)
        assert check.returncode == 0, check.stdout
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    counts[url] += 1
                    if record.http_headers.get_statuscode() in ("429", "503"):
                        refused.add(url)
    return counts, refused


def paths_without_records(reference: Path) -> set[str]:
    """The paths the reference crawl fetched (a ``pages`` row) but archived no response for."""
    conn = sqlite3.connect(reference / "crawl.db")
    try:
        rows = conn.execute("SELECT url FROM pages WHERE purpose = 'page'").fetchall()
    finally:
        conn.close()
    recorded, _ = archived(reference)
    return {url.split("/", 3)[3] for (url,) in rows} - {u.split("/", 3)[3] for u in recorded}


def robots_answers(out: Path, robots_urls: set[str]) -> set[str]:
    """URLs of robots.txt exchanges (``robots_urls``: the ``pages`` rows of that purpose)
    whose archived answers all stand until they expire: no 5xx or 429, and no redirect. A
    redirect is a hop, not an answer: a kill between it and the next hop leaves it archived
    with no rules known, so it is asked again (test_robots_redirect_kill.py); the answer it
    leads to (``/robots-real.txt``) is counted instead."""
    statuses: dict[str, set[int]] = {}
    for path in sorted((out / "warc").glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                url = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type in ("response", "revisit") and url in robots_urls:
                    status = int(record.http_headers.get_statuscode())
                    statuses.setdefault(url, set()).add(status)
    return {
        u
        for u, seen in statuses.items()
        if not any(s >= 500 or s == 429 or 300 <= s < 400 for s in seen)
    }


def assert_only_torn_tails_were_cut(out: Path) -> None:
    """Every cut kept beside a WARC file is a torn exchange: whole gzip members of it, if
    any, then an incomplete one (what a kill mid-write leaves); and no WARC file holds
    anything but whole records."""
    for torn in (out / "warc").glob("*.torn*"):
        data = torn.read_bytes()
        while data:
            decoder = zlib.decompressobj(31)
            decoder.decompress(data)  # raises on anything but a valid start
            if not decoder.eof:
                break  # the incomplete member the cut ends with
            data = decoder.unused_data
        assert data, f"{torn.name} holds only complete members"
    for path in (out / "warc").glob("*.warc.gz"):
        assert [item for item in scan(path) if isinstance(item, Damage)] == [], path.name


def crawl_args(site: ThreadedTestWeb, tmp: Path, out: Path) -> list[str]:
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    config = tmp / "c.toml"
    config.write_text(CONFIG)
    return [
        str(seeds), "--out", str(out), "--config", str(config),
        "--resolve", RESOLVE, "--concurrency", str(CONCURRENCY), "--workers", str(WORKERS),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def web_spec() -> WebSpec:
    return WebSpec(seed=2, hosts=16, pages_per_host=40, latency=0.002)


def test_kill_9_loop_then_resume_matches_an_uninterrupted_crawl(
    web_spec: WebSpec, tmp_path: Path
) -> None:
    web = build_web(web_spec)
    with ThreadedTestWeb(web) as site:
        reference = tmp_path / "reference"
        run_until(start(crawl_args(site, tmp_path, reference)), None)
        # Paths only: the two servers listen on different ports.
        expected = {url.split("/", 3)[3] for url in fetched_pages(reference)}
    assert_pages_match_warc(reference)
    rng = random.Random(20261122)
    with ThreadedTestWeb(web) as site:
        out = tmp_path / "crashed"
        first = crawl_args(site, tmp_path, out)
        for kill in range(KILLS):
            args = first if kill == 0 else ["--resume", str(out), "--workers", str(WORKERS)]
            run_until(start(args), rng.randint(1, 90))
            if kill == KILLS // 2:
                # recover on a killed crawl keeps its database and brings it level too.
                recovered = subprocess.run(
                    [sys.executable, "-m", "gossamer", "recover", str(out)],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                assert recovered.returncode == 0, recovered.stderr
                assert "moved to" not in recovered.stdout
                assert_pages_match_warc(out)
        run_until(start(["--resume", str(out), "--workers", str(WORKERS)]), None)
        requests = Counter(site.audit.fetched())
        report = site.report()
    assert_pages_match_warc(out)
    assert_only_torn_tails_were_cut(out)
    # No response of this web trips the crawler's own code, kills or not (such a page would be
    # missing below: one CI run met it, once; its traceback is what the crawls said).
    faults = [
        url
        for (url,) in query(
            out / "crawl.db", "SELECT url FROM pages WHERE error = 'internal_error'"
        )
    ]
    assert faults == [], faults_said()
    got = {url.split("/", 3)[3] for url in fetched_pages(out)}
    assert got == expected
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    assert report.missing == ()
    stored, retried = archived(out)
    conn = sqlite3.connect(out / "crawl.db")
    robots_urls = {u for (u,) in conn.execute("SELECT url FROM pages WHERE purpose = 'robots'")}
    conn.close()
    twice = [u for u, n in requests.items() if n > 1 and u not in robots_urls]
    # A page asked for twice was in flight at a kill: its first answer was never stored. A
    # response never archived at all (a type not kept, a body over the size limit: the
    # reference crawl has no record of it either) has only its crawl.db row, which a kill
    # before the batch's commit loses, so it is asked for again and still has no record.
    never_archived = paths_without_records(reference)
    in_flight = [u for u in twice if u not in retried]
    assert {
        u: stored[u]
        for u in in_flight
        if stored[u] != (0 if u.split("/", 3)[3] in never_archived else 1)
    } == {}
    assert len(in_flight) <= KILLS * CONCURRENCY * WORKERS  # each worker's requests in flight
    assert not [u for u, n in stored.items() if n > 1 and u not in robots_urls | retried]
    # robots.txt answers are kept in crawl.db: a resume fetches none whose rules are still
    # valid. Only an unavailable one (5xx, retried on purpose) may have been stored twice.
    lasting = robots_answers(out, robots_urls)
    refetched = {u: stored[u] for u in lasting if stored[u] > 1}
    assert lasting and refetched == {}
    assert sum(requests[u] - 1 for u in lasting) <= KILLS * CONCURRENCY * WORKERS  # in flight


def test_recover_rebuilds_the_database_from_warc(web_spec: WebSpec, tmp_path: Path) -> None:
    web = build_web(web_spec)
    with ThreadedTestWeb(web) as site:
        out = tmp_path / "crawl"
        run_until(start(crawl_args(site, tmp_path, out)), None)
    columns = (
        "url, url_id, doc_id, status, content_type, length, depth, referrer,"
        " warc_file, warc_offset, warc_length, host, purpose"
    )
    query = f"SELECT {columns} FROM pages WHERE warc_file IS NOT NULL ORDER BY url"
    conn = sqlite3.connect(out / "crawl.db")
    before = conn.execute(query).fetchall()
    conn.close()
    kept = {row[0] for row in before}
    crawled_before = [
        line
        for line in (out / "reports" / "crawled.txt").read_text().splitlines()
        if line.split("\t")[0] in kept
    ]
    for suffix in ("", "-wal", "-shm"):
        (out / f"crawl.db{suffix}").unlink(missing_ok=True)
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "recover", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    conn = sqlite3.connect(out / "crawl.db")
    after = conn.execute(query).fetchall()
    conn.close()
    assert after == before
    crawled_after = (out / "reports" / "crawled.txt").read_text().splitlines()
    # Fetches without a WARC record (failed below HTTP, or body skipped) cannot come back.
    assert set(crawled_after) == set(crawled_before)
