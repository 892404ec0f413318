"""Reading our own WARC files back: damage skipped, torn tails cut exactly, own files told apart."""

from __future__ import annotations

import gzip
import os
import random
import shutil
from pathlib import Path

import pytest
from isal import isal_zlib

from gossamer.store.warc import WarcStore
from gossamer.store.warcscan import (
    Damage,
    Member,
    crawl_files,
    order_key,
    read_member,
    repair_tail,
    scan,
    torn_tail,
)

from .test_warc import checks_clean, fixed_ids, fixed_store, sample_results

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


def test_a_truncation_at_every_byte_of_the_last_exchange_cuts_that_whole_exchange(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # a thousand repairs; durability aside
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    start = ends[-4]  # the last write(): its response, request and metadata members
    for size in range(start + 1, len(whole)):
        path.write_bytes(whole[:size])
        cut = repair_tail(path)
        if size in ends:  # the file ends on a member boundary: nothing is torn
            assert cut is None
            assert path.read_bytes() == whole[:size]
            continue
        # A response (and request) without the metadata that came in the same write() go
        # with it: replayed alone, the page would lose its depth and referrer.
        kept = start
        assert cut is not None
        assert (cut.offset, cut.size) == (kept, size - kept)
        assert path.read_bytes() == whole[:kept]
        assert cut.saved.read_bytes() == whole[kept:size]
        cut.saved.unlink()
    assert checks_clean(path)


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
    # The interrupted write goes whole: its complete members too.
    assert path.read_bytes() == before
    assert cut.offset == len(before)
    assert checks_clean(path)


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
    assert first.saved.read_bytes() == whole[ends[-4] : -3]  # the whole torn exchange


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
    with other:
        other.write(sample_results()[0])
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


# -- found by mutation testing --------------------------------------------------------------
# Hand-made files: members of our own gzip form around damage placed at the edges of the
# 64 KiB blocks the scanner reads in.

CHUNK = 1 << 16  # the block size warcscan reads in
OUR_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"  # what isa-l writes first
# A member start that cannot be decoded: our header, XFL and OS, then a deflate block of the
# reserved type 3, which inflate rejects at once.
BAD = OUR_HEADER + b"\x00\x03\x07"


def warc_record(body: bytes, extra: bytes = b"") -> bytes:
    head = b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Date: 2023-11-14T22:13:20Z\r\n" + extra
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body + b"\r\n\r\n"


def member(data: bytes) -> bytes:
    compressed: bytes = isal_zlib.compress(data, 1, 31)
    assert compressed.startswith(OUR_HEADER)
    return compressed


def layout(path: Path, parts: list[bytes]) -> list[int]:
    """Write ``parts`` one after the other; return where each starts (and the file's end)."""
    path.write_bytes(b"".join(parts))
    starts = [0]
    for part in parts:
        starts.append(starts[-1] + len(part))
    return starts


def spans(path: Path) -> list[tuple[str, int, int, int | str]]:
    """What a scan yields, as (kind, start, end, records or WARC-Type)."""
    out: list[tuple[str, int, int, int | str]] = []
    for item in scan(path):
        if isinstance(item, Member):
            out.append(
                ("member", item.offset, item.offset + item.length, item.headers["warc-type"])
            )
        else:
            out.append((item.reason, item.offset, item.end, item.records))
    return out


def test_a_bad_first_byte_and_a_one_byte_gap_resync_on_the_very_next_member(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gaps.warc.gz"
    one, two, three = (member(warc_record(b"%d" % n)) for n in (1, 2, 3))
    at = layout(path, [b"\0", one, b"\0", two, three])
    assert spans(path) == [
        ("corrupt", 0, 1, 0),
        ("member", at[1], at[2], "resource"),
        ("corrupt", at[2], at[3], 0),
        ("member", at[3], at[4], "resource"),
        ("member", at[4], at[5], "resource"),
    ]


def test_resync_skips_member_starts_that_do_not_decode_and_takes_the_first_good_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad-starts.warc.gz"
    good = [member(warc_record(b"record %d" % n)) for n in range(4)]
    at = layout(path, [good[0], BAD + b"J" * 5 + BAD, *good[1:]])
    assert spans(path) == [
        ("member", 0, at[1], "resource"),
        ("corrupt", at[1], at[2], 2),  # two member starts in the stretch
        ("member", at[2], at[3], "resource"),
        ("member", at[3], at[4], "resource"),
        ("member", at[4], at[5], "resource"),
    ]


def test_a_member_starting_across_a_block_edge_is_found_and_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "edge.warc.gz"
    # A record bigger than two blocks even compressed, so it is decoded in pieces.
    big = warc_record(random.Random(18).randbytes(150_000))
    first, last = member(warc_record(b"first")), member(warc_record(b"last"))
    # Resync searches from one byte past the damage; the big member's magic number then
    # straddles the end of the first block it reads.
    at = layout(path, [first, BAD + b"J" * (CHUNK - len(BAD)), member(big), last])
    assert at[2] == at[1] + 1 + CHUNK - 1
    items = list(scan(path))
    assert [(type(item), item.offset) for item in items] == [
        (Member, 0),
        (Damage, at[1]),
        (Member, at[2]),
        (Member, at[3]),
    ]
    assert items[1] == Damage(at[1], at[2], "corrupt", 1)
    found = items[2]
    assert isinstance(found, Member)
    assert (found.length, found.data) == (at[3] - at[2], big)
    assert found.length > 2 * CHUNK


def test_member_starts_are_counted_once_across_block_edges(tmp_path: Path) -> None:
    path = tmp_path / "long-damage.warc.gz"
    junk = bytearray(b"J" * (2 * CHUNK + 15))
    for start in (0, CHUNK - 1, 2 * CHUNK):  # at the start, straddling, right after an edge
        junk[start : start + len(BAD)] = BAD
    first, last = member(warc_record(b"first")), member(warc_record(b"last"))
    at = layout(path, [first, bytes(junk), last])
    assert spans(path) == [
        ("member", 0, at[1], "resource"),
        ("corrupt", at[1], at[2], 3),
        ("member", at[2], at[3], "resource"),
    ]


def test_record_headers_are_read_leniently_but_a_block_needs_its_length(tmp_path: Path) -> None:
    path = tmp_path / "headers.warc.gz"
    odd = warc_record(b"abc", extra=b"X-Note: caf\xe9\r\nWARC-Target-URI: http://a.test:8080/x\r\n")
    unframed = b"WARC/1.1\r\nWARC-Type: resource\r\n\r\n\r\n\r\n"  # no Content-Length
    at = layout(path, [member(odd), member(unframed)])
    expected = {
        "warc-type": "resource",
        "warc-date": "2023-11-14T22:13:20Z",  # split at the first colon only
        "x-note": "caf\ufffd",  # not UTF-8: replaced, not an error
        "warc-target-uri": "http://a.test:8080/x",
        "content-length": "3",
    }
    assert list(scan(path)) == [
        Member(0, at[1], odd, expected),
        Damage(at[1], at[2], "partial record"),
    ]
    assert read_member(member(odd)) == (odd, expected)
    with pytest.raises(ValueError, match=r"^not a complete WARC record$"):
        read_member(member(unframed))


def test_read_member_says_what_is_wrong(tmp_path: Path) -> None:
    path, ends = written(tmp_path)
    whole = path.read_bytes()
    for not_one in (whole[ends[1] : ends[2] - 1], whole[ends[1] : ends[2] + 1], b""):
        with pytest.raises(ValueError, match=r"^not exactly one gzip member$"):
            read_member(not_one)
    with pytest.raises(ValueError, match=r"^not a valid gzip member: .*\S"):
        read_member(b"not a gzip member at all")
    half = member(b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 900\r\n\r\nab")
    with pytest.raises(ValueError, match=r"^not a complete WARC record$"):
        read_member(half)


def test_every_further_cut_gets_the_next_number(tmp_path: Path) -> None:
    path, _ = written(tmp_path)
    saved = []
    for _ in range(3):
        path.write_bytes(path.read_bytes()[:-3])
        cut = repair_tail(path)
        assert cut is not None and cut.path == path
        saved.append(cut.saved.name)
    assert saved == [path.name + suffix for suffix in (".torn", ".torn.1", ".torn.2")]


def test_own_files_in_write_order_and_the_newest_by_serial(tmp_path: Path) -> None:
    def make(name: str, data: bytes = b"x") -> Path:
        (tmp_path / name).write_bytes(data)
        return tmp_path / name

    make("gossamer-20250101000000-00000.warc.gz", b"")  # empty: neither ours nor foreign
    other_writer = make("gossamer-w1-20251231000000-00000.warc.gz")
    five_digits = make("gossamer-20260101000000-99999.warc.gz")
    six_digits = make("gossamer-20260101000000-100000.warc.gz")
    # A later time stamp but a lower serial: the clock was set back between two runs.
    stamped_later = make("gossamer-20260105000000-00003.warc.gz")
    foreign = make("other.warc.gz")
    # Our naming, but nothing that can be read: foreign, not an error.
    dangling = tmp_path / "gossamer-20260106000000-00009.warc.gz"
    dangling.symlink_to(tmp_path / "gone")
    folder = tmp_path / "gossamer-20260107000000-00010.warc.gz"
    folder.mkdir()
    (folder / "inside").write_bytes(b"x")
    recorded = {p.name for p in (other_writer, five_digits, six_digits, stamped_later)}
    files = crawl_files(tmp_path, recorded)
    assert set(files.ours) == {tmp_path / name for name in recorded}
    # Write order: by time stamp, then serial as a number; other names first.
    assert [p for p in files.ours if p != stamped_later] == [other_writer, five_digits, six_digits]
    assert files.foreign == (foreign, dangling, folder)
    # The newest file of a writer is the one with the highest serial: the one it opened last.
    assert set(files.newest) == {other_writer, six_digits}
    assert sorted(["b-1.warc.gz", six_digits.name, "a.warc.gz"], key=order_key) == [
        "a.warc.gz",
        "b-1.warc.gz",
        six_digits.name,
    ]


def test_a_member_holding_more_than_one_record_is_not_one_record() -> None:
    one = warc_record(b"abc")
    assert read_member(member(one))[0] == one
    for more in (one + b"junk", one + one):
        with pytest.raises(ValueError, match=r"^not a complete WARC record$"):
            read_member(member(more))
