"""A proxy that fails is the route's fault: a stand-in proxy on loopback answers every request
(and every CONNECT) with the status a test gives it, and records what it was sent."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.fetch.result import FetchResult

from .loopback import StubResolver

LIMITS = FetchLimits(5.0, 5.0, 10.0, 100_000, 200_000, ("text/html",))
TARGET = "example.test"  # mapped by --resolve: the guard lets it through
RULES = (parse_resolve(f"{TARGET}:127.0.0.1"),)


@asynccontextmanager
async def answering(status: str, heads: list[bytes]) -> AsyncIterator[int]:
    """A proxy that reads a request head, keeps it in ``heads`` and answers ``status``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


def _fetch(
    status: str, url: str, proxy: str, answers: dict[str, str] | None = None
) -> tuple[FetchResult, list[bytes]]:
    heads: list[bytes] = []

    async def scenario() -> FetchResult:
        async with answering(status, heads) as port:
            fetcher = Fetcher(
                user_agent="t/1",
                limits=LIMITS,
                resolve=RULES,
                allow_private=False,
                connections=2,
                system_resolver=StubResolver(answers or {}),
                proxy_for=lambda _: proxy.format(port=port),
            )
            async with fetcher:
                return await fetcher.fetch(url)

    return asyncio.run(scenario()), heads


def test_a_407_to_a_plain_request_is_a_proxy_error_and_the_password_stays_hidden() -> None:
    result, heads = _fetch(
        "407 Proxy Authentication Required",
        f"http://{TARGET}/page",
        "http://alice:s3cret@127.0.0.1:{port}",
    )
    assert (result.status, result.error) == (0, "proxy_error")
    assert "407" in result.error_detail and "s3cret" not in result.error_detail
    credentials = base64.b64encode(b"alice:s3cret").decode()
    assert f"Proxy-Authorization: Basic {credentials}".encode() in heads[0]
    assert heads[0].startswith(f"GET http://{TARGET}/page HTTP/1.1".encode())


@pytest.mark.parametrize("status", ["503 Service Unavailable", "407 Proxy Authentication Required"])
def test_a_connect_refused_by_the_proxy_is_a_proxy_error(status: str) -> None:
    result, heads = _fetch(status, f"https://{TARGET}/", "http://127.0.0.1:{port}")
    assert result.error == "proxy_error"
    assert heads[0].startswith(f"CONNECT {TARGET}:443 HTTP/1.1".encode())


def test_a_proxy_name_on_a_private_address_is_trusted_and_one_that_fails_is_the_routes() -> None:
    reached, heads = _fetch(
        "407 Proxy Authentication Required",
        f"http://{TARGET}/",
        "http://proxy.corp.test:{port}",
        answers={"proxy.corp.test": "127.0.0.1"},
    )
    assert reached.error == "proxy_error" and heads  # asked, not refused as blocked_address
    lost, heads = _fetch("200 OK", f"http://{TARGET}/", "http://proxy.invalid:{port}")
    assert lost.error == "proxy_error" and "proxy.invalid" in lost.error_detail
    assert heads == []
