"""Steering posts: the CSRF token always, the control token off loopback, then the crawl.

The crawl is stood in for by a ``ControlServer`` on the folder's socket, served on the test's
own loop, so each post that passes the checks is seen arriving as a command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gossamer.engine.control import ControlServer
from gossamer.monitor.channel import socket_path
from gossamer.web import make_app

from ..index.fake_crawl import make_crawl, search_corpus
from .served import Client, serve_and_check

TOKEN = "a-control-token-of-some-length"
JSON = {"Accept": "application/json"}


class Crawl:
    def __init__(self) -> None:
        self.commands: list[dict[str, Any]] = []

    def status(self) -> dict[str, Any]:
        return {"source": "live", "state": "running", "totals": {"pages": 3}, "workers": []}

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        self.commands.append(dict(message))
        if cmd == "add-seeds":
            return {"ok": True, "queued": ["https://new.test/"], "known": 1, "problems": []}
        return {"ok": True, "state": "paused"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A crawl folder with no index: as while it is being crawled."""
    return make_crawl(tmp_path_factory.mktemp("steer") / "crawl", search_corpus())


async def csrf_of(client: Client) -> str:
    page = await (await client.get("/crawl")).text()
    match = re.search(r'name="csrf" value="([^"]+)"', page)
    assert match is not None
    return match.group(1)


def test_on_loopback_a_post_with_the_page_token_reaches_the_crawl(folder: Path) -> None:
    crawl = Crawl()

    async def check(client: Client) -> None:
        csrf = await csrf_of(client)
        async with ControlServer(socket_path(folder), crawl):
            refused = await client.post("/crawl/pause", data={"csrf": "guess"}, headers=JSON)
            assert refused.status == 403
            assert "reload the page" in (await refused.json())["message"]
            assert crawl.commands == []
            done = await client.post("/crawl/pause", data={"csrf": csrf}, headers=JSON)
            assert done.status == 200
            assert await done.json() == {"ok": True, "message": "Done: the crawl is paused."}
            seeds = await client.post(
                "/crawl/seeds", data={"csrf": csrf, "seeds": "new.test\nold.test"}, headers=JSON
            )
            assert "1 seed(s) queued, 1 already known" in (await seeds.json())["message"]
            # Another site's page cannot post here even if it had the token.
            foreign = await client.post(
                "/crawl/stop",
                data={"csrf": csrf},
                headers={**JSON, "Origin": "http://evil.test"},
            )
            assert foreign.status == 403
        assert crawl.commands == [
            {"cmd": "pause"},
            {"cmd": "add-seeds", "text": "new.test\nold.test"},
        ]
        gone = await client.post("/crawl/resume", data={"csrf": csrf}, headers=JSON)
        assert gone.status == 409
        assert (await gone.json())["message"] == "No crawl is running in this folder."

    serve_and_check(make_app(folder), check)


def test_only_this_servers_scheme_host_and_port_may_post(folder: Path) -> None:
    """A page served by another program on another port of the same address is another
    origin: with the token it must still be refused."""
    crawl = Crawl()

    async def check(client: Client) -> None:
        csrf = await csrf_of(client)
        port = client.port
        assert port is not None
        async with ControlServer(socket_path(folder), crawl):
            for origin in (
                f"http://127.0.0.1:{port + 1}",
                "http://127.0.0.1",
                f"https://127.0.0.1:{port}",
                f"http://localhost:{port}",
                f"http://127.0.0.1:{port}/x",
                "null",
            ):
                refused = await client.post(
                    "/crawl/pause", data={"csrf": csrf}, headers={**JSON, "Origin": origin}
                )
                assert refused.status == 403, origin
            assert crawl.commands == []
            for origin in (f"http://127.0.0.1:{port}", f"HTTP://127.0.0.1:{port}/"):
                done = await client.post(
                    "/crawl/pause", data={"csrf": csrf}, headers={**JSON, "Origin": origin}
                )
                assert done.status == 200, origin
        assert crawl.commands == [{"cmd": "pause"}, {"cmd": "pause"}]

    serve_and_check(make_app(folder), check)


def test_bound_beyond_loopback_without_a_token_every_post_is_refused(folder: Path) -> None:
    crawl = Crawl()

    async def check(client: Client) -> None:
        page = await (await client.get("/crawl")).text()
        assert "Steering is off" in page and 'name="csrf"' not in page
        async with ControlServer(socket_path(folder), crawl):
            for action in ("pause", "resume", "stop", "seeds"):
                answer = await client.post(f"/crawl/{action}", data={"seeds": "x.test"})
                assert answer.status == 403, action
                assert "--control-token" in await answer.text()
        assert crawl.commands == []

    serve_and_check(make_app(folder, bind="0.0.0.0"), check)


def test_bound_beyond_loopback_the_control_token_is_required(folder: Path) -> None:
    crawl = Crawl()

    async def check(client: Client) -> None:
        csrf = await csrf_of(client)
        page = await (await client.get("/crawl")).text()
        assert 'name="token"' in page
        async with ControlServer(socket_path(folder), crawl):
            for token in ("", "wrong", TOKEN[:-1]):
                answer = await client.post(
                    "/crawl/stop", data={"csrf": csrf, "token": token}, headers=JSON
                )
                assert answer.status == 403
                assert (await answer.json())["message"] == "Wrong or missing control token."
            answer = await client.post(
                "/crawl/stop", data={"csrf": csrf, "token": TOKEN}, headers=JSON
            )
            assert answer.status == 200
        assert crawl.commands == [{"cmd": "stop"}]

    serve_and_check(make_app(folder, bind="0.0.0.0", control_token=TOKEN), check)


def test_a_post_without_the_script_gets_a_page(folder: Path) -> None:
    async def check(client: Client) -> None:
        answer = await client.post("/crawl/pause", data={"csrf": "x"})
        assert answer.status == 403
        assert answer.content_type == "text/html"
        assert '<a href="/crawl">Back</a>' in await answer.text()
        assert (await client.post("/crawl/reboot", data={})).status == 404

    serve_and_check(make_app(folder), check)
