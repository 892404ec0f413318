"""The page target of a crawl shared through Redis is exact: two worker processes, each with
several fetches in flight, store ``--max-pages`` pages between them, not one more (the
LEASE script reserves a page of the target per lease; a lease that stores none gives it
back), and the crawl still ends by itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from tests.unit.distributed.redis_rig import MISSING, SERVER, RedisServer

from .conftest import RESOLVE
from .test_shared_crawl import CONFIG, DEADLINE, start, stored_pages, until, worker_pages

TARGET = 30


def test_two_workers_store_exactly_the_page_target(tmp_path: Path) -> None:
    if SERVER is None:
        pytest.skip(MISSING)
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        web = build_web(WebSpec(seed=9, hosts=10, pages_per_host=12, latency=0.02))
        (tmp_path / "c.toml").write_text(CONFIG)
        with ThreadedTestWeb(web) as site:
            seeds = tmp_path / "seeds.txt"
            seeds.write_text("\n".join(site.seeds()) + "\n")
            common = ("--frontier", server.url, "--resolve", RESOLVE, "--concurrency", "6")
            first = start(
                "crawl", seeds, "--out", tmp_path / "w1", "--config", tmp_path / "c.toml",
                "--max-pages", str(TARGET), "--no-progress", *common, name="w1",
            )  # fmt: skip
            until(lambda: bool(worker_pages(server)), "the crawl to be created")
            second = start("worker", "--out", tmp_path / "w2", *common, name="w2")
            ends = {name: proc.communicate(timeout=DEADLINE) for name, proc in
                    (("w1", first), ("w2", second))}  # fmt: skip
    finally:
        server.stop()
    assert first.returncode == 0, ends["w1"][1]
    assert second.returncode == 0, ends["w2"][1]
    counted = [
        json.loads((tmp_path / name / "reports" / "stats.json").read_text())["pages"]
        for name in ("w1", "w2")
    ]
    assert sum(counted) == TARGET, counted
    stored = [stored_pages(tmp_path / name) for name in ("w1", "w2")]
    assert len(stored[0] | stored[1]) == sum(map(len, stored)) <= TARGET
