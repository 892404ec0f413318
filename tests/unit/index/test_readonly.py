"""Searching and serving a crawl folder this process may not write (a read-only mount).

As root, permissions do not stop writes, so the folder is mounted read-only in a private
mount namespace (``unshare -m``) for the child process only; as another user, the folder's
write permission is removed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gossamer.index import build_index

from .fake_crawl import make_crawl, search_corpus

Runner = Callable[..., subprocess.CompletedProcess[str]]

SERVE_ONE_PAGE = """
import asyncio, sys
from pathlib import Path
from aiohttp.test_utils import TestClient, TestServer
from gossamer.web import make_app

async def main() -> None:
    async with TestClient(TestServer(make_app(Path(sys.argv[1])), host="127.0.0.1")) as client:
        response = await client.get("/search", params={"q": "write ahead"})
        print(response.status, "Write-ahead logging" in await response.text())
        for path in ("/info", "/cached"):
            response = await client.get(path, params={"url": "http://a.test/", "q": "wal"})
            print(response.status)

asyncio.run(main())
"""


def _can_unshare() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def readonly_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Runner]]:
    folder = make_crawl(tmp_path_factory.mktemp("ro") / "crawl", search_corpus())
    build_index(folder)
    if os.geteuid() == 0:
        if not _can_unshare():
            pytest.skip("running as root without 'unshare -m': cannot make a read-only folder")

        def runner(*argv: str) -> subprocess.CompletedProcess[str]:
            where = shlex.quote(str(folder))
            mount = f"mount --bind {where} {where} && mount -o remount,bind,ro {where}"
            command = shlex.join(argv)
            return subprocess.run(
                ["unshare", "-m", "sh", "-c", f"{mount} && exec {command}"],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )

        yield folder, runner
        return
    modes = {path: path.stat().st_mode for path in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))

    def plain(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)

    try:
        yield folder, plain
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def test_search_on_a_readonly_folder(readonly_runner: tuple[Path, Runner]) -> None:
    folder, runner = readonly_runner
    before = _tree(folder)
    result = runner(sys.executable, "-m", "gossamer", "search", str(folder), "write ahead")
    assert result.returncode == 0, result.stderr
    assert "Write-ahead logging" in result.stdout
    assert _tree(folder) == before


def test_the_web_ui_on_a_readonly_folder(readonly_runner: tuple[Path, Runner]) -> None:
    folder, runner = readonly_runner
    result = runner(sys.executable, "-c", SERVE_ONE_PAGE, str(folder))
    assert result.returncode == 0, result.stderr
    # Search, page info and the cached copy all read crawl.db and the WARC files read-only.
    assert result.stdout.split() == ["200", "True", "200", "200"]
