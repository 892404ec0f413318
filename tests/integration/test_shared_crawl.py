"""A crawl shared through Redis by ``gossamer crawl --frontier`` and ``gossamer worker``
processes, judged by the test web's own audit: one worker killed with SIGKILL mid-crawl and
Redis restarted, and still no politeness fault, no page missing, and no page fetched twice
beyond the requests in flight at the kill. Then ``gossamer ctl``: status with per-worker
figures, stop, and a later ``crawl --frontier`` that goes on; a password-protected Redis; and
the Crawl page of ``gossamer serve --frontier`` following and steering a shared crawl.

Separate processes stand in for machines: a worker's only links to the others are Redis and
the web, which is what a second machine would have too.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

import redis
import redis.cluster
from redis.asyncio import Redis as AsyncRedis

from gossamer.distributed.keys import crawl_prefix
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.web import make_app
from gossamer.web.dashboard import FEED
from gossamer.web.redisfeed import RedisFeed
from tests.unit.distributed.cluster_rig import RedisClusterRig, redis_cluster
from tests.unit.distributed.redis_rig import MISSING, SERVER, RedisServer, tls_files

from .conftest import RESOLVE

ROOT = Path(__file__).resolve().parents[2]
CONFIG = (
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.3\nrobots_retries = 1\n"
    "[scope]\nmax_depth = 25\n"
)
DEADLINE = 120.0


def gossamer(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "gossamer", *map(str, args)]


def start(*args: str | Path, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        gossamer(*args, "--worker-name", name),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def ctl(server: RedisServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        gossamer("ctl", "--frontier", server.url, *args),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def until(condition: Callable[[], bool], what: str) -> None:
    """Poll a condition that another process makes true, with a deadline."""
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # a short poll of another process's progress, bounded


class Frontier:
    """Where a shared crawl lives for a test: one redis-server, or a three-master cluster
    (``cluster_rig``) whose second master is the one restarted."""

    def __init__(self, server: RedisServer | None, cluster: RedisClusterRig | None) -> None:
        self.server, self.cluster = server, cluster

    @property
    def url(self) -> str:
        return self.server.url if self.server is not None else self.cluster.url  # type: ignore[union-attr]

    def client(self) -> Any:
        if self.cluster is not None:
            return redis.cluster.RedisCluster(host="127.0.0.1", port=self.cluster.ports[0])
        return redis.Redis.from_url(self.url)

    def restart(self) -> None:
        if self.cluster is not None:
            self.cluster.restart(1)
        else:
            self.server.restart(kill=True)  # type: ignore[union-attr]


def worker_pages(server: RedisServer | Frontier, name: str = "crawl") -> dict[str, int]:
    """Each worker's pages at its last heartbeat, read straight from Redis (cheaper than a
    ``gossamer ctl`` process per poll, which a loaded machine makes slow)."""
    client = server.client() if isinstance(server, Frontier) else redis.Redis.from_url(server.url)
    try:
        raw = client.hgetall(crawl_prefix(name) + "workers")
    except redis.RedisError:
        return {}
    finally:
        client.close()
    return {k.decode(): int(json.loads(v)["pages"]) for k, v in raw.items()}


def stored_pages(folder: Path) -> set[str]:
    conn = sqlite3.connect(folder / "crawl.db")
    try:
        rows = conn.execute(
            "SELECT url FROM pages WHERE purpose = 'page' AND status = 200 AND error IS NULL"
        )
        return {url for (url,) in rows}
    finally:
        conn.close()


@pytest.fixture(params=["redis", "cluster"])
def frontier(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """The kill-and-restart test on one Redis and on a three-master Redis Cluster."""
    if request.param == "cluster":
        yield Frontier(None, request.getfixturevalue("redis_cluster"))
        return
    if SERVER is None:
        pytest.skip(MISSING)
    found = RedisServer(tmp_path / "redis")
    found.start()
    yield Frontier(found, None)
    found.stop()


@pytest.fixture
def server(tmp_path: Path) -> RedisServer:
    if SERVER is None:
        pytest.skip(MISSING)
    found = RedisServer(tmp_path / "redis")
    found.start()
    yield found  # type: ignore[misc]
    found.stop()


def test_a_killed_worker_and_a_redis_restart_lose_nothing(
    frontier: Frontier, tmp_path: Path
) -> None:
    """On one Redis, restarted from its AOF; on a cluster, one of three masters restarted
    (the crawl's twelve partitions spread over the three)."""
    server = frontier
    web = build_web(WebSpec(seed=21, hosts=24, pages_per_host=20, latency=0.01))
    (tmp_path / "c.toml").write_text(CONFIG)
    with ThreadedTestWeb(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        # 5 s: long enough that a live worker stalled by a loaded machine keeps its leases
        # (heartbeats every ttl / 3), short enough that w3's hosts come back soon.
        common = ("--frontier", server.url, "--lease-ttl", "5", "--resolve", RESOLVE)
        first = start(
            "crawl", seeds, "--out", tmp_path / "w1", "--config", tmp_path / "c.toml",
            "--concurrency", "4", "--no-progress", *common, name="w1",
        )  # fmt: skip
        until(lambda: bool(worker_pages(server)), "the crawl to be created")
        others = {
            name: start(
                "worker", "--out", tmp_path / name, "--concurrency", "4", *common, name=name
            )
            for name in ("w2", "w3")
        }
        until(lambda: worker_pages(server).get("w3", 0) >= 5, "w3 to crawl some pages")
        others["w3"].send_signal(signal.SIGKILL)
        others["w3"].communicate(timeout=30)
        assert first.poll() is None and others["w2"].poll() is None  # mid-crawl
        server.restart()  # AOF, fsync always: nothing acknowledged is lost
        outputs = {name: proc.communicate(timeout=DEADLINE) for name, proc in
                   (("w1", first), ("w2", others["w2"]))}  # fmt: skip
        assert first.returncode == 0, outputs["w1"][1]
        assert others["w2"].returncode == 0, outputs["w2"][1]
        report = site.report()
    assert report.concurrent_violations == 0
    assert report.crawl_delay_violations == 0
    assert report.robots_violations == 0
    assert report.missing == ()
    # Only what w3 had in flight at the kill may have been fetched again: 4 at most.
    assert report.repeated_fetches <= 4
    if frontier.cluster is not None:  # four partitions a master, spread over the three
        client = frontier.client()
        assert client.hget(crawl_prefix("crawl") + "politeness", "parts") == b"12"
        client.close()
    pages = [stored_pages(tmp_path / name) for name in ("w1", "w2", "w3")]
    assert all(pages[:2])  # the survivors both worked
    assert not pages[0] & pages[1]  # and never on the same page
    for name in ("w1", "w2"):
        assert (tmp_path / name / "reports" / "stats.json").is_file()
        assert list((tmp_path / name / "warc").glob("*.warc.gz"))


def test_ctl_stops_the_crawl_and_crawl_goes_on(server: RedisServer, tmp_path: Path) -> None:
    web = build_web(WebSpec(seed=5, hosts=6, pages_per_host=20, special_hosts=False,
                            latency=0.01))  # fmt: skip
    (tmp_path / "c.toml").write_text(CONFIG.replace("delay = 0.0", "delay = 0.2"))
    with ThreadedTestWeb(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        args = ("crawl", seeds, "--out", tmp_path / "out", "--config", tmp_path / "c.toml",
                "--frontier", server.url, "--resolve", RESOLVE, "--no-progress")  # fmt: skip
        first = start(*args, name="first")
        until(lambda: worker_pages(server).get("first", 0) >= 10, "some pages")
        assert ctl(server, "stop").stdout.strip() == "'crawl' is stopped"
        shown = ctl(server, "status")
        assert shown.returncode == 0
        assert "state: stopped" in shown.stdout and "first" in shown.stdout
        assert "pages/s" in shown.stdout and "beat age" in shown.stdout
        out, err = first.communicate(timeout=DEADLINE)
        assert first.returncode == 3, err  # stopped before its end: it can go on
        assert "stopped: on request" in out
        partial = stored_pages(tmp_path / "out")
        assert partial and len(partial) < len(site.expected())
        again = subprocess.run(
            gossamer(*args), check=False, capture_output=True, text=True, timeout=DEADLINE
        )
        assert again.returncode == 0, again.stderr
        assert "stopped: finished" in again.stdout
        report = site.report()
    assert report.missing == () and report.repeated_fetches == 0
    assert report.concurrent_violations == 0 and report.crawl_delay_violations == 0
    assert stored_pages(tmp_path / "out") > partial  # both runs wrote to the one folder


def test_a_password_protected_redis(tmp_path: Path) -> None:
    if SERVER is None:
        pytest.skip(MISSING)
    guarded = RedisServer(tmp_path / "redis", password="s3cret")
    guarded.start()
    try:
        web = build_web(WebSpec(seed=2, hosts=3, pages_per_host=5, special_hosts=False))
        with ThreadedTestWeb(web) as site:
            seeds = tmp_path / "seeds.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            wrong = guarded.url.replace("s3cret", "wrong")
            base = ("crawl", seeds, "--out", tmp_path / "out", "--resolve", RESOLVE,
                    "--no-progress", "--redis-patience", "0.2", "--delay", "0")  # fmt: skip
            command = gossamer(*base, "--frontier", wrong)
            refused = subprocess.run(
                command, check=False, capture_output=True, text=True, timeout=60, cwd=ROOT
            )
            assert refused.returncode != 0
            assert refused.stderr.strip().splitlines()[-1].startswith("gossamer: error:")
            assert "s3cret" not in refused.stderr and "wrong" not in refused.stderr
            done = subprocess.run(gossamer(*base, "--frontier", guarded.url), check=False,
                                  capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert site.report().missing == ()
    finally:
        guarded.stop()
    assert (tmp_path / "out" / "warc").is_dir()


def test_a_worker_that_loses_redis_stops_with_its_folder_whole(
    server: RedisServer, tmp_path: Path
) -> None:
    web = build_web(WebSpec(seed=8, hosts=6, pages_per_host=80, special_hosts=False,
                            latency=0.01))  # fmt: skip
    (tmp_path / "c.toml").write_text(CONFIG.replace("delay = 0.0", "delay = 0.1"))
    with ThreadedTestWeb(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        crawl = start(
            "crawl", seeds, "--out", tmp_path / "out", "--config", tmp_path / "c.toml",
            "--frontier", server.url, "--resolve", RESOLVE, "--no-progress",
            "--redis-patience", "1", name="lonely",
        )  # fmt: skip
        until(lambda: worker_pages(server).get("lonely", 0) >= 5, "some pages")
        server.stop(kill=True)  # and never back
        _, err = crawl.communicate(timeout=DEADLINE)
    assert crawl.returncode != 0
    lines = err.strip().splitlines()
    assert any("unreachable, retrying" in line for line in lines)
    assert lines[-1].startswith("gossamer: error: Redis at redis://127.0.0.1:")
    assert "unreachable for 1 s" in lines[-1]
    stats = json.loads((tmp_path / "out" / "reports" / "stats.json").read_text())
    assert stats["pages"] == len(stored_pages(tmp_path / "out")) >= 5
    warcio = Path(sys.executable).parent / "warcio"
    for path in (tmp_path / "out" / "warc").glob("*.warc.gz"):
        assert subprocess.run([warcio, "check", str(path)], check=False).returncode == 0


def test_a_redis_behind_tls(tmp_path: Path) -> None:
    if SERVER is None:
        pytest.skip(MISSING)
    secured = RedisServer(tmp_path / "redis", ca_file=tls_files(tmp_path / "tls"))
    secured.start()
    try:
        web = build_web(WebSpec(seed=3, hosts=3, pages_per_host=5, special_hosts=False))
        with ThreadedTestWeb(web) as site:
            seeds = tmp_path / "seeds.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            base = ("crawl", seeds, "--out", tmp_path / "out", "--resolve", RESOLVE,
                    "--no-progress", "--redis-patience", "0.2", "--delay", "0")  # fmt: skip
            untrusted = secured.url.split("?")[0]  # no CA given: the certificate is refused
            refused = subprocess.run(
                gossamer(*base, "--frontier", untrusted),
                check=False, capture_output=True, text=True, timeout=60, cwd=ROOT,
            )  # fmt: skip
            assert refused.returncode != 0
            assert "certificate verify failed" in refused.stderr.strip().splitlines()[-1]
            done = subprocess.run(
                gossamer(*base, "--frontier", secured.url),
                check=False, capture_output=True, text=True, timeout=60, cwd=ROOT,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            assert site.report().missing == ()
    finally:
        secured.stop()


async def _until_status(
    feed: RedisFeed, wanted: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    """The feed's first status that satisfies ``wanted`` (it reads Redis once a second)."""
    async with asyncio.timeout(DEADLINE):
        while not wanted(feed.status):
            await feed.changed(feed.version)
    return feed.status


async def _watch_and_steer(out: Path, url: str, known_seed: str) -> dict[str, Any]:
    app = make_app(out, feed=RedisFeed(AsyncRedis.from_url(url), "crawl"))
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        live = await (await client.get("/crawl/status.json")).json()
        assert live["source"] == "live" and live["state"] == "running"
        assert [row["name"] for row in live["workers"]] == ["first"]
        assert live["totals"]["pages"] >= 5
        feed = app[FEED]
        assert (await feed.command({"cmd": "pause"})) == {"ok": True, "state": "paused"}
        assert (await _until_status(feed, lambda s: s["state"] == "paused"))["queue"] > 0
        reply = await feed.command({"cmd": "add-seeds", "text": f"{known_seed}\nnot a url\n"})
        assert reply["queued"] == [known_seed] and reply["known"] == 1
        assert reply["problems"] == ["line 2: contains whitespace: not a url"]
        assert (await feed.command({"cmd": "stop"}))["ok"]
        final = await _until_status(feed, lambda s: s["state"] == "ended")
        metrics = await (await client.get("/metrics")).text()
    pages = [s.value for f in text_string_to_metric_families(metrics) for s in f.samples
             if s.name == "gossamer_pages_total"]  # fmt: skip
    assert pages == [final["totals"]["pages"]]
    return final


def test_the_crawl_page_follows_and_steers_a_shared_crawl(
    server: RedisServer, tmp_path: Path
) -> None:
    web = build_web(WebSpec(seed=9, hosts=6, pages_per_host=40, special_hosts=False,
                            latency=0.01))  # fmt: skip
    (tmp_path / "c.toml").write_text(CONFIG.replace("delay = 0.0", "delay = 0.2"))
    out = tmp_path / "out"
    with ThreadedTestWeb(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(site.seeds()) + "\n")
        first = start("crawl", seeds, "--out", out, "--config", tmp_path / "c.toml",
                      "--frontier", server.url, "--resolve", RESOLVE, "--no-progress",
                      name="first")  # fmt: skip
        until(lambda: worker_pages(server).get("first", 0) >= 5, "some pages")
        final = asyncio.run(_watch_and_steer(out, server.url, site.seeds()[0]))
        _, err = first.communicate(timeout=DEADLINE)
    assert first.returncode == 3, err  # stopped from the Crawl page: it can go on
    saved = json.loads((out / "reports" / "stats.json").read_text())
    assert final["totals"]["pages"] == saved["pages"] > 0  # the worker's last word
    assert final["workers"][0]["state"] == "ended"


__all__ = ["redis_cluster"]  # the fixture, imported for its use above
