"""``gossamer crawl --engine threads`` and its flags: what is refused, in one line, before
anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.cli_helpers import one_error, run


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.web.test/\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--frontier-sync", "semaphore"], "--frontier-sync needs --engine threads"),
        (["--threads", "4"], "--threads needs --engine threads"),
        (["--pipeline", "buffers=2"], "--pipeline needs --engine threads"),
        (["--switch-interval", "1ms"], "--switch-interval needs --engine threads"),
        (["--engine", "threads", "--workers", "2"], "leave out --workers"),
        (["--engine", "threads", "--url-tree", "t"], "--url-tree needs --pipeline"),
        (["--engine", "threads", "--switch-interval", "2s"], "between 1us and 1s"),
        (["--engine", "threads", "--pipeline", "buffers=0"], "buffers must be 1 to 10000"),
        (["--engine", "threads", "--pipeline", "lanes=3"], "expected buffers=K,size=N"),
        (["--engine", "threads", "--frontier-sync", "optimistic"], "invalid choice"),
        (["--engine", "threads", "--threads", "0"], "--threads"),
    ],
)
def test_thread_flags_that_do_not_fit_are_refused(
    capsys: pytest.CaptureFixture[str], seeds: Path, tmp_path: Path, flags: list[str], message: str
) -> None:
    out = tmp_path / "out"
    error = one_error(*run(capsys, "crawl", seeds, "--out", out, *flags))
    assert message in error
    assert not out.exists()  # refused before anything was written


def test_the_threaded_engine_does_not_resume(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    error = one_error(*run(capsys, "crawl", "--resume", tmp_path, "--engine", "threads"))
    assert "resume with the default engine" in error
