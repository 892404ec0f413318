"""What each command imports: the test web is test tooling, which the crawler and the CLI
never import at import time, and a crawl needs none of the extras' packages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .without import OPTIONAL, run_without


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

    usage = build_parser(["--help"]).format_help()
    for name in ("crawl", "recover", "export-tree", "study", "demo", "index", "search", "serve"):
        assert name in usage


def test_a_lean_install_crawls_without_any_optional_package(tmp_path: Path) -> None:
    """A crawl run as ``pip install gossamer`` alone would run it: every extra's package is
    refused at import (tests/unit/without.py), and the crawl still ends well, writes its
    reports, and puts in report.html, instead of each chart, the extra that draws it."""
    code = (
        "import json\n"
        "from pathlib import Path\n"
        "from gossamer.cli import main\n"
        "from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web\n"
        "spec = WebSpec(seed=3, hosts=2, pages_per_host=6, seed_hosts=2, special_hosts=False,"
        " crawl_delay_hosts=False)\n"
        f"out = Path({str(tmp_path)!r})\n"
        "with ThreadedTestWeb(build_web(spec)) as site:\n"
        "    (out / 'seeds.txt').write_text('\\n'.join(site.seeds()) + '\\n')\n"
        "    status = main(['crawl', str(out / 'seeds.txt'), '--out', str(out / 'crawl'),"
        " '--resolve', '*.web.test:127.0.0.1', '--delay', '0', '--workers', '1',"
        " '--no-progress'])\n"
        f"loaded = sorted(m for m in sys.modules if m.partition('.')[0] in {OPTIONAL!r})\n"
        "print(json.dumps({'status': status, 'loaded': loaded}))\n"
    )
    result = run_without(OPTIONAL, code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {"status": 0, "loaded": []}
    reports = tmp_path / "crawl" / "reports"
    assert "pages: " in (reports / "stats.txt").read_text(encoding="utf-8")
    page = (reports / "report.html").read_text(encoding="utf-8")
    assert page.count("this chart needs the charts extra") == 4
    assert "Traceback" not in result.stderr
