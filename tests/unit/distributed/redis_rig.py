"""A real ``redis-server`` for the shared-frontier tests: own port, own data folder, AOF on.

The tests start it themselves on a free loopback port and stop it; they skip, saying why,
where Debian's ``redis-server`` is not installed (``make redis`` installs it).
"""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from redis.asyncio import Redis as AsyncRedis

from gossamer.config import CrawlConfig, PolitenessConfig
from gossamer.distributed import RedisFrontier

SERVER = shutil.which("redis-server")
MISSING = "redis-server is not installed (apt-get install redis-server, or make redis)"
_START_DEADLINE = 20.0


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports: every socket is held until all are chosen, so the
    system cannot hand the same port out twice (a cluster's nodes and bus ports)."""
    socks = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def tls_files(folder: Path) -> Path:
    """A throwaway CA and a certificate for 127.0.0.1 in ``folder``; the CA's file."""
    import trustme  # noqa: PLC0415 - a development dependency

    folder.mkdir(parents=True, exist_ok=True)
    authority = trustme.CA()
    issued = authority.issue_cert("127.0.0.1")
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    issued.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    authority.cert_pem.write_to_path(str(folder / "ca.pem"))
    return folder / "ca.pem"


class RedisServer:
    """One redis-server process on ``127.0.0.1:port`` keeping its AOF in ``folder``."""

    def __init__(
        self,
        folder: Path,
        *,
        fsync: str = "always",
        password: str = "",
        ca_file: Path | None = None,
    ) -> None:
        """``ca_file``: serve TLS only, with the certificate and key beside it (``tls_files``)."""
        assert SERVER is not None, MISSING
        self.password = password
        self.ca_file = ca_file
        self.folder = folder
        self.port = free_port()
        self.fsync = fsync
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        secret = f":{self.password}@" if self.password else ""
        if self.ca_file is not None:
            return f"rediss://{secret}127.0.0.1:{self.port}/0?ssl_ca_certs={self.ca_file}"
        return f"redis://{secret}127.0.0.1:{self.port}/0"

    def start(self) -> None:
        assert SERVER is not None, MISSING
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [SERVER, "--bind", "127.0.0.1", "--port", str(self.port)]
        if self.ca_file is not None:
            folder = self.ca_file.parent
            command = [SERVER, "--bind", "127.0.0.1", "--port", "0", "--tls-port", str(self.port)]
            command += ["--tls-cert-file", str(folder / "cert.pem"), "--tls-key-file"]
            command += [str(folder / "key.pem"), "--tls-ca-cert-file", str(self.ca_file)]
            command += ["--tls-auth-clients", "no"]
        command += ["--dir", str(self.folder), "--appendonly", "yes"]
        command += ["--appendfsync", self.fsync, "--save", "", "--daemonize", "no"]
        command += ["--logfile", str(self.folder / "redis.log")]
        if self.password:
            command += ["--requirepass", self.password]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Poll PING until the server answers (loading the AOF included), with a deadline."""
        assert self.process is not None
        client = redis.Redis.from_url(self.url, socket_timeout=1.0)
        wait_answers(self.process, client, self.folder / "redis.log", _START_DEADLINE)

    def stop(self, *, kill: bool = False) -> None:
        """SIGTERM (Redis flushes its AOF and exits) or SIGKILL; waits for the process."""
        if self.process is None:
            return
        if kill:
            self.process.kill()
        else:
            self.process.terminate()
        self.process.wait(timeout=30)
        self.process = None

    def restart(self, *, kill: bool = False) -> None:
        self.stop(kill=kill)
        self.start()


_names = itertools.count()


def wait_answers(
    process: subprocess.Popen[bytes], client: redis.Redis, log: Path, limit: float
) -> None:
    """Poll PING on ``client`` until its redis-server answers (its AOF loaded), for at most
    ``limit`` seconds; the server's log in the error if it exits first. Closes ``client``."""
    deadline = time.monotonic() + limit
    try:
        while True:
            if process.poll() is not None:
                said = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server exited at start:\n{said}")
            try:
                if client.ping():
                    return
            except (redis.ConnectionError, redis.BusyLoadingError, redis.TimeoutError):
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.01)  # a short poll of a condition, bounded by the deadline
    finally:
        client.close()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if SERVER is None:
        pytest.skip(MISSING)
    server = RedisServer(tmp_path_factory.mktemp("redis") / "data")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def crawl_name() -> str:
    return f"t{next(_names)}"


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of the test's own, for tests that stop and restart it."""
    if SERVER is None:
        pytest.skip(MISSING)
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(slots=True)
class FakeClock:
    """The frontier clock, moved by hand: lease expiry and delays without waiting."""

    now: float = 1_000.0

    def __call__(self) -> float:
        return self.now


def crawl_config(
    tmp: Path, *, delay: float = 1.0, crawl_delay_cap: float = 30.0, max_backoff: float = 3600.0
) -> CrawlConfig:
    """A crawl tree with the given politeness."""
    polite = PolitenessConfig(delay=delay, crawl_delay_cap=crawl_delay_cap, max_backoff=max_backoff)
    return CrawlConfig(seeds=tmp / "seeds.txt", out=tmp / "out", politeness=polite)


async def created(
    server: RedisServer,
    name: str,
    config: CrawlConfig,
    workers: int = 1,
    *,
    clock: FakeClock | None = None,
    ttl: float = 10.0,
    parts: int | None = None,
) -> list[RedisFrontier]:
    """``workers`` handles (w0, w1, ...) on a new crawl ``name``, each with its own client;
    ``parts``: the frontier's partitions (default: one, as on one Redis)."""
    frontiers = [
        RedisFrontier(AsyncRedis.from_url(server.url), name, f"w{i}", ttl=ttl, clock=clock)
        for i in range(workers)
    ]
    assert await frontiers[0].create(config, parts=parts)
    for joiner in frontiers[1:]:
        await joiner.open()
    return frontiers


async def closed(frontiers: list[RedisFrontier]) -> None:
    for frontier in frontiers:
        await frontier.redis.aclose()
