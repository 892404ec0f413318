"""Search side, command line: the ``index``, ``rank``, ``search`` and ``serve`` subcommands.

Data flow: ``cli.py`` -> **commands** -> index / rank / search / web. ``cli.py`` calls
``add_commands`` while building its parser and ``run_command`` after parsing; each command
is one call into its package, and every fault arrives as a ``GossamerError``.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sqlite3
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from gossamer.config import parse_path
from gossamer.errors import ConfigError
from gossamer.index import (
    DOCSTORE_FILE,
    INDEX_DIR,
    DocStore,
    IndexingError,
    IndexReport,
    build_index,
)
from gossamer.index.access import is_writing
from gossamer.rank import DAMPING, TOLERANCE, rank_crawl
from gossamer.search.engine import MAX_PAGE, SearchEngine
from gossamer.search.output import format_json, format_text
from gossamer.search.ranking import RankingWeights

__all__ = ["COMMANDS", "add_commands", "run_command"]

log = logging.getLogger(__name__)

COMMANDS = frozenset({"index", "rank", "search", "serve"})


def _page(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= MAX_PAGE:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PAGE}")
    return value


def _weight(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number of at least 0: {text!r}")
    return value


def _fraction(text: str) -> float:
    value = _weight(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return value


def _port(text: str) -> int:
    value = int(text) if text.isdigit() else -1
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return value


def _folder(text: str) -> Path:
    try:
        return parse_path(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _ranking_flags(p: argparse.ArgumentParser) -> None:
    defaults = RankingWeights()
    group = p.add_argument_group("ranking")
    group.add_argument("--english", action="store_true", help="only pages detected as English")
    group.add_argument("--text-weight", type=_weight, default=defaults.text)
    group.add_argument("--pagerank-weight", type=_weight, default=defaults.pagerank)
    group.add_argument("--host-rank-weight", type=_weight, default=defaults.host_rank)
    group.add_argument(
        "--no-title-tiers", action="store_true", help="do not put title matches first"
    )


def add_commands(sub: Any) -> None:
    """Register ``index``, ``rank``, ``search`` and ``serve`` on ``cli.py``'s subparsers."""
    p = sub.add_parser("index", help="index the crawled HTML and PDF pages of a crawl folder")
    p.add_argument("dir", type=_folder, help="crawl folder (holds crawl.db and warc/)")
    p.add_argument(
        "--workers",
        type=_page,
        default=os.cpu_count() or 1,
        help="processes reading and extracting pages (default: one per core)",
    )
    p = sub.add_parser("rank", help="compute PageRank per URL and per host")
    p.add_argument("dir", type=_folder, help="crawl folder")
    p.add_argument("--damping", type=_fraction, default=DAMPING)
    p.add_argument("--tolerance", type=_fraction, default=TOLERANCE, help="L1 stop criterion")
    p = sub.add_parser("search", help="search an indexed crawl folder")
    p.add_argument("dir", type=_folder, help="crawl folder")
    p.add_argument("query", help='words, "phrases", -excluded, site:host')
    p.add_argument("--page", type=_page, default=1)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    _ranking_flags(p)
    p = sub.add_parser("serve", help="the search web UI")
    p.add_argument("dir", type=_folder, help="crawl folder")
    p.add_argument("--port", type=_port, default=8000)
    p.add_argument("--bind", default="127.0.0.1", help="address to listen on")
    _ranking_flags(p)


def _weights(args: argparse.Namespace) -> RankingWeights:
    return RankingWeights(
        text=args.text_weight,
        pagerank=args.pagerank_weight,
        host_rank=args.host_rank_weight,
        title_tiers=not args.no_title_tiers,
    )


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\rindexed {done}/{total}", end="", file=sys.stderr, flush=True)


def run_command(args: argparse.Namespace) -> int | None:
    """Run one of this module's commands; None when ``args.command`` is not one of them."""
    if args.command == "index":
        report = _index(args.dir, args.workers)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(report.summary())
        return 0
    if args.command == "rank":
        print(rank_crawl(args.dir, damping=args.damping, tolerance=args.tolerance).summary())
        return 0
    if args.command == "search":
        require_complete_index(args.dir)
        language = "en" if args.english else None
        with SearchEngine(args.dir, _weights(args)) as engine:
            result = engine.search(args.query, page=args.page, language=language)
        output = format_json(result) if args.json else format_text(result, color=_color())
        print(output)
        return 0
    if args.command == "serve":
        # Imported here: the web UI pulls in aiohttp's server side, which no other command needs.
        from gossamer.web import serve  # noqa: PLC0415

        require_complete_index(args.dir)
        return serve(
            args.dir, host=args.bind, port=args.port, weights=_weights(args), english=args.english
        )
    return None


def _index(crawl_dir: Path, workers: int) -> IndexReport:
    # What was committed before a failure is kept (see ``build_index``); the next run goes on.
    again = f"the batches already committed are kept; run 'gossamer index {crawl_dir}' again"
    try:
        return build_index(crawl_dir, workers=workers, progress=_progress)
    except MemoryError as exc:
        raise IndexingError(f"out of memory while indexing {crawl_dir}: {again}") from exc
    except BrokenProcessPool as exc:
        raise IndexingError(
            f"an indexing process died (out of memory?) while indexing {crawl_dir}: {again},"
            " with fewer --workers"
        ) from exc


def require_complete_index(crawl_dir: Path) -> None:
    """Refuse to search an index a failed ``gossamer index`` run left behind half-built.

    An index being written right now is searched as far as it is committed, once it holds
    at least one page.
    """
    index_dir = crawl_dir / INDEX_DIR
    run = f"run 'gossamer index {crawl_dir}'"
    if not (index_dir / DOCSTORE_FILE).is_file():
        raise IndexingError(f"no search index in {crawl_dir}; {run} first")
    with DocStore(index_dir / DOCSTORE_FILE, readonly=True) as store:
        try:
            empty, in_flight = store.count() == 0, store.in_flight
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot read the search index of {crawl_dir}: {exc}") from exc
        if is_writing(index_dir):
            if empty:
                raise IndexingError(
                    f"the search index of {crawl_dir} is being written by another process and"
                    " holds no page yet; try again when 'gossamer index' has finished"
                )
            return
        if in_flight:
            raise IndexingError(
                f"the search index of {crawl_dir} is incomplete: the last 'gossamer index' run"
                f" did not finish; {run} again"
            )
        if empty and _has_pages(store, crawl_dir):
            raise IndexingError(
                f"the search index of {crawl_dir} is incomplete: no page is indexed yet; {run}"
            )


def _has_pages(store: DocStore, crawl_dir: Path) -> bool:
    try:
        return bool(store.pending(crawl_dir / "crawl.db"))
    except IndexingError:
        return False  # crawl.db cannot be read from here: nothing to compare with


def _color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ
