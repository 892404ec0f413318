"""``--http2`` against a local HTTP/2 server: hypercorn serving a tiny ASGI site over TLS.

The server notes the HTTP version of every request it answers (the ASGI scope's
``http_version``), so the test knows the crawl spoke HTTP/2 and not HTTP/1.1; the WARC files
must pass warcio's digest checks and hold their responses in HTTP/1.1 form.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.cli import main
from gossamer.config import FetchConfig
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve

from .loopthread import LoopThread

hypercorn = pytest.importorskip("hypercorn", reason="hypercorn (dev extra) serves the h2 site")
pytest.importorskip("httpcore", reason="the http2 extra (httpcore, h2) is not installed")
trustme = pytest.importorskip("trustme", reason="trustme (dev extra) makes the certificates")

from hypercorn.asyncio import serve  # noqa: E402
from hypercorn.config import Config  # noqa: E402

HOST = "h2.web.test"
PAGES = {
    "/": b'<html><body><a href="/a">a</a> <a href="/b">b</a></body></html>',
    "/a": b'<html><body><p>page a</p><a href="/b">b</a></body></html>',
    "/b": b"<html><body><p>page b</p>" + b"x" * 40_000 + b"</body></html>",
}

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Site:
    """The ASGI app: three linked pages, no robots.txt; it keeps what it was asked, and how."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []  # (path, http_version)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.seen.append((path, scope["http_version"]))
        body = PAGES.get(path)
        status, kind = (200, b"text/html") if body is not None else (404, b"text/plain")
        body = body if body is not None else b"not here"
        headers = [(b"content-type", kind)]
        if path != "/b":  # /b's length is told by its end only: the cap must hold while reading
            headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the server's key and certificate chain, the CA file the crawler trusts)."""
    folder = tmp_path_factory.mktemp("h2tls")
    authority = trustme.CA()
    issued = authority.issue_cert(HOST)
    pem = folder / "server.pem"
    issued.private_key_and_cert_chain_pem.write_to_path(str(pem))
    ca_file = folder / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    return pem, ca_file


def _server(site: Site, pem: Path, alpn: list[str]) -> Callable[[], Any]:
    @asynccontextmanager
    async def running() -> AsyncIterator[int]:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        listener.set_inheritable(True)
        config = Config()
        config.bind = [f"fd://{listener.fileno()}"]
        config.certfile = config.keyfile = str(pem)
        config.alpn_protocols = alpn
        config.accesslog = config.errorlog = None
        stop = asyncio.Event()
        task = asyncio.create_task(serve(site, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        # hypercorn listens on the socket given: it accepts from the moment it runs.
        try:
            yield listener.getsockname()[1]
        finally:
            stop.set()
            await task
            listener.detach()  # hypercorn took the descriptor over, and closed it

    return running


def _crawl(tmp: Path, port: int, ca_file: Path, *flags: str) -> Path:
    seeds = tmp / "seeds.txt"
    seeds.write_text(f"https://{HOST}:{port}/\n", encoding="utf-8")
    out = tmp / "out"
    argv = ["crawl", str(seeds), "--out", str(out), "--resolve", f"{HOST}:127.0.0.1"]
    argv += [
        "--ca-file",
        str(ca_file),
        "--no-progress",
        "--no-sitemaps",
        "--delay",
        "0",
        "--workers",
        "1",
        *flags,
    ]
    assert main(argv) == 0
    return out


def _records(out: Path) -> list[Any]:
    """Every record of the crawl's WARC files, which ``warcio check`` passes, read with
    warcio's digest checks on."""
    records = []
    files = sorted(out.rglob("*.warc.gz"))
    assert files
    check = subprocess.run(
        [sys.executable, "-m", "warcio.cli", "check", "-v", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    for path in files:
        data = path.read_bytes()
        for record in ArchiveIterator(BytesIO(data), check_digests="raise"):
            record.content_stream().read()  # the digests are checked as the block is read
            records.append(record)
    return records


def test_http2_crawl_archives_valid_http11_form_records(
    tmp_path: Path, certificates: tuple[Path, Path]
) -> None:
    pem, ca_file = certificates
    site = Site()
    with LoopThread(_server(site, pem, ["h2", "http/1.1"])) as port:
        out = _crawl(tmp_path, port, ca_file, "--http2")
    assert {path for path, _ in site.seen} == {"/robots.txt", "/", "/a", "/b"}
    assert {version for _, version in site.seen} == {"2"}  # every request spoke HTTP/2
    responses = [r for r in _records(out) if r.rec_type == "response"]
    assert {r.rec_headers.get_header("WARC-Target-URI").split(str(port))[1] for r in responses} >= {
        "/",
        "/a",
        "/b",
    }
    for record in responses:
        assert record.http_headers.protocol == "HTTP/1.1"  # the status line's form
        assert record.http_headers.get_statuscode() in {"200", "404"}
        assert record.rec_headers.get_header("WARC-IP-Address") == "127.0.0.1"
        assert record.rec_headers.get_header("WARC-Protocol") == "h2"  # what was spoken
    big = next(r for r in responses if r.rec_headers.get_header("WARC-Target-URI").endswith("/b"))
    assert big.http_headers.get_header("content-type") == "text/html"


def test_a_server_without_h2_is_spoken_to_in_http11(
    tmp_path: Path, certificates: tuple[Path, Path]
) -> None:
    pem, ca_file = certificates
    site = Site()
    with LoopThread(_server(site, pem, ["http/1.1"])) as port:
        out = _crawl(tmp_path, port, ca_file, "--http2")
    assert {version for _, version in site.seen} == {"1.1"}
    assert len([r for r in _records(out) if r.rec_type == "response"]) == 4


@pytest.mark.parametrize(
    ("flags", "table", "spoken"),
    [((), "http2 = true", "2"), (("--http2",), "http2 = false", "1.1")],
)
def test_a_site_rule_chooses_the_transport_for_its_host(
    tmp_path: Path,
    certificates: tuple[Path, Path],
    flags: tuple[str, ...],
    table: str,
    spoken: str,
) -> None:
    pem, ca_file = certificates
    config = tmp_path / "c.toml"
    config.write_text(f'[[site]]\nmatch = "{HOST}"\n{table}\n', encoding="utf-8")
    site = Site()
    with LoopThread(_server(site, pem, ["h2", "http/1.1"])) as port:
        out = _crawl(tmp_path, port, ca_file, "--config", str(config), *flags)
    assert {version for _, version in site.seen} == {spoken}
    assert len([r for r in _records(out) if r.rec_type == "response"]) == 4


def test_the_size_cap_and_the_guard_hold_over_http2(
    tmp_path: Path, certificates: tuple[Path, Path]
) -> None:
    pem, ca_file = certificates
    site = Site()
    fetch_config = FetchConfig()
    limits = FetchLimits(
        connect_timeout=fetch_config.connect_timeout,
        read_timeout=fetch_config.read_timeout,
        total_timeout=fetch_config.total_timeout,
        max_body=10_000,
        max_decoded=fetch_config.max_decoded,
        keep_types=fetch_config.keep_types,
    )

    async def fetch(port: int) -> tuple[Any, Any, Any]:
        async with Fetcher(
            user_agent="gossamer-test",
            limits=limits,
            resolve=(parse_resolve(f"{HOST}:127.0.0.1"),),
            allow_private=False,
            connections=4,
            ca_file=str(ca_file),
            http2=True,
        ) as fetcher:
            big = await fetcher.fetch(f"https://{HOST}:{port}/b")
            small = await fetcher.fetch(f"https://{HOST}:{port}/a")
            # A name no rule maps, on loopback: refused by the guard, no connection made.
            guarded = await fetcher.fetch(f"https://localhost:{port}/a")
            return big, small, guarded

    with LoopThread(_server(site, pem, ["h2", "http/1.1"])) as port:
        big, small, guarded = asyncio.run(fetch(port))
    assert big.error == "too_large" and big.truncated and len(big.body) == 10_000
    assert small.status == 200 and small.extra == {"protocol": "h2"}
    assert small.http_version == "1.1" and small.remote_ip == "127.0.0.1"
    assert dict(small.request_headers)["Host"] == f"{HOST}:{port}"
    assert guarded.status == 0 and guarded.error == "blocked_address"
    assert [path for path, _ in site.seen] == ["/b", "/a"]
