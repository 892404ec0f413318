"""A merge's scratch folder: ``OUT.partial-PID`` is removed by the next merge into OUT once
the merge that made it is gone (killed), and kept while that merge may still be running."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from gossamer.lockfile import PidLock
from gossamer.store.merge import merge_crawls
from gossamer.store.merge_scratch import remove_stale_scratch

from .test_merge import START, Page, html, write_crawl

LOCK = ".gossamer-merge.lock"
GOSSAMER = Path(sys.executable).parent / "gossamer"

# A merge killed (SIGKILL, as by kill -9) once its WARC files and index are in the scratch
# folder, while it would fill crawl.db.
_KILLED_MID_WAY = """
import os, signal, sys
from pathlib import Path
import gossamer.store.merge as merge
def die(*args):
    os.kill(os.getpid(), signal.SIGKILL)
merge.merge_databases = die
merge.merge_crawls(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
"""


@pytest.fixture
def sources(tmp_path: Path) -> list[Path]:
    return [
        write_crawl(tmp_path / "one", [[Page("http://a.test/", html("a"))]]),
        write_crawl(tmp_path / "two", [[Page("http://b.test/", html("b"), START + 1)]]),
    ]


def dead_pid() -> int:
    """The number of a process that has ended (and was waited for)."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def plant(folder: Path) -> Path:
    (folder / "warc").mkdir(parents=True)
    (folder / "warc" / "gossamer-w0-00000.warc.gz").write_bytes(b"half a file")
    return folder


def test_a_merge_removes_the_scratch_folders_of_dead_merges_into_its_out(
    sources: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    dead = dead_pid()
    stale = plant(tmp_path / f"out.partial-{dead}")
    running = plant(tmp_path / f"out.partial-{dead + 1}")  # locked: its merge still runs
    alive = plant(tmp_path / "out.partial-1")  # the number of a running process (init)
    other = plant(tmp_path / f"elsewhere.partial-{dead}")  # another OUT's
    lookalike = tmp_path / f"out.partial-{dead}x"
    lookalike.mkdir()
    lock = PidLock(running / LOCK)
    assert lock.acquire() is None
    try:
        merge_crawls(out, sources)
    finally:
        lock.release()
    assert not stale.exists()
    assert running.is_dir() and alive.is_dir() and other.is_dir() and lookalike.is_dir()
    assert not (out / LOCK).exists()
    assert remove_stale_scratch(out) == [running]  # once its lock is let go


def test_a_merge_killed_mid_way_leaves_a_folder_the_next_merge_removes(
    sources: list[Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_WAY, str(out), *map(str, sources)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    (left,) = tmp_path.glob("out.partial-*")
    assert (left / "index.cdxj").is_file() and (left / LOCK).is_file()
    again = subprocess.run(
        [GOSSAMER, "merge", out, *sources], capture_output=True, text=True, check=False
    )
    assert again.returncode == 0, again.stderr
    assert f"removed {left}, left by a merge that was stopped" in again.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "out", "two"]
    assert not (out / LOCK).exists()
