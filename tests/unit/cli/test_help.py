"""What ``--help`` tells a newcomer: what Gossamer does, every option explained with its
default, one name for the crawl folder, and no study jargon; ``-v`` on either side of the
command; log lines that read like the CLI's own."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from gossamer.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


COMMANDS = sorted(_commands())


def _sub(name: str) -> argparse.ArgumentParser:
    return _commands()[name]


def _help(*words: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", *words, "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_the_main_help_describes_the_tool_and_its_exit_statuses() -> None:
    text = _help()
    assert text.splitlines()[2].startswith("Gossamer crawls web sites")
    assert "Command-line entry point" not in text and "``" not in text
    assert "3 a crawl stopped before its end" in " ".join(text.split())


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_help_and_no_jargon(command: str) -> None:
    parser = _sub(command)
    for action in parser._actions:
        assert action.help, f"{command} {action.option_strings or action.dest} has no help"
    text = parser.format_help()
    assert "seed 0" not in text and "seeds 0" not in text


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("index", ["index", "x"]),
        ("rank", ["rank", "x"]),
        ("search", ["search", "x", "q"]),
        ("serve", ["serve", "x"]),
        ("recover", ["recover", "x"]),
        ("export-tree", ["export-tree", "x"]),
    ],
)
def test_the_crawl_folder_is_dir_everywhere(command: str, words: list[str]) -> None:
    usage = _sub(command).format_usage()
    assert " DIR" in usage and "folder" not in usage
    assert build_parser().parse_args(words).dir.name == "x"


def test_defaults_are_shown() -> None:
    assert "(default: 8000)" in _sub("serve").format_help()
    assert "(default: 0.85)" in _sub("rank").format_help()
    assert "(default: 1)" in _sub("search").format_help()  # --page
    crawl = " ".join(_help("crawl").split())
    assert "(default: one per usable core)" in crawl
    assert "exit status: 0 when the crawl ended" in crawl and "3 when it was stopped" in crawl


def test_ctl_lists_no_worker_options() -> None:
    text = _sub("ctl").format_help()
    assert "--lease-ttl" in text
    assert "--redis-patience" not in text and "--worker-name" not in text
    worker = _sub("worker").format_help()
    assert "--redis-patience" in worker and "--worker-name" in worker


@pytest.mark.parametrize(
    ("words", "level"),
    [
        (["-v", "rank", "x"], 1),
        (["rank", "x", "-v"], 1),
        (["rank", "-vv", "x"], 2),
        (["-v", "crawl", "s", "--out", "o", "-v"], 2),
    ],
)
def test_verbose_goes_before_or_after_the_command(words: list[str], level: int) -> None:
    args = build_parser(words).parse_args(words)
    assert args.verbose + getattr(args, "verbose_after", 0) == level


def test_a_notice_reads_like_the_cli_and_verbose_lines_say_more() -> None:
    code = (
        "import logging, sys; from gossamer import logs; logs.configure(int(sys.argv[1]));"
        " logging.getLogger('gossamer.engine.resume').warning('resuming crawl in %s', 'out')"
    )
    quiet = subprocess.run(
        [sys.executable, "-c", code, "30"], capture_output=True, text=True, check=True
    )
    assert quiet.stderr == "gossamer: resuming crawl in out\n"
    loud = subprocess.run(
        [sys.executable, "-c", code, "10"], capture_output=True, text=True, check=True
    )
    assert "level=WARNING logger=gossamer.engine.resume resuming crawl in out" in loud.stderr
