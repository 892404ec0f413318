"""``gossamer crawl --plugin``: a plugin named on the command line, as in the config file's
``plugins`` (issue 33), checked at the edge and kept in ``crawl.json``."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.cli import build_parser
from gossamer.cli.crawl import crawl_plan
from gossamer.plan import CrawlPlan
from tests.unit.cli_helpers import one_error, run

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "plugins" / "page_facts.py"


def plan(*argv: str | Path) -> CrawlPlan:
    return crawl_plan(build_parser().parse_args(["crawl", *map(str, argv)]))


def test_a_plugin_file_on_the_command_line_is_the_crawls(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://a.example.org/\n")
    config = plan(seeds, "--out", tmp_path / "out", "--plugin", EXAMPLE).config
    assert config.scope.plugins == (str(EXAMPLE),)


def test_a_missing_plugin_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://a.example.org/\n")
    missing = tmp_path / "nowhere.py"
    error = one_error(
        *run(capsys, "crawl", seeds, "--out", tmp_path / "o", "--plugin", str(missing))
    )
    assert "nowhere.py" in error
