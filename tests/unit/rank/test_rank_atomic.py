"""``gossamer rank`` replaces its files whole or not at all: a run killed or failing mid-write
leaves the previous ranks readable, and only one run writes a folder's ranks at a time."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gossamer.lockfile import PidLock
from gossamer.rank import RankError, rank_crawl
from gossamer.rank.ranker import LOCK_NAME
from gossamer.search import SearchEngine

from ..cli_helpers import run
from ..index.fake_crawl import searchable_crawl

# Ranks the folder with every Parquet write going through a hook that, at the given write,
# leaves the first bytes of a Parquet file where it was writing and kills the process.
_KILLED_AT_WRITE = """
import os, signal, sys
from pathlib import Path
import pyarrow as pa
import pyarrow.parquet as pq
from gossamer.rank import rank_crawl
real, writes = pq.write_table, []
def write(table, where, **options):
    writes.append(where)
    if len(writes) == int(sys.argv[2]):
        Path(where).write_bytes(b"PAR1")
        os.kill(os.getpid(), signal.SIGKILL)
    real(table, where, **options)
pq.write_table = write
rank_crawl(Path(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return searchable_crawl(tmp_path_factory.mktemp("ranked") / "crawl")


def _copy(ranked: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(ranked, tmp_path / "crawl"))


def _files(folder: Path) -> dict[str, bytes]:
    """The rank files (not the lock, not temporaries) and their bytes."""
    return {p.name: p.read_bytes() for p in sorted((folder / "rank").glob("[!.]*"))}


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "rank").glob(".*.tmp"))


def test_a_rank_killed_mid_write_leaves_the_previous_ranks_searchable(
    ranked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(ranked, tmp_path)
    before = _files(folder)
    # The fourth Parquet file written is url_ranks.parquet, the one a search opens first.
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_AT_WRITE, str(folder), "4"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _files(folder) == before
    assert len(_leftovers(folder)) == 5  # the killed run's files, never renamed
    assert run(capsys, "search", folder, "write", "ahead")[0] == 0
    with SearchEngine(folder) as engine:
        assert engine.ranks is not None and engine.ranks.urls > 0
    rank_crawl(folder)  # the next run deletes what the killed one left
    assert _leftovers(folder) == []
    assert _files(folder).keys() == before.keys()


def test_a_write_that_fails_part_way_changes_nothing(
    ranked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _copy(ranked, tmp_path)
    before = _files(folder)
    real, writes = pq.write_table, []

    def fail_on_the_third(table: pa.Table, where: Path, **options: Any) -> None:
        writes.append(where)
        if len(writes) == 3:
            Path(where).write_bytes(b"PAR1")
            raise OSError(28, "No space left on device")
        real(table, where, **options)

    monkeypatch.setattr(pq, "write_table", fail_on_the_third)
    with pytest.raises(RankError, match="No space left on device"):
        rank_crawl(folder, damping=0.5)
    assert _files(folder) == before
    assert _leftovers(folder) == []


def test_a_second_run_on_the_same_folder_is_refused(ranked: Path, tmp_path: Path) -> None:
    folder = _copy(ranked, tmp_path)
    lock = PidLock(folder / "rank" / LOCK_NAME)
    assert lock.acquire() is None
    try:
        with pytest.raises(RankError, match="being computed by another process"):
            rank_crawl(folder)
    finally:
        lock.release()
    rank_crawl(folder)


def test_no_rank_folder_is_made_outside_a_crawl_folder(tmp_path: Path) -> None:
    with pytest.raises(RankError, match=r"no crawl\.db"):
        rank_crawl(tmp_path)
    assert not (tmp_path / "rank").exists()
