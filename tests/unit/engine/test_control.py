"""The control channel: a private socket, JSON lines, pushes to subscribers, a clean end."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gossamer.engine.control import ControlServer
from gossamer.monitor.channel import ChannelError, ask, connect, decode, encode, socket_path

LIMIT = 30.0


class Target:
    """A crawl as the channel sees it: a counter for a status, commands remembered."""

    def __init__(self) -> None:
        self.pages = 0
        self.commands: list[tuple[str, dict[str, Any]]] = []

    def status(self) -> dict[str, Any]:
        return {"state": "running", "pages": self.pages}

    def command(self, cmd: str, message: Mapping[str, Any]) -> dict[str, Any]:
        self.commands.append((cmd, dict(message)))
        return {"ok": cmd != "stop", "state": "paused"}


def run(check: Any) -> None:
    async def main() -> None:
        async with asyncio.timeout(LIMIT):
            await check()

    asyncio.run(main())


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    return decode(await reader.readline())


def test_the_socket_is_private_and_gone_at_the_end(tmp_path: Path) -> None:
    path = socket_path(tmp_path)
    path.write_text("left by a crawl that was killed")

    async def check() -> None:
        async with ControlServer(path, Target()):
            assert stat.S_ISSOCK(path.stat().st_mode)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert (await ask(path, {"cmd": "status"}))["status"] == {
                "state": "running",
                "pages": 0,
            }
        assert not path.exists()
        with pytest.raises(ChannelError):
            await ask(path, {"cmd": "status"})

    run(check)


def test_commands_are_answered_and_bad_lines_refused(tmp_path: Path) -> None:
    target = Target()
    path = socket_path(tmp_path)

    async def check() -> None:
        async with ControlServer(path, target):
            reply = await ask(path, {"cmd": "add-seeds", "text": "a.test"})
            assert reply == {"ok": True, "state": "paused"}
            assert target.commands == [("add-seeds", {"cmd": "add-seeds", "text": "a.test"})]
            assert (await ask(path, {"cmd": "reboot"}))["error"] == "unknown command 'reboot'"
            reader, writer = await connect(path)
            writer.write(b"[1, 2]\n")
            assert (await read_message(reader))["reply"]["ok"] is False
            writer.write(b"not json\n")
            assert (await read_message(reader))["reply"]["ok"] is False
            writer.close()

    run(check)


def test_subscribers_get_a_status_now_on_publish_and_a_last_one(tmp_path: Path) -> None:
    target = Target()
    path = socket_path(tmp_path)

    async def check() -> None:
        server = ControlServer(path, target)
        async with server:
            reader, writer = await connect(path)
            writer.write(encode({"cmd": "subscribe"}))
            assert (await read_message(reader))["status"]["pages"] == 0
            assert server.watched
            target.pages = 5
            server.publish()
            assert (await read_message(reader))["status"]["pages"] == 5
            # A command that changes something is followed by a status at once.
            writer.write(encode({"cmd": "pause"}))
            assert (await read_message(reader))["reply"]["ok"] is True
            assert "status" in await read_message(reader)
            target.pages = 9
        # Closing sends the last status, then ends the connection.
        assert (await read_message(reader))["status"]["pages"] == 9
        assert await reader.readline() == b""
        writer.close()

    run(check)


def test_a_folder_path_too_long_for_a_socket_leaves_the_crawl_unwatched(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    deep = tmp_path / ("d" * 120)
    deep.mkdir()

    async def check() -> None:
        async with ControlServer(socket_path(deep), Target()) as server:
            server.publish()  # nothing to do, and no fault
        assert "no control channel" in caplog.text

    run(check)
