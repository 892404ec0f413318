"""``gossamer ctl`` on a shared crawl says what is true: a worker silent past the lease TTL is
gone, its hosts wait for takeover and the leased total is the sum of the rows; ``add-seeds``
names its bad lines by number as ``crawl`` does; ``resume`` with no live worker says so and
what to do. The crawl's state is made through the real frontier scripts (a silent worker is a
handle whose injected clock is a minute behind Redis's), so no worker runs and nothing waits."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.cli import main
from gossamer.distributed import Leased, RedisFrontier
from gossamer.frontier.hosts import Job
from tests.unit.distributed.redis_rig import (
    FakeClock,
    RedisServer,
    closed,
    crawl_config,
    crawl_name,  # noqa: F401 - a fixture
    created,
    redis_server,  # noqa: F401 - a fixture
)

TTL = 10.0


def ctl(
    capsys: pytest.CaptureFixture[str], server: RedisServer, name: str, *args: str
) -> tuple[int, str, str]:
    """``gossamer ctl`` in this process: (exit status, stdout, stderr)."""
    capsys.readouterr()
    code = main(["ctl", "--frontier", server.url, "--name", name, "--lease-ttl", "10s", *args])
    out, err = capsys.readouterr()
    return code, out, err


async def crawl_with(server: RedisServer, name: str, tmp: Path, *, dead: bool, live: bool) -> None:
    """A crawl of three hosts: one leased by a worker silent for a minute (``dead``), one by
    a worker that has just beaten (``live``)."""
    [front] = await created(server, name, crawl_config(tmp), ttl=TTL)
    await front.add(Job(url=f"http://{h}.test/", host=f"{h}.test") for h in "abc")
    if live:
        assert isinstance(await front.lease(), Leased)
        await front.heartbeat({"pages": 4, "errors": 0})
    if dead:
        seconds, micros = await front.redis.time()
        clock = FakeClock(seconds + micros / 1e6 - 60.0)
        gone = RedisFrontier(front.redis, name, "killed", ttl=TTL, clock=clock)
        assert isinstance(await gone.lease(), Leased)
        await gone.heartbeat({"pages": 9, "errors": 2})
    await closed([front])


def test_status_shows_a_killed_worker_gone_and_its_hosts_waiting(
    redis_server: RedisServer,  # noqa: F811 - the fixture
    crawl_name: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asyncio.run(crawl_with(redis_server, crawl_name, tmp_path, dead=True, live=True))
    code, out, err = ctl(capsys, redis_server, crawl_name, "status", "--json")
    assert code == 0, err
    found = json.loads(out)
    rows = {row["worker"]: row for row in found["workers"]}
    assert (rows["killed"]["state"], rows["killed"]["hosts_takeover"]) == ("gone", 1)
    assert (rows["w0"]["state"], rows["w0"]["hosts_leased"]) == ("working", 1)
    assert found["leased_hosts"] == sum(row["hosts_leased"] for row in rows.values()) == 1
    assert (found["takeover_hosts"], found["workers_alive"]) == (1, 1)
    text = ctl(capsys, redis_server, crawl_name, "status")[1]
    assert "1 waiting for takeover from gone workers; 1 of 2 workers alive" in text
    assert any(line.startswith("killed") and " gone " in line for line in text.splitlines())
    resumed = ctl(capsys, redis_server, crawl_name, "resume")  # a worker is alive: that is all
    assert resumed[1].strip() == f"{crawl_name!r} is running"


def test_resume_says_when_no_worker_is_alive(
    redis_server: RedisServer,  # noqa: F811
    crawl_name: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asyncio.run(crawl_with(redis_server, crawl_name, tmp_path, dead=True, live=False))
    code, out, err = ctl(capsys, redis_server, crawl_name, "resume")
    assert code == 0, err
    said = out.strip()
    assert said.startswith(f"{crawl_name!r} is running, but no worker is alive"), said
    assert f"gossamer worker --frontier {redis_server.url} --name {crawl_name} --out" in said


def test_add_seeds_names_its_bad_lines_as_crawl_does(
    redis_server: RedisServer,  # noqa: F811
    crawl_name: str,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    asyncio.run(crawl_with(redis_server, crawl_name, tmp_path, dead=False, live=False))
    seeds = tmp_path / "more.txt"
    seeds.write_text("http://d.test/\nftp://e.test/\n# a comment\nhttp://a.test/\nnot a url\n")
    with caplog.at_level(logging.WARNING):
        code, out, err = ctl(capsys, redis_server, crawl_name, "add-seeds", str(seeds))
    assert code == 0, err  # good lines were queued: as for crawl, exit 0
    assert out.strip() == f"1 new seed URLs queued in {crawl_name!r}; 2 lines ignored"
    warned = [r.getMessage() for r in caplog.records if "seeds line" in r.getMessage()]
    assert len(warned) == 2
    assert warned[0].startswith("seeds line 2 ignored (") and "ftp://e.test/" in warned[0]
    assert warned[1].startswith("seeds line 5 ignored (") and "not a url" in warned[1]
    seeds.write_text("ftp://e.test/\n")
    code, out, err = ctl(capsys, redis_server, crawl_name, "add-seeds", str(seeds))
    assert code == 2  # no usable line at all: as for crawl, a bad-seed error
    assert "bad seed: no valid seed" in err and "line 1" in err
