"""``--render`` and ``--render-auto`` at the edge: kept in the crawl's settings (and a shared
crawl's), a bad glob or kind refused in one line, and a crawl that would render without a
browser refused in one line before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.cli import build_parser
from gossamer.cli.crawl import crawl_plan
from gossamer.distributed import settings
from tests.unit.cli_helpers import one_error, run


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("http://app.example.org/\n")
    return path


def test_the_flags_are_settings_a_shared_crawl_keeps(seeds: Path, tmp_path: Path) -> None:
    argv = ["crawl", str(seeds), "--out", str(tmp_path / "out"), "--render", "*.App.example.org",
            "--render-auto", "*"]  # fmt: skip
    config = crawl_plan(build_parser().parse_args(argv)).config
    assert (config.render.hosts, config.render.auto) == (("*.app.example.org",), ("*",))
    back = settings.from_json(settings.to_json(config), seeds, tmp_path / "out")
    assert back.render == config.render


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--render", "a.org:8080"), "is not a host glob"),
        (("--render-auto", "bücher.de"), "punycode"),
    ],
)
def test_a_bad_glob_is_one_error_line(
    seeds: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    said: str,
) -> None:
    error = one_error(*run(capsys, "crawl", seeds, "--out", tmp_path / "out", *flags))
    assert said in error


def test_rendering_without_a_browser_is_refused_before_the_crawl(
    seeds: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    config = tmp_path / "c.toml"
    config.write_text('[[site]]\nmatch = "app.example.org"\nrender = "auto"\n')
    for flags in (("--render", "*"), ("--config", config)):
        error = one_error(*run(capsys, "crawl", seeds, "--out", tmp_path / "out", *flags))
        assert error.startswith("rendering needs Chromium")
    assert not (tmp_path / "out").exists()


def test_the_threaded_engine_does_not_render(
    seeds: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("crawl", seeds, "--out", tmp_path / "out", "--engine", "threads", "--render", "*")
    assert one_error(*run(capsys, *argv)).startswith("rendering needs the default engine")
