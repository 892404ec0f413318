"""Command line, ``gossamer export-tree``: a crawl's pages as seed 000's Indexed URL Tree.

Data flow: argv -> **cli.tree** -> ``threads.urltree.export_crawl`` (``crawl.db``, read-only ->
``pr-``/``do-``/``dr-`` folders, one data file per page, and ``res.txt``) -> one summary line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gossamer.cli.flags import path
from gossamer.errors import ConfigError
from gossamer.threads.urltree import export_crawl

__all__ = ["DEFAULT_TREE", "add_parser", "run_export_tree"]

DEFAULT_TREE = "url-tree"  # inside the crawl folder


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "export-tree",
        help="file a crawl's pages into an Indexed URL Tree: one folder per host, one file per"
        " page, for tools that read files",
    )
    p.set_defaults(run=run_export_tree)
    p.add_argument("dir", type=path, metavar="DIR", help="the crawl folder")
    p.add_argument(
        "--to",
        type=path,
        metavar="TREE",
        help=f"the folder to build the tree in: new or empty (default: DIR/{DEFAULT_TREE})",
    )


def _checked_target(folder: Path, target: Path | None) -> Path:
    if not (folder / "crawl.db").is_file():
        raise ConfigError(f"{folder} is not a crawl folder (it has no crawl.db)")
    tree = folder / DEFAULT_TREE if target is None else target
    try:
        taken = tree.exists() and (not tree.is_dir() or any(tree.iterdir()))
    except OSError as exc:
        raise ConfigError(f"cannot use {tree} for the tree: {exc.strerror or exc}") from exc
    if taken:
        raise ConfigError(
            f"{tree} already exists and is not an empty folder; remove it or choose another --to"
        )
    return tree


def run_export_tree(args: argparse.Namespace) -> int:
    tree = _checked_target(args.dir, args.to)
    audit = export_crawl(args.dir / "crawl.db", tree)
    print(f"filed {audit.url_files} pages in {tree}; every data line is in {tree / 'res.txt'}")
    return 0
