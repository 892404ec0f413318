"""The ways a user runs one crawl, for tests that hold every mode to the same promises.

``one``: ``gossamer crawl --workers 1``; ``workers``: ``--workers 2`` (the default mode on a
two-core machine is one worker per core); ``shared``: ``gossamer crawl --frontier redis://``
with a second process joining by ``gossamer worker``, on a real ``redis-server`` started for
the test; ``cluster``: the same on a real three-master Redis Cluster (``redis+cluster://``,
the crawl in 12 partitions), one per test module, emptied before each test. Every mode runs
the real command line in child processes, as a user would.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.unit.distributed.cluster_rig import RedisClusterRig
from tests.unit.distributed.redis_rig import MISSING, SERVER, RedisServer

from .conftest import RESOLVE

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 180.0


def gossamer(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "gossamer", *map(str, args)]


@dataclass(frozen=True, slots=True)
class Finished:
    """What the crawl's processes left: exit statuses, output, and their folders (a shared
    crawl has one folder per process; the first is the one ``crawl`` wrote)."""

    codes: tuple[int, ...]
    stdout: str
    stderr: str
    folders: tuple[Path, ...]

    @property
    def out(self) -> Path:
        return self.folders[0]


@dataclass
class Mode:
    name: str
    redis: RedisServer | None = None
    started: list[subprocess.Popen[str]] = field(default_factory=list)
    cluster: RedisClusterRig | None = None

    @property
    def url(self) -> str:
        """The ``--frontier`` of a shared crawl (``shared`` or ``cluster``)."""
        if self.cluster is not None:
            return self.cluster.url
        assert self.redis is not None
        return self.redis.url

    def command(self, seeds: Path, out: Path, *flags: str | Path) -> list[str]:
        base = ["crawl", seeds, "--out", out, "--resolve", RESOLVE, "--no-progress", *flags]
        if self.name == "one":
            return gossamer(*base, "--workers", "1")
        if self.name == "workers":
            return gossamer(*base, "--workers", "2")
        return gossamer(*base, "--frontier", self.url, "--worker-name", "first")

    def start(self, seeds: Path, out: Path, *flags: str | Path) -> list[subprocess.Popen[str]]:
        """The crawl's processes, running (for tests that signal them)."""
        procs = [self._popen(self.command(seeds, out, *flags))]
        if self.name in ("shared", "cluster"):
            joiner = gossamer(
                "worker", "--out", out.with_name(out.name + "-2"), "--frontier", self.url,
                "--resolve", RESOLVE, "--no-progress", "--worker-name", "second",
                *_own(flags),
            )  # fmt: skip
            procs.append(self._popen(joiner))
        return procs

    def run(self, seeds: Path, out: Path, *flags: str | Path) -> Finished:
        return self.wait(self.start(seeds, out, *flags), out)

    def wait(self, procs: list[subprocess.Popen[str]], out: Path) -> Finished:
        outputs = [proc.communicate(timeout=DEADLINE) for proc in procs]
        folders = [out] + ([out.with_name(out.name + "-2")] if len(procs) > 1 else [])
        return Finished(
            tuple(proc.returncode for proc in procs),
            "".join(o for o, _ in outputs),
            "".join(e for _, e in outputs),
            tuple(folders),
        )

    def _popen(self, command: list[str]) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.started.append(proc)
        return proc


def _own(flags: tuple[str | Path, ...]) -> list[str | Path]:
    """The flags a joining worker takes as its own (the crawl's settings come from Redis)."""
    own = ("--resolve", "--concurrency", "--ca-file", "--time", "--proxy", "--cookies")
    return [item for i in range(len(flags) - 1) if flags[i] in own for item in flags[i : i + 2]]


def mode_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mode]:
    """The body of a ``mode`` fixture parametrised by mode name."""
    name: str = request.param
    server = None
    if name == "shared":
        if SERVER is None:
            pytest.skip(MISSING)
        server = RedisServer(tmp_path / "redis")
        server.start()
    mode = Mode(name, server)
    if name == "cluster":
        rig: RedisClusterRig = request.getfixturevalue("redis_cluster")
        rig.flush()  # each test a new crawl named "crawl"
        mode = Mode(name, cluster=rig)
    try:
        yield mode
    finally:
        for proc in mode.started:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        if server is not None:
            server.stop()
