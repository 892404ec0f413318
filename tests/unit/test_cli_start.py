"""What the real command says first: ``gossamer --version``, and the addresses ``gossamer
serve`` prints as it starts."""

from __future__ import annotations

import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import gossamer
from gossamer.cli.search import serving_lines

from .index.fake_crawl import make_crawl, search_corpus


def test_version_is_printed() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"gossamer {gossamer.__version__}\n"
    assert version("gossamer") == gossamer.__version__  # pyproject takes it from the package


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_says_where_to_open_it(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "crawl", search_corpus())
    port = _free_port()
    with subprocess.Popen(
        [sys.executable, "-m", "gossamer", "serve", str(folder), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            first = [server.stdout.readline(), server.stdout.readline()]
        finally:
            server.terminate()
            server.wait(timeout=60)
    base = f"http://127.0.0.1:{port}"
    assert first == [
        f"gossamer: serving {folder}: search it at {base}/ and follow its crawl at {base}/crawl\n",
        "gossamer: Ctrl-C stops the server\n",
    ]


def test_the_address_shown_is_one_a_browser_can_open() -> None:
    folder = Path("out")
    assert "http://127.0.0.1:80/crawl" in serving_lines(folder, "0.0.0.0", 80)
    assert "http://[::1]:80/ " in serving_lines(folder, "::", 80)
    assert "http://[fd00::5]:80/ " in serving_lines(folder, "fd00::5", 80)
    assert "http://search.example:8000/ " in serving_lines(folder, "search.example", 8000)
