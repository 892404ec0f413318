"""Issue 30's scope and language flags at the edge: checked (one error line, exit 2), kept in
``crawl.json`` with the area the seeds drew, and in a shared crawl's settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.cli import build_parser
from gossamer.cli.crawl import crawl_plan
from gossamer.distributed import settings
from gossamer.engine.recover import save_config
from gossamer.plan import CrawlPlan
from tests.unit.cli_helpers import one_error, run

FLAGS = ("--scope", "domain", "--allow-domain", "CDN.example.net", "--exclude", r"\.pdf$")


def plan(*argv: str | Path) -> CrawlPlan:
    return crawl_plan(build_parser().parse_args(["crawl", *map(str, argv)]))


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("http://www.a.example.org/docs/\nhttps://b.example.co.uk/\n")
    return path


def test_the_flags_and_the_seeds_area_are_kept_and_resumed(seeds: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = plan(seeds, "--out", out, *FLAGS)
    scope = first.config.scope
    assert (scope.mode, scope.allow_domains, scope.exclude) == (
        "domain",
        ("cdn.example.net",),
        (r"\.pdf$",),
    )
    assert scope.seed_area == ("http://(org,example,", "http://(uk,co,example,")
    out.mkdir()
    save_config(out, first.config, [seed.urls for seed in first.seeds.seeds])
    # Resumed without the seeds file, or by the same command again: the same scope.
    assert plan("--resume", out).config == first.config
    again = plan(seeds, "--out", out, *FLAGS)
    assert (again.resuming, again.config.scope) == (True, scope)
    # A shared crawl's joiner reads the same rules from the stored settings.
    back = settings.from_json(settings.to_json(first.config), seeds, out)
    assert back.scope == scope


def test_a_seed_the_rules_refuse_is_an_error(
    capsys: pytest.CaptureFixture[str], seeds: Path, tmp_path: Path
) -> None:
    error = one_error(*run(capsys, "crawl", seeds, "--out", tmp_path / "o", "--include", "docs"))
    assert error.startswith("seeds line 2 (https://b.example.co.uk/) is out of the crawl's")
    assert error.endswith("by its include rule; remove the seed or change --include")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("argv", "config", "message"),
    [
        (("--exclude", "("), "", "--exclude entry '(' is not a regular expression"),
        (("--include", "[a-"), "", "--include entry '[a-' is not a regular expression"),
        (("--scope", "site"), "", "argument --scope: invalid choice: 'site'"),
        (("--allow-domain", "http://x.org/"), "", "--allow-domain entry 'http://x.org/' is not"),
        (("--languages", "english"), "", "--languages must be a list of ISO 639-1"),
        ((), '[scope]\nsurts = ["example.org"]', "scope.surts entry 'example.org' is not a SURT"),
        ((), '[scope]\nmode = "everything"', "scope.mode must be one of seeds, host, domain"),
    ],
)
def test_bad_scope_settings_are_one_error_line(  # noqa: PLR0917 - the parameters
    capsys: pytest.CaptureFixture[str],
    seeds: Path,
    tmp_path: Path,
    argv: tuple[str, ...],
    config: str,
    message: str,
) -> None:
    extra: list[str | Path] = list(argv)
    if config:
        toml = tmp_path / "c.toml"
        toml.write_text(config)
        extra += ["--config", toml]
    error = one_error(*run(capsys, "crawl", seeds, "--out", tmp_path / "o", *extra))
    assert message in error, error
