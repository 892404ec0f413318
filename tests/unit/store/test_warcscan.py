"""Reading our own WARC files back: damage skipped, torn tails cut exactly, own files told apart."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from gossamer.store.warc import WarcStore
from gossamer.store.warcscan import (
    Damage,
    Member,
    crawl_files,
    read_member,
    repair_tail,
    scan,
    torn_tail,
)

from .test_warc import fixed_ids, fixed_store, sample_results, warcio_check

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "warc"


def written(folder: Path) -> tuple[Path, list[int]]:
    """A small WARC file of the sample exchanges, and the offset where each member ends."""
    store = fixed_store(folder)
    with store:
        for result in sample_results():
            store.write(result, {"via": "http://a.test/"})
    path = store.files[0]
    ends = [0]
    for item in scan(path):
        assert isinstance(item, Member)
        ends.append(item.offset + item.length)
    return path, ends


def test_a_clean_file_is_one_record_per_member(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    items = list(scan(path))
    kinds = [item.headers["warc-type"] for item in items if isinstance(item, Member)]
    assert kinds == ["warcinfo"] + ["response", "request", "metadata"] * len(sample_results())
    assert ends[-1] == path.stat().st_size
    assert torn_tail(path) is None


def test_junk_in_the_middle_is_one_damaged_member_and_the_rest_reads(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    whole = bytearray(path.read_bytes())
    victim = 4  # the second exchange's response member
    middle = (ends[victim] + ends[victim + 1]) // 2
    whole[middle : middle + 8] = b"JUNKJUNK"
    path.write_bytes(bytes(whole))
    items = list(scan(path))
    damage = [item for item in items if isinstance(item, Damage)]
    assert damage == [Damage(ends[victim], ends[victim + 1], "corrupt", 1)]
    assert [item.offset for item in items] == ends[:-1]
    assert torn_tail(path) is None
    assert repair_tail(path) is None
    assert path.read_bytes() == bytes(whole)


def test_junk_between_members_shifts_nothing_else(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[: ends[4]] + b"\0" * 8 + whole[ends[4] :])
    items = list(scan(path))
    assert items[4] == Damage(ends[4], ends[4] + 8, "corrupt", 0)  # no record lost
    assert sum(isinstance(item, Member) for item in items) == len(ends) - 1


def test_a_truncation_at_every_byte_of_the_last_exchange_cuts_exactly_the_torn_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # a thousand repairs; durability aside
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    start = ends[-4]  # the last write(): its response, request and metadata members
    for size in range(start + 1, len(whole)):
        path.write_bytes(whole[:size])
        kept = max(end for end in ends if end <= size)
        cut = repair_tail(path)
        if kept == size:  # the file ends on a member boundary: nothing is torn
            assert cut is None
            assert path.read_bytes() == whole[:size]
            continue
        assert cut is not None
        assert (cut.offset, cut.size) == (kept, size - kept)
        assert path.read_bytes() == whole[:kept]
        assert cut.saved.read_bytes() == whole[kept:size]
        cut.saved.unlink()
    assert warcio_check(path).returncode == 0


class Killed(BaseException):
    """Stands for SIGKILL arriving between two write() calls."""


class ShortWrites:
    """A file whose first write() takes only ``first`` bytes; the process dies before the next."""

    def __init__(self, raw: object, first: int) -> None:
        self._raw = raw
        self._first = first
        self._calls = 0

    def write(self, data: bytes) -> int:
        if self._calls:
            raise Killed
        self._calls += 1
        written: int = self._raw.write(bytes(data)[: self._first])  # type: ignore[attr-defined]
        return written


@pytest.mark.parametrize("first", [1, 250, 500])
def test_writer_killed_between_two_write_calls(tmp_path: Path, first: int) -> None:
    store = WarcStore(tmp_path, clock=lambda: 1_700_000_000.0, make_id=fixed_ids())
    results = sample_results()
    for result in results[:-1]:
        store.write(result, {"via": "http://a.test/"})
    path = store.files[0]
    before = path.read_bytes()
    # Swap in a file that fails the way a kill between two write() calls would.
    raw = store._out
    store._out = ShortWrites(raw, first)  # type: ignore[assignment]
    with pytest.raises(Killed):
        store.write(results[-1], {"via": "http://a.test/"})
    raw.close()  # type: ignore[union-attr]
    torn = path.read_bytes()
    assert len(torn) == len(before) + first
    cut = repair_tail(path)
    assert cut is not None and cut.saved.read_bytes() == torn[cut.offset :]
    # Whole members of the interrupted write stay; only the incomplete one goes.
    assert before == path.read_bytes()[: len(before)]
    assert len(before) <= cut.offset < len(torn)
    assert warcio_check(path).returncode == 0


def test_a_complete_member_holding_half_a_record_is_torn(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    whole = path.read_bytes()
    half = gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 900\r\n\r\nab")
    path.write_bytes(whole + half)
    cut = repair_tail(path)
    assert cut is not None and cut.offset == len(whole) and cut.size == len(half)
    assert path.read_bytes() == whole


def test_junk_at_the_end_is_damage_not_a_torn_tail(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    whole = path.read_bytes() + b"trailing junk"
    path.write_bytes(whole)
    assert list(scan(path))[-1] == Damage(len(whole) - 13, len(whole), "corrupt", 0)
    assert repair_tail(path) is None
    assert path.read_bytes() == whole


def test_a_second_cut_is_kept_in_a_numbered_file(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])
    first = repair_tail(path)
    path.write_bytes(path.read_bytes()[:-3])
    second = repair_tail(path)
    assert first is not None and second is not None
    assert first.saved.name.endswith(".warc.gz.torn")
    assert second.saved.name.endswith(".warc.gz.torn.1")
    assert first.saved.read_bytes() == whole[ends[-2] : -3]


def test_read_member_wants_exactly_one_whole_record(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    data, headers = read_member(whole[ends[1] : ends[2]])
    assert headers["warc-type"] == "response" and data.startswith(b"WARC/1.1")
    for bad in (whole[ends[1] : ends[2] - 1], whole[ends[1] : ends[2] + 1], b"", b"junk"):
        with pytest.raises(ValueError):
            read_member(bad)


def test_own_files_are_named_and_recorded_or_open_with_our_warcinfo(tmp_path: Path) -> None:
    folder = tmp_path / "warc"
    ours, _ = written(folder)
    for prefix in ("gossamer-w0", "gossamer-w1"):
        store = WarcStore(folder, prefix=prefix, make_id=fixed_ids())
        with store:
            store.write(sample_results()[0])
    other = WarcStore(folder, prefix="heritrix")  # not our naming
    other.close()
    lookalike = folder / "gossamer-29990101000000-00001.warc.gz"  # our naming, not our file
    shutil.copy(ours, lookalike)
    (folder / "gossamer-29990101000000-00002.warc.gz").write_bytes(b"")
    files = crawl_files(folder, recorded=set())
    names = {path.name for path in files.ours}
    assert ours.name in names and len(names) == 3
    assert {path.name for path in files.foreign} == {lookalike.name, other.files[0].name}
    # The newest "gossamer" file is not provably ours: no file of that writer is repaired.
    assert sorted(path.name.split("-")[1] for path in files.newest) == ["w0", "w1"]
    # Rows of crawl.db naming a file make it ours even when its warcinfo cannot be read.
    damaged = bytearray(ours.read_bytes())
    damaged[20:28] = b"JUNKJUNK"
    ours.write_bytes(bytes(damaged))
    assert ours not in crawl_files(folder, recorded=set()).ours
    assert ours in crawl_files(folder, recorded={ours.name}).ours


@pytest.mark.skipif(
    not CONFORMANCE.is_dir(), reason=f"conformance files not found at {CONFORMANCE}"
)
def test_foreign_sample_files_are_never_ours(tmp_path: Path) -> None:
    for sample in CONFORMANCE.glob("*.warc.gz"):
        shutil.copy(sample, tmp_path / sample.name)
    files = crawl_files(tmp_path, recorded={"example.warc.gz"})
    assert files.ours == () and files.newest == ()
    assert len(files.foreign) == len(list(CONFORMANCE.glob("*.warc.gz")))
