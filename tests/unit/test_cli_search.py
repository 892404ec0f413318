"""The index, rank, search and serve subcommands, as ``gossamer.cli.search`` wires them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gossamer.cli.search import add_parsers

from .index.fake_crawl import make_crawl, search_corpus


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gossamer")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("crawl")
    add_parsers(sub)
    return parser.parse_args(argv)


def run_command(args: argparse.Namespace) -> int | None:
    """What ``gossamer.cli.main`` runs for ``args``; None when no subcommand module claimed it."""
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    return None if run is None else run(args)


def test_index_rank_search_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = make_crawl(tmp_path / "crawl", search_corpus())
    assert run_command(parse("index", str(folder), "--workers", "1")) == 0
    assert "indexed:" in capsys.readouterr().out
    assert run_command(parse("rank", str(folder))) == 0
    assert "iterations" in capsys.readouterr().out
    assert run_command(parse("search", str(folder), "write ahead", "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hits"][0]["url"] == "http://a.test/wal"
    assert run_command(parse("search", str(folder), "write ahead", "--pagerank-weight", "0")) == 0
    text = capsys.readouterr().out
    assert "1. Write-ahead logging" in text
    assert run_command(parse("search", str(folder), "hostile")) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_flags_are_checked_and_other_commands_left_alone() -> None:
    with pytest.raises(SystemExit):
        parse("search", "dir", "q", "--page", "0")
    with pytest.raises(SystemExit):
        parse("serve", "dir", "--port", "70000")
    with pytest.raises(SystemExit):
        parse("search", "dir", "q", "--pagerank-weight", "-1")
    args = parse("serve", "dir")
    assert (args.bind, args.port) == ("127.0.0.1", 8000)
    assert run_command(parse("crawl")) is None
