"""``gossamer study --out``: a folder holding anything but an earlier study's files is
refused in one line, and left as it was (the study clears its own ``runs/``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.cli.study import STUDY_FILES, _check_out
from gossamer.errors import ConfigError
from tests.unit.cli_helpers import one_error, run


def test_a_folder_with_other_files_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "crawl.db").write_bytes(b"mine")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "keep.txt").write_text("mine", encoding="utf-8")
    error = one_error(*run(capsys, "study", "--out", str(tmp_path), "--quick"))
    assert error.startswith(f"--out {tmp_path} holds other files (crawl.db)")
    assert (tmp_path / "runs" / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_a_new_an_empty_or_an_earlier_studys_folder_is_taken(tmp_path: Path) -> None:
    _check_out(tmp_path / "new")
    _check_out(tmp_path)
    for name in STUDY_FILES - {"runs"}:
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "runs").mkdir()
    _check_out(tmp_path)
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds other files"):
        _check_out(tmp_path)
    with pytest.raises(ConfigError, match="is not a folder"):
        _check_out(tmp_path / "notes.txt")
