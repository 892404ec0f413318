"""A crawl folder belongs to one crawl: other seeds or settings are refused, not merged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gossamer.cli import build_parser
from gossamer.cli.crawl import crawl_plan
from gossamer.engine.recover import SAVED_CONFIG, save_config
from gossamer.errors import ConfigError
from gossamer.plan import CrawlPlan

from .cli_helpers import one_error, run

# One process, named: the default is one per usable core, which differs from machine to machine.
FIRST = ["--max-pages", "20", "--delay", "0", "--resolve", "*.web.test:127.0.0.1", "--workers", "1"]


def plan(*argv: str | Path) -> CrawlPlan:
    return crawl_plan(build_parser().parse_args(["crawl", *map(str, argv)]))


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.web.test/\nhttp://b.web.test/\n")
    return path


@pytest.fixture
def folder(tmp_path: Path, seeds: Path) -> Path:
    """A folder holding the crawl.json of ``crawl seeds.txt --out out FIRST...``."""
    out = tmp_path / "out"
    first = plan(seeds, "--out", out, *FIRST)
    assert (first.resuming, first.save) == (False, True)
    out.mkdir()
    save_config(out, first.config, [seed.urls for seed in first.seeds.seeds])
    return out


def saved(folder: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((folder / SAVED_CONFIG).read_text())["config"]
    return data


def test_the_same_command_again_resumes(seeds: Path, folder: Path) -> None:
    again = plan(seeds, "--out", folder, *FIRST, "--no-progress")
    assert (again.resuming, again.save) == (True, False)
    assert [seed.urls for seed in again.seeds.seeds] == [
        ("http://a.web.test/",),
        ("http://b.web.test/",),
    ]


def test_other_seeds_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folder: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("http://c.web.test/\n")
    before = (folder / SAVED_CONFIG).read_text()
    error = one_error(*run(capsys, "crawl", other, "--out", folder, *FIRST))
    assert error == (
        f"{folder} holds a crawl started with other seeds; continue it as it was with"
        f" 'gossamer crawl --resume {folder}', or start this one in a new --out folder"
    )
    assert (folder / SAVED_CONFIG).read_text() == before


def test_other_settings_are_refused_and_named(
    capsys: pytest.CaptureFixture[str], seeds: Path, folder: Path
) -> None:
    flags = ["--max-pages", "20", "--delay", "2s", "--resolve", "*.web.test:127.0.0.1"]
    error = one_error(*run(capsys, "crawl", seeds, "--out", folder, *flags, "--workers", "2"))
    assert error.startswith(
        f"{folder} holds a crawl started with other settings:"
        " --delay (0s there, 2s here); continue it as it was with 'gossamer crawl --resume"
    )


def test_a_setting_left_out_is_a_difference_too(
    capsys: pytest.CaptureFixture[str], seeds: Path, folder: Path
) -> None:
    error = one_error(*run(capsys, "crawl", seeds, "--out", folder, "--delay", "0"))
    assert "--max-pages (20 there, no limit here)" in error
    assert "--resolve (*.web.test:127.0.0.1 there, none here)" in error


def test_seeds_and_settings_both_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folder: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("http://c.web.test/\n")
    error = one_error(*run(capsys, "crawl", other, "--out", folder, "--max-depth", "3"))
    assert error.startswith(f"{folder} holds a crawl started with other seeds and other settings")


def test_resume_takes_the_stored_settings(folder: Path) -> None:
    resumed = plan("--resume", folder)
    assert (resumed.resuming, resumed.save) == (True, False)
    assert resumed.config.max_pages == 20
    assert resumed.config.politeness.delay == 0.0
    assert resumed.config.resolve == ("*.web.test:127.0.0.1",)


@pytest.mark.parametrize(
    "flags",
    [["--max-pages", "50"], ["--max-pages", "21", "--no-progress"]],
)
def test_resume_may_raise_the_page_target(folder: Path, flags: list[str]) -> None:
    resumed = plan("--resume", folder, *flags)
    assert (resumed.resuming, resumed.save) == (True, True)
    assert resumed.config.max_pages == int(flags[1])


@pytest.mark.parametrize("workers", ["2", "3"])
def test_resume_may_change_the_number_of_worker_processes(folder: Path, workers: str) -> None:
    # Each worker restores the hosts it owns by hash, whatever their number before: a folder
    # may move to a machine with another core count, or be resumed with more or fewer.
    resumed = plan("--resume", folder, "--workers", workers)
    assert (resumed.resuming, resumed.save) == (True, True)
    assert resumed.config.workers == int(workers)
    assert resumed.config.max_pages == 20  # everything else as stored


def test_the_starting_command_again_with_other_workers_continues_the_crawl(
    seeds: Path, folder: Path
) -> None:
    again = plan(seeds, "--out", folder, *FIRST[:-1], "4")  # FIRST ends with --workers 1
    assert again.resuming and again.config.workers == 4


def test_an_unlimited_crawl_takes_no_time_limit_on_resume(folder: Path) -> None:
    with pytest.raises(ConfigError, match=r"--time \(no limit there, 7200s here\)"):
        plan("--resume", folder, "--time", "2h")


def test_resume_with_a_longer_time_limit(tmp_path: Path, seeds: Path) -> None:
    out = tmp_path / "timed"
    first = plan(seeds, "--out", out, "--time", "1h")
    out.mkdir()
    save_config(out, first.config, [seed.urls for seed in first.seeds.seeds])
    longer = plan("--resume", out, "--time", "2h")
    assert longer.save and longer.config.time_limit == 7200.0
    with pytest.raises(ConfigError, match=r"--time \(3600s there, 1800s here\)"):
        plan("--resume", out, "--time", "30m")


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--max-pages", "10"], "--max-pages (20 there, 10 here)"),
        (["--delay", "1s"], "--delay (0s there, 1s here)"),
        (["--concurrency", "8"], "--concurrency (64 there, 8 here)"),
        (["--user-agent", "other/1"], "--user-agent ("),
    ],
)
def test_resume_refuses_other_settings(
    capsys: pytest.CaptureFixture[str], folder: Path, flags: list[str], named: str
) -> None:
    before = (folder / SAVED_CONFIG).read_text()
    error = one_error(*run(capsys, "crawl", "--resume", folder, *flags))
    assert error.startswith(f"cannot change the settings of the crawl in {folder} when resuming")
    assert named in error
    assert "new --out folder" in error
    assert (folder / SAVED_CONFIG).read_text() == before


def test_resume_with_other_seeds_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, folder: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_text("http://c.web.test/\n")
    error = one_error(*run(capsys, "crawl", "--resume", folder, other))
    assert error.startswith(f"the crawl in {folder} was started from other seeds")


def test_resume_records_what_applies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, folder: Path
) -> None:
    # Stop just before crawling: what was written by then is what the crawl will use.
    from gossamer import cli  # noqa: PLC0415
    from gossamer.engine import crawler  # noqa: PLC0415 - what the crawl command runs

    class StopError(Exception):
        pass

    def no_crawl(*args: object) -> None:
        raise StopError

    monkeypatch.setattr(crawler, "Crawler", no_crawl)
    with pytest.raises(StopError):
        cli.main(["crawl", "--resume", str(folder), "--max-pages", "50"])
    assert saved(folder)["max_pages"] == 50
    assert "resuming the crawl" in capsys.readouterr().out


def test_a_damaged_crawl_json_is_one_error(
    capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    data = json.loads((folder / SAVED_CONFIG).read_text())
    data["config"]["time_limit"] = "soon"
    (folder / SAVED_CONFIG).write_text(json.dumps(data))
    error = one_error(*run(capsys, "crawl", "--resume", folder))
    assert error == f"{folder / SAVED_CONFIG}: time_limit must be a number of seconds (got 'soon')"
    (folder / SAVED_CONFIG).write_text("{not json")
    assert one_error(*run(capsys, "crawl", "--resume", folder)).startswith("cannot read")


def test_nothing_to_resume(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    error = one_error(*run(capsys, "crawl", "--resume", tmp_path))
    assert error == f"nothing to resume: {tmp_path} holds no Gossamer crawl"
