"""Run a check against the web UI of a crawl folder, served on a real loopback socket."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from gossamer.web import PAGE_POLICY, make_app

Client = TestClient[web.Request, web.Application]
Check = Callable[[Client], Awaitable[None]]


def serve_and_check(app_or_folder: web.Application | Path, check: Check) -> None:
    app = make_app(app_or_folder) if isinstance(app_or_folder, Path) else app_or_folder

    async def main() -> None:
        async with TestClient(TestServer(app, host="127.0.0.1")) as client:
            await check(client)

    asyncio.run(main())


def assert_secured(headers: Mapping[str, str]) -> None:
    """The headers every answer of ours carries, error or not."""
    assert headers.get("Content-Security-Policy") == PAGE_POLICY
    assert headers.get("X-Frame-Options") == "DENY"
    assert headers.get("X-Content-Type-Options") == "nosniff"
    assert headers.get("Referrer-Policy") == "no-referrer"
    assert headers.get("Cache-Control") == "no-store"
