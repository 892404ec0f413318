"""The extras: pyproject.toml and gossamer.extras agree, and a command run without the extra
it needs says, in one line with exit status 2, which ``pip install`` to run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from gossamer import extras
from gossamer.cli import search as cli_search
from gossamer.search import engine

from .without import OPTIONAL, gossamer_without, run_without

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _names(requirements: list[str]) -> set[str]:
    """The distribution names of requirement strings, as import names."""
    names = (re.match(r"[A-Za-z0-9_.-]+", line) for line in requirements)
    return {name.group().lower().replace("-", "_") for name in names if name}


def test_the_extras_are_those_of_pyproject() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    optional = project["optional-dependencies"]
    for extra, modules in extras.EXTRAS.items():
        assert _names(optional[extra]) == set(modules), extra
    assert optional["all"] == [f"gossamer[{','.join(extras.EXTRAS)}]"]
    # The lean install holds none of them, and the tests block exactly these.
    assert not _names(project["dependencies"]) & set(OPTIONAL)
    blocked = {module for modules in extras.EXTRAS.values() for module in modules}
    assert set(OPTIONAL) == blocked


def test_the_page_limit_written_out_for_the_parser_is_the_engines() -> None:
    assert cli_search.MAX_PAGE == engine.MAX_PAGE


def test_require_names_every_missing_extra_at_once() -> None:
    extras.require("gossamer demo", "search", "rank", "charts", "redis")  # all in the test venv
    one = extras.MissingExtraError("gossamer index", ("search",))
    assert str(one) == "gossamer index needs the search extra: pip install 'gossamer[search]'"
    two = extras.MissingExtraError("gossamer demo", ("search", "rank"))
    assert str(two) == (
        "gossamer demo needs the search and rank extras: pip install 'gossamer[search,rank]'"
    )


@pytest.mark.parametrize(
    ("missing", "argv", "message"),
    [
        (["tantivy"], ["index", "{dir}"], "gossamer index needs the search extra"),
        (["pypdf"], ["index", "{dir}"], "gossamer index needs the search extra"),
        (["tantivy"], ["search", "{dir}", "river"], "gossamer search needs the search extra"),
        (["scipy"], ["rank", "{dir}"], "gossamer rank needs the rank extra"),
        (["tantivy"], ["serve", "{dir}"], "gossamer serve needs the search extra"),
        (
            ["redis"],
            ["serve", "{dir}", "--frontier", "redis://127.0.0.1:1"],
            "gossamer serve needs the redis extra",
        ),
        (
            ["redis"],
            ["worker", "--frontier", "redis://127.0.0.1:1", "--out", "{dir}/w"],
            "gossamer worker needs the redis extra",
        ),
        (
            ["redis"],
            ["ctl", "--frontier", "redis://127.0.0.1:1", "status"],
            "gossamer ctl needs the redis extra",
        ),
        (
            ["redis"],
            ["crawl", "{dir}/seeds.txt", "--out", "{dir}/c", "--frontier", "redis://127.0.0.1:1"],
            "gossamer crawl --frontier needs the redis extra",
        ),
        (
            ["tantivy", "pyarrow"],
            ["demo", "--out", "{dir}/demo"],
            "gossamer demo needs the search and rank extras",
        ),
    ],
)
def test_a_command_without_its_extra_says_what_to_install(
    tmp_path: Path, missing: list[str], argv: list[str], message: str
) -> None:
    result = gossamer_without(missing, *(word.format(dir=tmp_path) for word in argv))
    assert result.returncode == 2, result.stderr
    extra = re.search(r"the (.+) extras?$", message)
    assert extra is not None
    wanted = extra.group(1).replace(" and ", ",")
    assert result.stderr == f"gossamer: error: {message}: pip install 'gossamer[{wanted}]'\n"
    assert not (tmp_path / "demo").exists()  # refused before it started


def test_help_needs_no_extra() -> None:
    result = gossamer_without(OPTIONAL, "--help")
    assert result.returncode == 0, result.stderr
    for command in ("crawl", "index", "rank", "search", "serve", "worker", "ctl", "demo"):
        assert command in result.stdout
    for command in ("index", "serve", "rank"):
        assert gossamer_without(OPTIONAL, command, "--help").returncode == 0


def test_charts_without_matplotlib_say_which_extra_draws_them() -> None:
    code = (
        "from gossamer.monitor import charts\n"
        "print(charts.domain_chart([5, 3, 1]))\n"
        "print(charts.outcome_chart({'200': 4}, {}))\n"
        "assert 'matplotlib' not in sys.modules\n"
    )
    result = run_without(["matplotlib"], code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("<svg xmlns=")
        assert "this chart needs the charts extra: pip install &#x27;gossamer[charts]&#x27;" in line


def test_reading_ranks_without_pyarrow_names_the_parquet_extra(tmp_path: Path) -> None:
    (tmp_path / "rank").mkdir()
    (tmp_path / "rank" / "url_ranks.parquet").write_bytes(b"")
    code = (
        "from pathlib import Path\n"
        "from gossamer.extras import MissingExtraError\n"
        "from gossamer.rank.export import load_ranks\n"
        f"assert load_ranks(Path({str(tmp_path / 'none')!r})) is None\n"
        f"try: load_ranks(Path({str(tmp_path)!r}))\n"
        "except MissingExtraError as exc: print(exc)\n"
    )
    result = run_without(["pyarrow"], code)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"reading the ranks in {tmp_path / 'rank'} needs the parquet extra:"
        " pip install 'gossamer[parquet]'\n"
    )
