"""Command-line entry point: parses flags and wires packages together, one call per command.

Every fault Gossamer knows about ends here as one ``gossamer: error: ...`` line on stderr and a
non-zero exit status.

Data flow: argv -> **cli** -> the package a subcommand runs. Each module here registers its
subcommands on the parser with the function that runs them (``set_defaults(run=...)``):
``crawl``; ``recover``; ``testweb`` (``testweb`` and ``demo``, which alone import the test
web); ``search`` (``index``, ``rank``, ``search`` and ``serve``). ``flags`` holds the value
types they share. This module builds the parser, configures logging and turns faults into
exit statuses.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from typing import NoReturn

from gossamer import __version__
from gossamer.cli import crawl, recover, search, testweb
from gossamer.errors import ConfigError, GossamerError, escaped

__all__ = ["EXIT_ERROR", "build_parser", "main"]

EXIT_ERROR = 2
# The description under ``gossamer --help``: this docstring's first two paragraphs, as before.
_ABOUT = (
    "Command-line entry point: parses flags and wires packages together, one call per"
    " command.\n\nEvery fault Gossamer knows about ends here as one ``gossamer: error: ...``"
    " line on stderr and a\nnon-zero exit status.\n"
)

Command = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``gossamer: error:`` line like every other error."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see '{self.prog} --help')")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gossamer", description=_ABOUT)
    parser.add_argument("--version", action="version", version=f"gossamer {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0)
    sub = parser.add_subparsers(dest="command", required=True)
    crawl.add_parser(sub)
    testweb.add_testweb_parser(sub)
    recover.add_parser(sub)
    testweb.add_demo_parser(sub)
    search.add_parsers(sub)
    return parser


def _configure_logging(verbose: int) -> None:
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
    )


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        _configure_logging(args.verbose)
        run: Command = args.run
        return run(args)
    except GossamerError as exc:
        print(f"gossamer: error: {escaped(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError:
        print("gossamer: error: out of memory", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("gossamer: interrupted", file=sys.stderr)
        return 130
