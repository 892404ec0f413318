"""Store stage, read back: walk a crawl's own WARC files member by member, without trusting them.

Data flow: **store** (the files ``WarcStore`` wrote) -> resume and recover (replay into
``crawl.db``), torn-tail repair. The index and the web UI read single records instead
(``gossamer.index.archive``) and use ``read_member`` from here.

Every record is its own gzip member, so a file is a sequence of members. ``scan`` yields each
complete member that holds one complete WARC record, and a ``Damage`` for every stretch it
cannot use; after damage it resynchronises at the next offset where a whole gzip member holding
a whole ``WARC/1.`` record starts, and carries on. Nothing here writes, except ``repair_tail``,
which cuts only a torn tail (what a kill in the middle of a write leaves: the whole exchange
it tore) and keeps a copy of what it cut.

Which files are the crawl's own is decided by ``crawl_files``: the crawl's naming, and either
rows of ``crawl.db`` pointing into the file or a first warcinfo record written by Gossamer for
that very file name. Anything else in the folder is foreign and is never read or changed.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Collection, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from isal import isal_zlib

__all__ = [
    "CRAWL_NAME",
    "INFLATE_ERRORS",
    "CrawlFiles",
    "Cut",
    "Damage",
    "Member",
    "crawl_files",
    "header_fields",
    "order_key",
    "read_member",
    "repair_tail",
    "scan",
]

_GZIP_WBITS = 31
_MAGIC = b"\x1f\x8b\x08"
# The header isal's one-shot compression writes (no name, mtime 0): how damaged stretches are
# searched for member starts, to estimate how many records they held.
_OUR_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
_CHUNK = 1 << 16
INFLATE_ERRORS: tuple[type[Exception], ...] = (cast(type[Exception], isal_zlib.error),)
_SOFTWARE = b"software: Gossamer/"

# gossamer-20261122010203-00007.warc.gz, or gossamer-w1-... for worker 1 of a --workers crawl
CRAWL_NAME = re.compile(
    r"^(?P<prefix>gossamer(?:-w\d+)?)-(?P<stamp>\d{14})-(?P<serial>\d{5,})\.warc\.gz$"
)


@dataclass(frozen=True, slots=True)
class Member:
    """One complete gzip member holding one complete WARC record."""

    offset: int
    length: int  # compressed
    data: bytes  # the record, decompressed
    headers: dict[str, str]  # WARC headers, names lower-cased


@dataclass(frozen=True, slots=True)
class Damage:
    """A stretch of a file that holds no usable record.

    ``reason`` is "corrupt" (not gzip, a bad checksum, or junk), "truncated" (an incomplete
    member ending the file) or "partial record" (a complete member whose record is cut short).
    ``records`` estimates how many records the stretch held (member starts found in it).
    """

    offset: int
    end: int
    reason: str
    records: int = 1


@dataclass(frozen=True, slots=True)
class Cut:
    """A torn tail cut off a WARC file; ``saved`` holds the bytes cut, so it can be undone."""

    path: Path
    offset: int
    size: int
    saved: Path


@dataclass(frozen=True, slots=True)
class CrawlFiles:
    """A WARC folder sorted out: the crawl's own files (in write order) and the rest."""

    ours: tuple[Path, ...]
    foreign: tuple[Path, ...]
    newest: tuple[Path, ...]  # the newest own file of each writer: the only ones a kill tears


def order_key(name: str) -> tuple[str, int, str]:
    """Write order of WARC files by name: timestamp, then serial (foreign names sort first)."""
    match = CRAWL_NAME.match(name)
    if match is None:
        return ("", -1, name)
    return (match["stamp"], int(match["serial"]), name)


def crawl_files(folder: Path, recorded: Collection[str]) -> CrawlFiles:
    """Sort ``folder``'s ``*.warc.gz`` files into the crawl's own and foreign ones.

    Own: the crawl's naming, and either named by a ``pages`` row (``recorded``) or opening
    with a warcinfo record Gossamer wrote for that file name (the newest file may have no
    rows yet). Empty files are neither: there is nothing in them to read or to repair.
    """
    ours: list[Path] = []
    foreign: list[Path] = []
    latest: dict[str, Path] = {}  # the newest file of each writer, ours or not
    for path in sorted(folder.glob("*.warc.gz"), key=lambda p: order_key(p.name)):
        match = CRAWL_NAME.match(path.name)
        if match is not None:
            known = latest.get(match["prefix"])
            if known is None or _serial(known) < int(match["serial"]):
                latest[match["prefix"]] = path
            if _is_empty(path):
                continue
        if match is not None and (path.name in recorded or _gossamer_warcinfo(path)):
            ours.append(path)
        else:
            foreign.append(path)
    # A newest file that is not provably ours is never repaired, and the file before it is
    # complete: a writer finishes a file before it opens the next.
    owned = set(ours)
    newest = tuple(path for path in latest.values() if path in owned)
    return CrawlFiles(tuple(ours), tuple(foreign), newest)


def _serial(path: Path) -> int:
    match = CRAWL_NAME.match(path.name)
    return int(match["serial"]) if match else -1


def _is_empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def _gossamer_warcinfo(path: Path) -> bool:
    """Whether the file opens with the warcinfo record ``WarcStore`` writes for it."""
    try:
        with path.open("rb") as stream:
            data = _one_member(stream, 0)
    except OSError:
        return False
    if data is None:
        return False
    headers = _complete_record(data)
    return (
        headers is not None
        and headers.get("warc-type") == "warcinfo"
        and headers.get("warc-filename") == path.name
        and _SOFTWARE in data
    )


def scan(path: Path) -> Iterator[Member | Damage]:
    """Every member of a file, in order: records, and the stretches that hold none.

    Raises ``OSError`` if the file cannot be opened or read.
    """
    with path.open("rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        offset = 0
        while offset < size:
            stop, reason = yield from _members(stream, offset)
            if reason == "end":
                return
            if reason == "truncated":
                yield Damage(stop, size, "truncated")
                return
            resume_at = _resync(stream, stop + 1, size)
            end = size if resume_at is None else resume_at
            yield Damage(stop, end, "corrupt", _count_headers(stream, stop, end))
            offset = end


def _members(stream: BinaryIO, start: int) -> Generator[Member | Damage, None, tuple[int, str]]:
    """Decode members from ``start`` until the file ends or one fails; returns where and why."""
    stream.seek(start)
    pos = fed = start
    decoder = isal_zlib.decompressobj(_GZIP_WBITS)
    parts: list[bytes] = []
    while chunk := stream.read(_CHUNK):
        fed += len(chunk)
        data = chunk
        while data:
            try:
                parts.append(decoder.decompress(data))
            except INFLATE_ERRORS:
                return pos, "corrupt"
            if not decoder.eof:
                break
            data = decoder.unused_data
            end = fed - len(data)
            record = b"".join(parts)
            headers = _complete_record(record)
            if headers is None:
                yield Damage(pos, end, "partial record")
            else:
                yield Member(pos, end - pos, record, headers)
            pos, parts = end, []
            decoder = isal_zlib.decompressobj(_GZIP_WBITS)
    return pos, ("truncated" if pos < fed else "end")


def _one_member(stream: BinaryIO, offset: int) -> bytes | None:
    """The decompressed content of a complete member starting at ``offset``, else None."""
    stream.seek(offset)
    decoder = isal_zlib.decompressobj(_GZIP_WBITS)
    parts: list[bytes] = []
    while chunk := stream.read(_CHUNK):
        try:
            parts.append(decoder.decompress(chunk))
        except INFLATE_ERRORS:
            return None
        if decoder.eof:
            return b"".join(parts)
    return None


def read_member(blob: bytes) -> tuple[bytes, dict[str, str]]:
    """Decompress one member read at a known offset; ``ValueError`` unless it is exactly one
    complete gzip member holding one complete WARC record."""
    decoder = isal_zlib.decompressobj(_GZIP_WBITS)
    try:
        data = decoder.decompress(blob)
    except INFLATE_ERRORS as exc:
        raise ValueError(f"not a valid gzip member: {exc}") from exc
    if not decoder.eof or decoder.unused_data:
        raise ValueError("not exactly one gzip member")
    headers = _complete_record(data)
    if headers is None:
        raise ValueError("not a complete WARC record")
    return data, headers


def header_fields(head: bytes) -> dict[str, str]:
    """A WARC record's header block (its version line first) as fields, names lower-cased."""
    headers: dict[str, str] = {}
    for line in head.decode("utf-8", "replace").split("\r\n")[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return headers


def _complete_record(data: bytes) -> dict[str, str] | None:
    """The WARC headers of ``data`` if it is one whole record (header, block, CRLF CRLF)."""
    if not data.startswith(b"WARC/1."):
        return None
    head_end = data.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    headers = header_fields(data[:head_end])
    length = headers.get("content-length", "")
    if not length.isdigit():
        return None
    block_end = head_end + 4 + int(length)
    # Exactly one record: its block, the closing CRLF CRLF, and nothing after it.
    return headers if data[block_end:] == b"\r\n\r\n" else None


def _resync(stream: BinaryIO, start: int, size: int) -> int | None:
    """The next offset at or after ``start`` where a complete member with a record starts."""
    pos = start
    while pos < size:
        stream.seek(pos)
        block = stream.read(_CHUNK + len(_MAGIC) - 1)
        found = block.find(_MAGIC)
        while found >= 0:
            candidate = pos + found
            data = _one_member(stream, candidate)
            if data is not None and _complete_record(data) is not None:
                return candidate
            found = block.find(_MAGIC, found + 1)
        pos += _CHUNK
    return None


def _count_headers(stream: BinaryIO, start: int, end: int) -> int:
    count = 0
    pos = start
    while pos < end:
        stream.seek(pos)
        block = stream.read(min(_CHUNK, end - pos) + len(_OUR_HEADER) - 1)
        count += block[: end - pos + len(_OUR_HEADER) - 1].count(_OUR_HEADER)
        pos += _CHUNK
    return count


def torn_tail(path: Path) -> Damage | None:
    """The torn tail of a file, if it has one: after the last complete member, either an
    incomplete member (a kill mid-write), or a last complete member holding a partial record.
    Damage anywhere else, junk at the end included, is not a torn tail.

    An exchange (response or revisit, request, metadata) is written in one ``write()``, so a
    tear inside it leaves its first records whole: in a file whose exchanges carry metadata
    records, the tail starts at the last exchange's response when its metadata record is
    missing. Replayed without it, that response would count as a depth-0 page with no
    referrer; cut, its URL is fetched again."""
    last: Member | Damage | None = None
    exchange: list[Member] = []  # the members since the last response or revisit record
    with_metadata = False  # the file's exchanges carry metadata records
    for item in scan(path):
        last = item
        if not isinstance(item, Member):
            continue
        kind = item.headers.get("warc-type")
        if kind in ("response", "revisit"):
            exchange = [item]
        elif exchange:
            exchange.append(item)
        with_metadata = with_metadata or kind == "metadata"
    if not (isinstance(last, Damage) and last.reason in ("truncated", "partial record")):
        return None
    if exchange and with_metadata and not _described(exchange):
        return Damage(exchange[0].offset, last.end, last.reason, len(exchange) + last.records)
    return last


def _described(exchange: list[Member]) -> bool:
    """Whether the response or revisit record opening ``exchange`` has its metadata record."""
    record_id = exchange[0].headers.get("warc-record-id")
    return any(
        member.headers.get("warc-type") == "metadata"
        and member.headers.get("warc-concurrent-to") == record_id
        for member in exchange[1:]
    )


def repair_tail(path: Path) -> Cut | None:
    """Cut a torn tail off ``path``; the bytes cut are kept in ``<name>.torn`` first.

    Only for the newest file of a writer that this crawl wrote: nothing else can be torn.
    Raises ``OSError`` if the file cannot be read or written.
    """
    tail = torn_tail(path)
    if tail is None:
        return None
    saved = _torn_name(path)
    with path.open("r+b") as stream:
        stream.seek(tail.offset)
        with saved.open("xb") as copy:
            shutil.copyfileobj(stream, copy)
            copy.flush()
            os.fsync(copy.fileno())
        # Only once the copy is safe on disk is anything cut.
        stream.truncate(tail.offset)
        os.fsync(stream.fileno())
    return Cut(path, tail.offset, tail.end - tail.offset, saved)


def _torn_name(path: Path) -> Path:
    candidate = path.with_name(f"{path.name}.torn")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.torn.{number}")
        number += 1
    return candidate
