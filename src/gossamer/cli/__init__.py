"""Command-line entry point: parses flags and wires packages together, one call per command.

Every fault Gossamer knows about ends here as one ``gossamer: error: ...`` line on stderr and a
non-zero exit status.

Data flow: argv -> **cli** -> the package a subcommand runs. Each module here registers its
subcommands on the parser with the function that runs them (``set_defaults(run=...)``):
``crawl``; ``recover``; ``tree`` (``export-tree``); ``study`` (which serves its own test
web); ``testweb`` (``testweb`` and ``demo``); ``search`` (``index``, ``rank``, ``search`` and
``serve``); ``distributed`` (``worker`` and ``ctl`` of a crawl shared in Redis); ``merge``.
``flags`` holds the value types they share. This module builds the parser,
configures logging (``gossamer.logs``) and turns faults into exit statuses: 0 done, 2 an
error, 3 a crawl stopped before its end (Ctrl-C, SIGTERM, a stop from ``ctl`` or the web
page) that ``--resume`` continues, 130 interrupted before a crawl began, 141 a reader gone.

With ``--json`` (``gossamer search``) an error is also printed on stdout as one JSON object,
``{"error": "..."}``, for the program reading the results. When the reader of stdout goes
away early (``gossamer search ... | head``), the command stops quietly with status 141, as a
tool ended by SIGPIPE does, instead of a BrokenPipeError traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

from gossamer import __version__, logs
from gossamer.cli.ending import EXIT_STOPPED
from gossamer.errors import ConfigError, GossamerError, escaped

if TYPE_CHECKING:
    from gossamer.spawning import StartedWorker

__all__ = ["EXIT_ERROR", "EXIT_STOPPED", "build_parser", "main"]

EXIT_ERROR = 2
# What ``gossamer --help`` says first: what the tool does and the order of its commands.
_ABOUT = (
    "Gossamer crawls web sites politely into a folder of WARC files, then indexes, ranks and"
    " searches what it crawled. A first run: 'gossamer crawl seeds.txt --out DIR', then"
    " 'gossamer index DIR', 'gossamer rank DIR' and 'gossamer search DIR words' or"
    " 'gossamer serve DIR'."
)
_STATUSES = (
    "exit status: 0 done; 2 an error (one 'gossamer: error:' line says what); 3 a crawl"
    " stopped before its end (Ctrl-C, SIGTERM, a stop from ctl or the web page), which"
    " 'gossamer crawl --resume DIR' continues; 130 interrupted before a crawl began."
)

Command = Callable[[argparse.Namespace], int]


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default after its help, when it has one worth saying (not a flag's
    False, an unset None or a help text that already says it)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            action.default in (None, False, (), [], argparse.SUPPRESS)
            or isinstance(action, argparse._CountAction)
            or "default" in text
        ):
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``gossamer: error:`` line like every other error.

    A subcommand parser with ``dash_words`` set (``gossamer search``) reads a word that starts
    with a single ``-`` and is not one of its options as a positional word, so
    ``gossamer search DIR -draft`` searches for "-draft" instead of failing on an unknown
    option. Words starting with ``--`` stay options (a mistyped flag is still an error), and
    ``--`` still ends the options.
    """

    dash_words = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)  # subcommands' parsers too
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see '{self.prog} --help')")

    # The return type of this argparse internal differs between Python versions.
    def _parse_optional(self, arg_string: str) -> Any:
        if (
            self.dash_words
            and arg_string[:1] == "-"
            and arg_string[:2] != "--"
            and arg_string not in self._option_string_actions
        ):
            return None  # argparse's answer for a positional word
        return super()._parse_optional(arg_string)


# Each subcommand's module and the function that registers it, in the order of ``--help``.
# A command line naming one subcommand imports that module alone, so ``gossamer search``
# does not pay for the crawler's imports (aiohttp, the frontier, ...).
_REGISTRARS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("crawl",), "crawl", "add_parser"),
    (("testweb",), "testweb", "add_testweb_parser"),
    (("recover",), "recover", "add_parser"),
    (("export-tree",), "tree", "add_parser"),
    (("study",), "study", "add_parser"),
    (("demo",), "testweb", "add_demo_parser"),
    (("index", "rank", "search", "serve"), "search", "add_parsers"),
    (("worker", "ctl"), "distributed", "add_parsers"),
    (("merge",), "merge", "add_parser"),
    (("export", "extract"), "export", "add_parsers"),
)


def _named_command(words: list[str]) -> str | None:
    """The subcommand a command line names: its first word that is not a global option."""
    for word in words:
        if word in ("-v", "--verbose") or (word.startswith("-v") and set(word[1:]) == {"v"}):
            continue
        return word
    return None


def build_parser(words: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the command line, with only the subcommand it names (when it names
    a known one), else with every subcommand."""
    parser = _Parser(
        prog="gossamer",
        description=_ABOUT,
        epilog=_STATUSES,
    )
    parser.add_argument("--version", action="version", version=f"gossamer {__version__}")
    _verbose_flag(parser, "verbose", 0)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = None if words is None else _named_command(words)
    wanted = [entry for entry in _REGISTRARS if named in entry[0]] or _REGISTRARS
    if named == "--version":
        wanted = []  # it needs no subcommand, and their modules take 0.7 s to import
    for _, module, function in wanted:
        registrar = getattr(importlib.import_module(f"gossamer.cli.{module}"), function)
        registrar(sub)
    for command in sub.choices.values():
        # Counted apart, as a subcommand's values replace the main parser's of the same name.
        _verbose_flag(command, "verbose_after", argparse.SUPPRESS)
    return parser


def _verbose_flag(parser: argparse.ArgumentParser, dest: str, default: Any) -> None:
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        dest=dest,
        default=default,
        help="say more on stderr: -v what the crawl does, -vv every request (with times and"
        " module names)",
    )


def _wants_json(argv: list[str]) -> bool:
    """Whether the command line asks for JSON output (``--json`` before any ``--``)."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in options


def _fail(message: str, as_json: bool) -> int:
    text = escaped(message)
    if as_json:
        try:
            print(json.dumps({"error": text}, ensure_ascii=False), flush=True)
        except BrokenPipeError:
            _drop_stdout()
    print(f"gossamer: error: {text}", file=sys.stderr)
    return EXIT_ERROR


def _drop_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone, so that Python's own flush at exit
    does not fail a second time and print "Exception ignored ... BrokenPipeError"."""
    with contextlib.suppress(OSError, ValueError):  # a stdout without a descriptor (tests)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _early_workers(words: list[str]) -> int:
    """How many worker processes a ``gossamer crawl`` command line will run, guessed before
    it is parsed: ``--workers N``, else one per usable core; none with the threaded engine,
    a shared crawl (``--frontier``) or for help. A wrong guess costs little: the crawl starts
    those missing and stops those it does not need (``engine/workers.run_workers``)."""
    if _named_command(words) != "crawl":
        return 0
    guess = argparse.ArgumentParser(add_help=False)
    for flag in ("--workers", "--engine", "--frontier"):
        guess.add_argument(flag)
    guess.add_argument("-h", "--help", action="store_true")
    try:
        known, _ = guess.parse_known_args(words)
    except SystemExit:  # the real parser says what is wrong
        return 0
    if known.help or known.frontier is not None or known.engine not in (None, "async"):
        return 0
    if known.workers is not None:
        return int(known.workers) if known.workers.isdigit() else 0
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0


def _interrupted(_signum: int, _frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    as_json = _wants_json(words)
    early: list[StartedWorker] = []
    wanted = _early_workers(words) if argv is None else 0
    if wanted > 1:
        # Issue 29: the workers' interpreters start now, and import the crawler while this
        # one imports its own modules, reads the settings and readies the folder; they crawl
        # once ordered. (A command line given by a caller, as the tests do, starts none.)
        from gossamer.spawning import start_workers  # noqa: PLC0415 - crawl only

        # Until the crawl takes SIGTERM over (``cli/ending.py``), it means what Ctrl-C means:
        # the started workers are stopped below and the command says it was interrupted. Left
        # to the system's default, it killed this process alone, and Python's resource tracker
        # then told of the workers' leaked semaphores.
        signal.signal(signal.SIGTERM, _interrupted)
        early = start_workers(range(wanted))
    try:
        args = build_parser(words).parse_args(words, argparse.Namespace(early_workers=early))
        logs.configure(logs.level_of(args.verbose + getattr(args, "verbose_after", 0)))
        run: Command = args.run
        status = run(args)
        sys.stdout.flush()  # a reader that left shows here, not in Python's flush at exit
        return status
    except BrokenPipeError:
        _drop_stdout()
        return 128 + signal.SIGPIPE
    except GossamerError as exc:
        return _fail(str(exc), as_json)
    except MemoryError:
        return _fail("out of memory", as_json)
    except KeyboardInterrupt:
        print("gossamer: interrupted", file=sys.stderr)
        return 130
    finally:
        for worker in early:
            worker.cancel()  # ended with the crawl, or never needed
