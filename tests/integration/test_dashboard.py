"""Watching and steering real crawls of the test web through their control channel.

Pause is judged from the server side: once the crawl says "paused", the test web's audit
gets no request until it is resumed. ``/metrics`` is read with prometheus_client's own parser
and held against ``stats.json``. A ``--workers`` crawl shows one row per worker and obeys the
same commands through its coordinator. ``gossamer crawl`` ends with the concurrency reached.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from gossamer import cli
from gossamer.engine.workers import run_workers
from gossamer.monitor.channel import socket_path
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.web import make_app
from gossamer.web.dashboard import FEED

from .conftest import RESOLVE, local_config, query
from .dashboard_rig import (
    ADDED_HOST,
    ELSEWHERE,
    LIMIT,
    SLOW,
    ThreadedCrawl,
    control_ready,
    hosts_of,
    requests_to,
    watch,
)


@pytest.fixture
def ready(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    return control_ready(monkeypatch)


def test_pause_holds_every_request_then_seeds_resume_and_stop(
    tmp_path: Path, ready: threading.Event
) -> None:
    with ThreadedTestWeb(build_web(SLOW)) as site, ThreadedTestWeb(build_web(ELSEWHERE)) as other:
        crawl = ThreadedCrawl(site, tmp_path).start()
        watcher = watch(crawl.out, ready)
        watcher.until(lambda s: s["totals"]["pages"] >= 20)
        assert watcher.command(cmd="pause")["ok"]
        paused = watcher.until(lambda s: s["state"] == "paused")
        assert paused["in_flight"] == 0
        seen = requests_to(site)
        seed = f"http://{ADDED_HOST}:{other.origins.http}/"
        reply = watcher.command(cmd="add-seeds", text=f"{seed}\nnot a url\n{site.seeds()[0]}")
        assert reply["queued"] == [seed] and reply["known"] == 1
        assert reply["problems"] == ["line 2: contains whitespace: not a url"]
        # Two more statuses (two seconds at least) while paused: not one request.
        still = watcher.next(2)
        assert still["state"] == "paused" and still["totals"]["pages"] == paused["totals"]["pages"]
        assert requests_to(site) == seen
        assert requests_to(other) == 0
        assert watcher.command(cmd="resume")["state"] == "running"
        watcher.until(lambda s: ADDED_HOST in set(hosts_of(s)))
        assert f"http://{ADDED_HOST}:{other.origins.http}/" in other.audit.fetched()
        assert watcher.command(cmd="stop")["ok"]
        final = watcher.ended()
        outcome = crawl.join()
    assert outcome.reason == "stopped" and final["reason"] == "stopped"
    assert outcome.stats.pages < SLOW.hosts * SLOW.pages_per_host  # stopped, not finished
    assert not socket_path(crawl.out).exists()
    assert query(crawl.out / "crawl.db", f"SELECT status FROM pages WHERE url = '{seed}'") == [
        (200,)
    ]
    saved = json.loads((crawl.out / "reports" / "stats.json").read_text())
    assert final["totals"]["pages"] == saved["pages"]
    assert (crawl.out / "reports" / "report.html").is_file()


def metrics_of(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def assert_metrics_are(saved: dict[str, Any], metrics: str) -> None:
    found = metrics_of(metrics)
    for name, key in (
        ("gossamer_pages_total", "pages"),
        ("gossamer_requests_total", "requests"),
        ("gossamer_responses_total", "responses"),
        ("gossamer_bytes_total", "bytes"),
        ("gossamer_discovered_urls_total", "discovered"),
        ("gossamer_redirects_total", "redirects"),
        ("gossamer_robots_requests_total", "robots_requests"),
        ("gossamer_skipped_robots_total", "skipped_robots"),
        ("gossamer_skipped_scope_total", "skipped_other"),
        ("gossamer_html_pages_total", "html_pages"),
        ("gossamer_pdf_pages_total", "pdf_pages"),
    ):
        assert found[name][()] == saved[key], name
    errors = {dict(labels)["kind"]: v for labels, v in found["gossamer_errors_total"].items()}
    assert errors == saved["errors"]
    classes: dict[str, int] = {}
    for code, count in saved["statuses"].items():
        classes[f"{code[0]}xx"] = classes.get(f"{code[0]}xx", 0) + count
    by_class = found["gossamer_http_responses_total"]
    assert {dict(labels)["status_class"]: v for labels, v in by_class.items()} == classes
    # Every response was timed once.
    assert found["gossamer_fetch_duration_seconds_count"][()] == saved["responses"]


def test_metrics_at_the_end_equal_stats_json(tmp_path: Path, ready: threading.Event) -> None:
    small = WebSpec(seed=3, hosts=6, pages_per_host=8, latency=0.002)
    with ThreadedTestWeb(build_web(small)) as site:
        with site.hold():  # no answer until the server below follows the crawl
            crawl = ThreadedCrawl(site, tmp_path).start()
            assert ready.wait(LIMIT)
            app = make_app(crawl.out)

            async def follow() -> tuple[str, dict[str, Any]]:
                async with TestClient(TestServer(app, host="127.0.0.1")) as client:
                    live = await (await client.get("/metrics")).text()
                    assert 'gossamer_crawl_state{state="running"} 1.0' in live
                    feed = app[FEED]
                    site_released.set()
                    while not (feed.status.get("state") == "ended" and not feed.live):
                        await feed.changed(feed.version)
                    text = await (await client.get("/metrics")).text()
                    return text, feed.status

            site_released = threading.Event()
            result: list[tuple[str, dict[str, Any]]] = []
            runner = threading.Thread(target=lambda: result.append(asyncio.run(follow())))
            runner.start()
            assert site_released.wait(LIMIT)
        runner.join(LIMIT)
        outcome = crawl.join()
    assert outcome.reason == "exhausted"
    [(metrics, last)] = result
    assert last["source"] == "live"  # the crawl's own last word, not stats.json read back
    saved = json.loads((crawl.out / "reports" / "stats.json").read_text())
    assert saved["pages"] > 0
    assert_metrics_are(saved, metrics)
    assert last["totals"]["pages"] == saved["pages"]


def test_a_workers_crawl_has_a_row_per_worker_and_is_steered_whole(
    tmp_path: Path, ready: threading.Event
) -> None:
    with ThreadedTestWeb(build_web(SLOW)) as site, ThreadedTestWeb(build_web(ELSEWHERE)) as other:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
        config = local_config(seeds, tmp_path / "out", concurrency=4, workers=2)
        politeness = dataclasses.replace(config.politeness, delay=0.05)
        config = dataclasses.replace(config, politeness=politeness)
        seen: dict[str, Any] = {}

        def observe() -> None:
            watcher = watch(config.out, ready)
            seen["two"] = watcher.until(
                lambda s: len(s["workers"]) == 2 and all(w["pages"] for w in s["workers"])
            )
            watcher.command(cmd="pause")
            seen["paused"] = watcher.until(lambda s: s["state"] == "paused")
            seen["requests"] = requests_to(site)
            seen["later"] = watcher.next(2)
            seen["requests_later"] = requests_to(site)
            # A bare host:port, as a user types it: https first, then http (the other web
            # speaks plain HTTP only), in the worker that owns the host.
            watcher.command(cmd="add-seeds", text=f"{ADDED_HOST}:{other.origins.http}\n")
            watcher.command(cmd="resume")
            by_http = f"http://{ADDED_HOST}:{other.origins.http}/"
            seen["added"] = watcher.until(lambda _: by_http in other.audit.fetched())
            watcher.command(cmd="stop")
            seen["final"] = watcher.ended()

        observer = threading.Thread(target=observe)
        observer.start()
        # The coordinator takes signals, so it runs on this (the main) thread.
        outcome = run_workers(config, parse_seeds(seeds.read_text()), 2)
        observer.join(LIMIT)
    assert {w["name"] for w in seen["two"]["workers"]} == {"worker 0", "worker 1"}
    assert sum(w["pages"] for w in seen["two"]["workers"]) == seen["two"]["totals"]["pages"]
    assert seen["requests_later"] == seen["requests"]
    assert seen["later"]["totals"]["pages"] == seen["paused"]["totals"]["pages"]
    assert outcome.reason == "stopped"
    final = seen["final"]
    saved = json.loads((config.out / "reports" / "stats.json").read_text())
    for key in ("pages", "requests", "bytes", "errors", "html_pages"):
        assert final["totals"][key] == saved[key], key
    assert len(final["workers"]) == 2
    assert final["timeline"]["t"], "the coordinator sampled the crawl"
    assert (config.out / "reports" / "report.html").is_file()
    assert not socket_path(config.out).exists()
    assert not list(config.out.glob("control-w*.sock"))


def test_the_crawl_command_says_the_concurrency_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = WebSpec(seed=5, hosts=4, pages_per_host=6, special_hosts=False, crawl_delay_hosts=False)
    with ThreadedTestWeb(build_web(small)) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
        out = tmp_path / "out"
        # One process: several would each have 4 (the line then says 4 x workers configured).
        argv = ["crawl", seeds, "--out", out, "--resolve", RESOLVE, "--concurrency", "4"]
        argv += ["--workers", "1"]
        code = cli.main([str(arg) for arg in [*argv, "--delay", "0", "--no-progress"]])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    saved = json.loads((out / "reports" / "stats.json").read_text())
    reached = saved["max_in_flight"]
    assert 1 <= reached <= 4
    # One summary line (stats.txt's last), saying what was reached, then why it stopped.
    assert printed[-2].startswith(f"Crawled {saved['pages']} in ")
    assert f"(at most {reached} simultaneous requests, 4 configured)" in printed[-2]
    assert not [line for line in printed if "Concurrency reached" in line]
    assert printed[-1].startswith("stopped: exhausted (no URL left to fetch);")
