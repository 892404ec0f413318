"""``gossamer demo --out DIR`` never deletes what it did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.demo import MARKER, prepare_demo_folder
from gossamer.errors import StoreError

from .cli_helpers import one_error, run


def test_a_folder_that_is_not_the_demos_is_refused_and_kept(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.tex").write_text("precious")
    error = one_error(*run(capsys, "demo", "--out", mine, "--hosts", "4", "--pages", "1"))
    assert error.startswith(f"demo output folder {mine} is not empty and was not written by")
    assert [p.name for p in mine.iterdir()] == ["chapter1.tex"]


def test_a_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep")
    error = one_error(*run(capsys, "demo", "--out", target))
    assert error == f"demo output {target} exists and is not a folder; choose another --out"
    assert target.read_text() == "keep"


def test_bad_sizes_are_refused_before_anything_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "demo"
    assert "too large" in one_error(*run(capsys, "demo", "--out", out, "--hosts", "20000"))
    assert "invalid test web" in one_error(*run(capsys, "demo", "--out", out, "--hosts", "1"))
    assert not out.exists()


def test_a_new_or_empty_folder_gets_the_marker(tmp_path: Path) -> None:
    prepare_demo_folder(tmp_path / "new")
    assert (tmp_path / "new" / MARKER).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    prepare_demo_folder(empty)
    assert [p.name for p in empty.iterdir()] == [MARKER]


def test_an_earlier_demo_has_only_its_own_outputs_cleared(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    prepare_demo_folder(out)
    for name in ("warc", "reports", "index", "rank"):
        (out / name).mkdir()
        (out / name / "data").write_text("old")
    for name in ("crawl.db", "crawl.db-wal", "index.cdxj", "seeds.txt"):
        (out / name).write_text("old")
    (out / "my-notes.txt").write_text("keep me")
    prepare_demo_folder(out)
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "my-notes.txt"]


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "file").write_text("keep")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(StoreError, match="is not a folder"):
        prepare_demo_folder(link)
    assert (target / "file").read_text() == "keep"
