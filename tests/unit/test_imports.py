"""The test web is test tooling: the crawler and the CLI never import it at import time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def loaded_after(module: str) -> set[str]:
    """The ``gossamer`` modules a fresh interpreter holds after ``import module``."""
    code = (
        f"import json, sys, {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gossamer'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


@pytest.mark.parametrize("module", ["gossamer.cli", "gossamer.engine", "gossamer.__main__"])
def test_production_imports_leave_the_test_web_and_the_ui_out(module: str) -> None:
    loaded = loaded_after(module)
    assert module in loaded
    assert not {name for name in loaded if name.startswith("gossamer.testweb")}
    assert "gossamer.demo" not in loaded
    # The UI's server side is imported by ``gossamer serve`` alone.
    assert "gossamer.web" not in loaded


def test_a_search_imports_neither_the_crawler_nor_the_indexer() -> None:
    """``gossamer search`` builds a parser with its own subcommands only, and what it loads
    leaves out the crawl engine, the fetcher (aiohttp), the indexer (pypdf), numpy, scipy and
    pyarrow (the ranks by document are read into arrays of the standard library)."""
    code = (
        "import json, sys; from gossamer.cli import build_parser; "
        "parser = build_parser(['-v', 'search', 'DIR', 'q']); "
        "import gossamer.search.engine; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    loaded = set(json.loads(out))
    assert "gossamer.cli.search" in loaded
    assert "tantivy" in loaded
    heavy = {"gossamer.cli.crawl", "gossamer.engine", "gossamer.index.indexer", "aiohttp"}
    assert not heavy & loaded
    heavy_packages = ("pypdf", "numpy", "scipy", "pyarrow")
    assert not {name for name in loaded if name.split(".")[0] in heavy_packages}


def test_every_subcommand_is_listed_when_none_is_named() -> None:
    from gossamer.cli import build_parser  # noqa: PLC0415

    usage = build_parser(["--help"]).format_usage()
    for name in ("crawl", "recover", "export-tree", "study", "demo", "index", "search", "serve"):
        assert name in usage
