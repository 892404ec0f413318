"""Files a search reads, damaged: one error line naming the command that makes them again,
and that command does make them again."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gossamer.cli import main
from gossamer.index import build_index

from ..cli_helpers import one_error, run


def _copy(corpus: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(corpus, tmp_path / "crawl"))


def _first_segment_file(folder: Path) -> Path:
    return next(p for p in sorted((folder / "index" / "tantivy").iterdir()) if p.suffix == ".idx")


# What a disk, a hand or an older writer killed mid-file can leave. The first three are what
# a 'gossamer rank' killed mid-write left before its files were replaced whole.
RANK_DAMAGE: dict[str, Callable[[Path], object]] = {
    "url ranks cut short": lambda d: (d / "rank" / "url_ranks.parquet").write_bytes(b"PAR1"),
    "host ranks cut short": lambda d: (d / "rank" / "host_ranks.parquet").write_bytes(b"PAR1"),
    "summary cut short": lambda d: (d / "rank" / "summary.json").write_text("{"),
    "summary missing": lambda d: (d / "rank" / "summary.json").unlink(),
}
INDEX_DAMAGE: dict[str, Callable[[Path], object]] = {
    "docs.db not a database": lambda d: (d / "index" / "docs.db").write_bytes(b"x" * 4096),
    "docs.db emptied": lambda d: (d / "index" / "docs.db").write_bytes(b""),
    "tantivy meta cut short": lambda d: (d / "index" / "tantivy" / "meta.json").write_text("{"),
    "tantivy meta missing": lambda d: (d / "index" / "tantivy" / "meta.json").unlink(),
    "segment cut short": lambda d: _first_segment_file(d).write_bytes(b"x"),
}


@pytest.mark.parametrize("damage", RANK_DAMAGE)
def test_damaged_ranks_name_gossamer_rank(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    folder = _copy(corpus, tmp_path)
    RANK_DAMAGE[damage](folder)
    # The ranks by document, saved when 'index' or 'rank' ends, would spare the search
    # reading the rank files: as after a 'rank' that never reached that point.
    (folder / "index" / "doc_ranks.bin").unlink(missing_ok=True)
    line = one_error(*run(capsys, "search", folder, "write"))
    assert line.startswith(f"the ranks in {folder / 'rank'} are damaged")
    assert line.endswith(f"run 'gossamer rank {folder}' to compute them again")
    assert run(capsys, "rank", folder)[0] == 0
    assert run(capsys, "search", folder, "write")[0] == 0


@pytest.mark.parametrize("damage", INDEX_DAMAGE)
def test_a_damaged_index_names_gossamer_index_which_builds_it_again(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    folder = _copy(corpus, tmp_path)
    whole = _hits(capsys, folder)
    INDEX_DAMAGE[damage](folder)
    line = one_error(*run(capsys, "search", folder, "write"))
    assert line.startswith(f"the search index of {folder} is damaged (")
    assert line.endswith(f"run 'gossamer index {folder}' to build it again")
    report = build_index(folder)
    assert report.documents == report.indexed > 0  # every page indexed anew, none twice
    assert _hits(capsys, folder) == whole


def _hits(capsys: pytest.CaptureFixture[str], folder: Path) -> list[tuple[str, int]]:
    """The URLs found for "write" with the number of copies of each."""
    assert main(["search", str(folder), "write", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    return [(hit["url"], len(hit["copies"])) for hit in found["hits"]]
