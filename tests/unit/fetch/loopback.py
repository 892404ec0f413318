"""Helpers of the fetch tests: a real aiohttp server on 127.0.0.1, and a stand-in for DNS."""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult


@contextlib.asynccontextmanager
async def serve(
    app: web.Application, *, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[int]:
    """Serve ``app`` on a free loopback port; yields the port."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
        await site.start()
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


class StubResolver(AbstractResolver):
    """Stands in for the system's DNS: known names get their address, others fail as NXDOMAIN."""

    def __init__(self, answers: dict[str, str]) -> None:
        self._answers = answers

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        address = self._answers.get(host)
        if address is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None
