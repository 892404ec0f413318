"""A crawl split over worker processes by host: as polite and complete as one process."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from gossamer.engine.partition import owner
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import RESOLVE, signal_after_fetches

WARCIO = Path(sys.executable).parent / "warcio"
CONFIG = "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.2\nrobots_retries = 1\n"


def crawl(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gossamer", "crawl", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def stored_records(out: Path) -> Counter[str]:
    """Response and revisit records per URL in the crawl's WARC files, each file checked."""
    stored: Counter[str] = Counter()
    for path in sorted((out / "warc").glob("*.warc.gz")):
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):
                    stored[record.rec_headers.get_header("WARC-Target-URI")] += 1
    return stored


def kill_after_fetches(count: int, *args: str | Path) -> None:
    """Run ``gossamer -vv crawl ARGS`` and SIGKILL the coordinator after ``count`` fetches."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gossamer", "-vv", "crawl", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    signal_after_fetches(proc, count, signal.SIGKILL)
    proc.communicate(timeout=60)


def prepare(site: ThreadedTestWeb, tmp_path: Path, extra: str = "") -> tuple[Path, Path, Path]:
    """Seeds file, config file and output folder for one crawl of ``site``."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    config = tmp_path / "c.toml"
    config.write_text(CONFIG + extra)
    return seeds, config, tmp_path / "out"


def test_owner_is_stable_and_ignores_scheme_and_port() -> None:
    assert owner("https://a.test/x", 4) == owner("http://a.test:8080/y", 4)
    spread = Counter(owner(f"http://h{i}.test/", 2) for i in range(1000))
    assert min(spread.values()) > 400


def test_two_workers_crawl_politely_and_completely(tmp_path: Path) -> None:
    web = build_web(WebSpec(seed=4, hosts=20, pages_per_host=25, latency=0.003))
    with ThreadedTestWeb(web) as site:
        seeds, config, out = prepare(site, tmp_path, "[scope]\nmax_depth = 25\n")
        result = crawl(
            seeds, "--out", out, "--resolve", RESOLVE, "--config", config, "--workers", "2",
            "--concurrency", "8",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        report = site.report()
        requests = Counter(site.audit.fetched())
    assert report.ok(), report.summary()
    warcs = sorted((out / "warc").glob("*.warc.gz"))
    assert {p.name.split("-")[1] for p in warcs} == {"w0", "w1"}
    stored = stored_records(out)
    conn = sqlite3.connect(out / "crawl.db")
    rows = {u for (u,) in conn.execute("SELECT url FROM pages WHERE warc_file IS NOT NULL")}
    pages = conn.execute(
        "SELECT count(*) FROM pages WHERE purpose = 'page' AND status BETWEEN 200 AND 299"
        " AND error IS NULL"
    ).fetchone()[0]
    conn.close()
    assert rows == set(stored)
    stats = json.loads((out / "reports" / "stats.json").read_text())
    assert stats["pages"] == pages
    index = (out / "index.cdxj").read_text().splitlines()
    assert index == sorted(index) and len(index) == sum(stored.values())
    assert not list(out.glob("index-w*.cdxj"))
    # Each host was crawled by one worker only: its WARC records sit in one writer's files.
    writers: dict[str, set[str]] = {}
    for path in warcs:
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    writers.setdefault(url.split("/")[2], set()).add(path.name.split("-")[1])
    assert all(len(names) == 1 for names in writers.values())
    assert max(requests.values()) <= 2  # robots.txt only, never a page twice


def test_page_target_is_shared_between_workers(tmp_path: Path) -> None:
    web = build_web(WebSpec(seed=4, hosts=20, pages_per_host=25, latency=0.003))
    with ThreadedTestWeb(web) as site:
        seeds, config, out = prepare(site, tmp_path)
        result = crawl(
            seeds, "--out", out, "--resolve", RESOLVE, "--config", config, "--workers", "2",
            "--max-pages", "61",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Crawled 61 in" in result.stdout


def test_the_page_target_follows_the_work_when_one_worker_owns_every_host(
    tmp_path: Path,
) -> None:
    # One host: one of the two workers owns it, the other has nothing to crawl. A fixed
    # share each would stop at half the target; the idle worker's grant goes where the work is.
    spec = WebSpec(
        seed=2, hosts=1, pages_per_host=60, seed_hosts=1, special_hosts=False,
        crawl_delay_hosts=False,
    )  # fmt: skip
    with ThreadedTestWeb(build_web(spec)) as site:
        seeds, config, out = prepare(site, tmp_path)
        result = crawl(
            seeds, "--out", out, "--resolve", RESOLVE, "--config", config, "--workers", "2",
            "--max-pages", "40", "--concurrency", "4",
        )  # fmt: skip
        requests = Counter(site.audit.fetched())
    assert result.returncode == 0, result.stderr
    assert "Crawled 40 in" in result.stdout
    stats = json.loads((out / "reports" / "stats.json").read_text())
    assert stats["pages"] == 40
    assert max(requests.values()) == 1  # the grants never made a page fetched twice


def test_kill_9_of_the_coordinator_then_resume(tmp_path: Path) -> None:
    web = build_web(WebSpec(seed=6, hosts=16, pages_per_host=30, latency=0.003))
    with ThreadedTestWeb(web) as site:
        seeds, config, out = prepare(site, tmp_path, "[scope]\nmax_depth = 25\n")
        kill_after_fetches(
            60, seeds, "--out", out, "--resolve", RESOLVE, "--config", config, "--workers", "2",
            "--concurrency", "4",
        )  # fmt: skip
        result = crawl("--resume", out)
        assert result.returncode == 0, result.stderr
        report = site.report()
    assert report.missing == ()
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    stored: Counter[str] = Counter()
    refused: set[str] = set()
    for path in sorted((out / "warc").glob("*.warc.gz")):
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    stored[url] += 1
                    if record.http_headers.get_statuscode() in ("429", "503"):
                        refused.add(url)
    twice = [u for u, n in stored.items() if n > 1 and "/robots" not in u and u not in refused]
    assert twice == []


def test_resumed_with_other_numbers_of_workers_after_a_kill(tmp_path: Path) -> None:
    # 2 workers to a page target; 2 again, killed mid-crawl (their indexes left unmerged);
    # one process; then 3 workers to the end. Each run's workers own the hosts by hash of
    # their own number, and the folder ends as one uninterrupted crawl would leave it.
    web = build_web(WebSpec(seed=6, hosts=16, pages_per_host=30, latency=0.003))
    with ThreadedTestWeb(web) as site:
        seeds, config, out = prepare(site, tmp_path, "[scope]\nmax_depth = 25\n")
        common = ["--resolve", RESOLVE, "--config", str(config), "--concurrency", "4"]
        first = crawl(seeds, "--out", out, *common, "--workers", "2", "--max-pages", "80")
        assert first.returncode == 0, first.stderr
        kill_after_fetches(60, "--resume", out, "--workers", "2", "--max-pages", "300")
        assert list(out.glob("index-w*.cdxj"))  # the kill left the workers' indexes
        alone = crawl("--resume", out, "--workers", "1", "--max-pages", "400")
        assert alone.returncode == 0, alone.stderr
        assert not list(out.glob("index-w*.cdxj"))  # merged by the one process
        three = crawl("--resume", out, "--workers", "3", "--max-pages", "100000")
        assert three.returncode == 0, three.stderr
        report = site.report()
        # Pages answered in full: a busy host's 429 before its 200 is a retry, not a repeat.
        answered = Counter(site.audit.url(r) for r in site.audit.records() if r.status == 200)
    assert report.missing == ()
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    assert json.loads((out / "crawl.json").read_text())["config"]["workers"] == 3
    warcs = sorted((out / "warc").glob("*.warc.gz"))
    assert {p.name.split("-")[1] for p in warcs} >= {"w0", "w1", "w2"}
    stored = stored_records(out)
    conn = sqlite3.connect(out / "crawl.db")
    rows = {u for (u,) in conn.execute("SELECT url FROM pages WHERE warc_file IS NOT NULL")}
    conn.close()
    assert rows == set(stored)
    index = (out / "index.cdxj").read_text().splitlines()
    assert index == sorted(index) and len(index) == sum(stored.values())
    assert not list(out.glob("index-w*.cdxj"))
    # Only what was in flight at the kill (at most 4 per worker) was answered twice.
    again = sum(n - 1 for u, n in answered.items() if "/robots" not in u)
    assert again <= 2 * 4, sorted(u for u, n in answered.items() if n > 1)
