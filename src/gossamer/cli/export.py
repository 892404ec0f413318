"""Command line, ``gossamer export`` and ``gossamer extract``: a crawl's data in files others read.

Data flow: argv -> **cli.export** -> ``gossamer.export`` (``export_pages`` for JSON Lines, CSV,
Parquet and WET; ``write_wacz`` for WACZ) or ``gossamer.plugins.extract_crawl`` (the
``[[extract]]`` rules and plugins over the archived pages) -> a file or standard output, with
a progress bar on stderr when it is a terminal. The extras a run needs are checked first:
``search`` when the text is asked for (the indexer's extraction), ``parquet`` for Parquet.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gossamer import extras
from gossamer.cli.flags import path, positive_int
from gossamer.errors import ConfigError

if TYPE_CHECKING:
    from gossamer.export.filters import Selection

__all__ = ["FORMATS", "add_parsers", "run_export", "run_extract"]

FORMATS = ("jsonl", "csv", "parquet", "wet", "wacz")
_SUFFIX = {"parquet": ".parquet", "wet": ".warc.wet.gz", "wacz": ".wacz"}
_BAR = 30


def add_parsers(sub: Any) -> None:
    """Register ``export`` and ``extract`` on the CLI's subparsers."""
    p = sub.add_parser(
        "export",
        help="write one record per fetched page (URL, status, language, title, main text,"
        " links, WARC place) as JSON Lines, CSV, Parquet or WET, or the archive as WACZ",
        epilog="Fields and types: docs/DATA.md. jsonl and csv go to standard output unless"
        " --out is given; parquet, wet and wacz default to DIR/export/pages.<format>.",
    )
    p.set_defaults(run=run_export)
    p.add_argument("dir", type=path, metavar="DIR", help="the crawl folder")
    p.add_argument("--format", choices=FORMATS, default="jsonl", help="the output format")
    p.add_argument("--out", type=path, metavar="FILE", help="the file to write ('-': stdout)")
    p.add_argument(
        "--site",
        action="append",
        default=[],
        metavar="HOST",
        help="only pages of this host or its subdomains (repeat or comma-separate for more)",
    )
    p.add_argument("--status", metavar="LIST", help="only these statuses: 200, 2xx, 300-399, ...")
    p.add_argument("--language", metavar="LIST", help="only pages in these languages: en,fr")
    p.add_argument("--since", metavar="DATE", help="only pages fetched from then on: 2026-11-01")
    p.add_argument("--fields", metavar="LIST", help="the fields to write, in this order")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        help="processes extracting text (default: one per core)",
    )
    p = sub.add_parser(
        "extract",
        help="apply the [[extract]] rules and plugins of a config file to the archived pages,"
        " writing their items as JSON Lines",
    )
    p.set_defaults(run=run_extract)
    p.add_argument("dir", type=path, metavar="DIR", help="the crawl folder")
    p.add_argument("--config", type=path, help="TOML file with [[extract]] tables and plugins")
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="FILE.py|NAME",
        help="a plugin file, or the name of a 'gossamer.plugins' entry point (repeatable)",
    )
    p.add_argument("--out", type=path, metavar="FILE", help="where the items go (default: stdout)")


class _Bar:
    """The progress bar on stderr (a terminal only): share done, counts and rate."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._started = time.monotonic()
        self._shown = 0.0
        self._on = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self._on or (now - self._shown < 0.2 and done < total):
            return
        self._shown = now
        share = done / total if total else 1.0
        filled = int(share * _BAR)
        rate = done / max(now - self._started, 1e-9)
        print(
            f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {share:4.0%} "
            f"{done:,}/{total:,} {self._what} {rate:,.0f}/s",
            end="",
            file=sys.stderr,
            flush=True,
        )

    def end(self) -> None:
        if self._on:
            print(file=sys.stderr)


def _selection(args: argparse.Namespace) -> Selection:
    from gossamer.export.filters import (  # noqa: PLC0415
        Selection,
        parse_fields,
        parse_since,
        parse_sites,
        parse_statuses,
    )
    from gossamer.export.records import FIELD_NAMES  # noqa: PLC0415
    from gossamer.store.export_rows import RowFilter  # noqa: PLC0415

    rows = RowFilter(
        hosts=parse_sites(args.site),
        statuses=parse_statuses(args.status) if args.status is not None else (),
        since=parse_since(args.since) if args.since is not None else None,
    )
    languages = frozenset(
        lang.strip().lower() for lang in (args.language or "").split(",") if lang.strip()
    )
    fields = parse_fields(args.fields) if args.fields is not None else FIELD_NAMES
    return Selection(rows=rows, languages=languages, fields=fields)


def _target(args: argparse.Namespace) -> Path | None:
    out: Path | None = args.out
    folder: Path = args.dir
    if out is not None and str(out) == "-":
        if args.format in ("parquet", "wacz"):
            raise ConfigError(f"--format {args.format} needs a file: give --out FILE")
        return None
    if out is None and args.format in _SUFFIX:
        (folder / "export").mkdir(exist_ok=True)
        return folder / "export" / f"pages{_SUFFIX[args.format]}"
    if out is not None and out.is_dir():
        raise ConfigError(f"--out {out} is a folder; name the file to write")
    return out


def run_export(args: argparse.Namespace) -> int:
    if not (args.dir / "crawl.db").is_file():
        raise ConfigError(f"{args.dir} is not a crawl folder (it has no crawl.db)")
    bar = _Bar("pages" if args.format != "wacz" else "WARC files")
    if args.format == "wacz":
        from gossamer.export.wacz import write_wacz  # noqa: PLC0415

        target = _target(args)
        assert target is not None
        report = write_wacz(args.dir, target, progress=bar)
        bar.end()
        print(f"packaged {report.warc_files} WARC files and {report.pages} pages in {target}")
        return 0
    selection = _selection(args)
    needed: tuple[str, ...] = ("search",) if selection.reads_warc or args.format == "wet" else ()
    needed += ("parquet",) if args.format == "parquet" else ()
    extras.require(f"gossamer export --format {args.format}", *needed)
    from gossamer.export.run import export_pages  # noqa: PLC0415

    target = _target(args)
    exported = export_pages(args.dir, args.format, target, selection, jobs=args.jobs, progress=bar)
    bar.end()
    where = "standard output" if target is None else str(target)
    print(f"exported {exported.written} of {exported.rows} pages to {where}", file=sys.stderr)
    return 0


def run_extract(args: argparse.Namespace) -> int:
    if not (args.dir / "crawl.db").is_file():
        raise ConfigError(f"{args.dir} is not a crawl folder (it has no crawl.db)")
    from gossamer.plugins.afterwards import extract_crawl  # noqa: PLC0415

    bar = _Bar("pages")
    out: Path | None = None if args.out is None or str(args.out) == "-" else args.out
    report = extract_crawl(args.dir, args.config, tuple(args.plugin), out, progress=bar)
    bar.end()
    print(report.summary(), file=sys.stderr)
    return 1 if report.errors else 0
