"""Running ``gossamer.cli.main`` in-process and reading its one error line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    """Exit status and stderr of one ``gossamer`` command line; an exception fails the test."""
    code = main([str(arg) for arg in argv])
    return code, capsys.readouterr().err


def one_error(code: int, err: str) -> str:
    """The single ``gossamer: error:`` line of a refused command (exit status 2)."""
    assert code == 2, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("gossamer: error: ")]
    assert len(errors) == 1, err
    assert errors[0].isprintable()
    return errors[0].removeprefix("gossamer: error: ")
