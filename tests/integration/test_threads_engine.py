"""Issue 14, end to end: the threaded engine under each frontier synchronisation crawls the
test web as politely as the async engine does, judged by the server, and its folder is an
ordinary crawl folder. The unsynchronised frontier's collisions are counted, not hidden."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.threads.engine import ThreadedOutcome, ThreadOptions, run_threaded
from gossamer.threads.study_pipeline import run_pipeline

from .conftest import local_config, query

# Latency widens the window in which two threads could reach one host at once.
SPEC = WebSpec(seed=5, hosts=12, pages_per_host=20, latency=0.003)
SYNCHRONISED = ("lockfree", "semaphore", "monitor", "coarse", "fine")


@pytest.fixture
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as running:
        yield running


def crawl_threads(
    site: ThreadedTestWeb, tmp: Path, options: ThreadOptions, **changes: object
) -> ThreadedOutcome:
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
    config = local_config(seeds, tmp / "out", **changes)
    return run_threaded(config, parse_seeds(seeds.read_text()), options)


@pytest.mark.parametrize("sync", SYNCHRONISED)
def test_each_synchronised_frontier_is_polite_complete_and_collision_free(
    site: ThreadedTestWeb, tmp_path: Path, sync: str
) -> None:
    # A small frontier, so that threads also meet a full one and keep jobs of their own.
    options = ThreadOptions(threads=8, sync=sync, capacity=16, switch_interval=1e-5)
    outcome = crawl_threads(site, tmp_path, options)
    report = site.report()
    assert outcome.reason == "exhausted"
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    assert report.crawl_delay_violations == 0
    assert report.repeated_fetches == 0
    assert report.missing == ()
    figures = json.loads((tmp_path / "out" / "reports" / "threads.json").read_text())
    assert figures["strategy"] == sync
    assert figures["collisions"] == figures["taken_twice"] == figures["lost"] == 0
    assert figures["unfinished_jobs"] == 0
    assert figures["held_when_full"] > 0
    assert figures["puts"] == figures["takes"]  # every job put was taken, once


def test_the_unsynchronised_frontier_counts_what_it_got_wrong(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    options = ThreadOptions(threads=16, sync="unsynchronised", switch_interval=1e-6)
    outcome = crawl_threads(site, tmp_path, options)
    report = site.report()
    figures = outcome.figures
    # Whatever the interleaving: a job taken twice is never fetched twice, each host still
    # sees one request at a time, and every link the frontier dropped is accounted for.
    assert report.repeated_fetches == 0
    assert report.concurrent_violations == 0
    assert report.robots_violations == 0
    assert figures["collisions"] == figures["taken_twice"] + figures["lost"]
    assert (
        figures["puts"] - figures["takes"] + figures["taken_twice"] - figures["lost"]
        == (figures["left_in_frontier"])
    )
    assert len(report.missing) <= figures["lost"] * SPEC.pages_per_host  # lost links, no more


def test_a_threaded_crawl_folder_is_an_ordinary_crawl_folder(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    outcome = crawl_threads(site, tmp_path, ThreadOptions(threads=4, sync="fine"))
    out = tmp_path / "out"
    pages = query(out / "crawl.db", "SELECT COUNT(*) FROM pages WHERE purpose = 'page'")
    assert pages[0][0] >= outcome.stats.pages > 0
    archived = query(out / "crawl.db", "SELECT url FROM pages WHERE warc_file IS NOT NULL")
    lines = (out / "index.cdxj").read_text().splitlines()
    assert {json.loads(line.split(" ", 2)[2])["url"] for line in lines} == {u for (u,) in archived}
    stats = json.loads((out / "reports" / "stats.json").read_text())
    assert stats["pages"] == outcome.stats.pages
    assert (out / "reports" / "stats.txt").exists()
    report = (out / "reports" / "report.html").read_text()
    # Response times are counted as the async engine counts them: one per response.
    assert outcome.stats.latency.count == outcome.stats.responses
    assert outcome.stats.html_pages > 0
    assert f"{outcome.stats.pages:,}" in report or str(outcome.stats.pages) in report


def test_the_page_target_stops_the_threads_exactly(site: ThreadedTestWeb, tmp_path: Path) -> None:
    outcome = crawl_threads(site, tmp_path, ThreadOptions(threads=8), max_pages=25)
    assert outcome.reason == "target"
    assert outcome.stats.pages == 25


def test_the_seed_000_pipeline_files_every_page_once_into_the_url_tree(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
    config = local_config(seeds, tmp_path / "out")
    tree = tmp_path / "tree"
    outcome = run_pipeline(
        config,
        parse_seeds(seeds.read_text()),
        ThreadOptions(threads=6, switch_interval=1e-5),
        buffers=3,
        size=4,
        tree=tree,
        period=3600.0,
    )
    assert outcome.reason == "exhausted"
    fetched = query(
        tmp_path / "out" / "crawl.db",
        "SELECT DISTINCT url FROM pages WHERE purpose != 'robots' AND status > 0",
    )
    filed = [line.split("\t")[0] for line in (tree / "res.txt").read_text().splitlines()]
    assert sorted(filed) == sorted(u for (u,) in fetched)  # each crawled page, once
    pipeline = outcome.figures["pipeline"]
    assert isinstance(pipeline, dict)
    assert pipeline["duplicate_files"] == 0
    assert pipeline["url_files"] == len(filed)
    assert "files written more than once: 0" in (tree / "statistics.txt").read_text()
    assert site.report().concurrent_violations == 0


class _MovedRobots(BaseHTTPRequestHandler):
    """a.web.test's robots.txt redirects to b.web.test's, whose rules keep /private out."""

    asked: Counter[str]
    lock = threading.Lock()

    def do_GET(self) -> None:
        host = self.headers["Host"]
        with self.lock:
            self.asked[f"{host.split('.')[0]}{self.path}"] += 1
        if self.path == "/robots.txt" and host.startswith("a."):
            port = host.rsplit(":", 1)[1]
            self._answer(301, b"", Location=f"http://b.web.test:{port}/robots.txt")
        elif self.path == "/robots.txt":
            self._answer(200, b"User-agent: *\nDisallow: /private\n", type="text/plain")
        else:
            links = '<a href="/page">p</a><a href="/private/x">x</a>' if self.path == "/" else ""
            self._answer(200, f"<html><body>{links}</body></html>".encode())

    def _answer(self, status: int, body: bytes, type: str = "text/html", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads ``asked``."""


@pytest.mark.parametrize("first", ["a", "b"])
def test_a_robots_txt_reached_by_a_redirect_is_fetched_once(tmp_path: Path, first: str) -> None:
    """a's robots.txt answers with a redirect to b's. Crawling a first, the answer it lands on
    is b's too; crawling b first, a's redirect is not followed to a robots.txt already known.
    Either way b's robots.txt is asked for once, and its rules hold for a."""
    asked: Counter[str] = Counter()
    handler = type("Handler", (_MovedRobots,), {"asked": asked})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        port = server.server_address[1]
        order = ["a", "b"] if first == "a" else ["b", "a"]
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("".join(f"http://{h}.web.test:{port}/\n" for h in order))
        config = local_config(seeds, tmp_path / "out")
        outcome = run_threaded(config, parse_seeds(seeds.read_text()), ThreadOptions(threads=1))
    finally:
        server.shutdown()
        serving.join()
        server.server_close()
    assert outcome.reason == "exhausted"
    assert asked["b/robots.txt"] == 1
    assert asked["a/robots.txt"] == 1
    assert asked["a/page"] == asked["b/page"] == 1
    assert asked["a/private/x"] == asked["b/private/x"] == 0  # b's rules, a's too
