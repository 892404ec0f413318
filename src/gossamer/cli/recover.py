"""Command line, ``gossamer recover``: rebuild a crawl folder's database, index and reports.

Data flow: argv -> **cli.recover** -> ``engine.recover`` (WARC files -> crawl.db,
index.cdxj, reports/) -> what it did, one line per finding.
"""

from __future__ import annotations

import argparse
from typing import Any

from gossamer.cli.flags import path
from gossamer.engine.recover import recover

__all__ = ["add_parser", "run_recover"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("recover", help="rebuild crawl.db, index and reports from the WARC files")
    p.set_defaults(run=run_recover)
    p.add_argument("dir", type=path, metavar="DIR", help="the crawl folder")


def run_recover(args: argparse.Namespace) -> int:
    for line in recover(args.dir).lines(args.dir):
        print(line)
    return 0
