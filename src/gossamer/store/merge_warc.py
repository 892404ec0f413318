"""Store stage, merging crawl folders, the archive side: WARC files and ``index.cdxj``.

Data flow: the WARC files and CDXJ lines of several crawl folders (the workers of a shared
crawl) -> **merge_warc** -> one ``OUT/warc`` and one sorted ``OUT/index.cdxj``; the
:class:`Relocation` of each source folder then rewrites its ``pages`` rows
(``gossamer.store.merge``).

Names. A WARC file is named after the writer that wrote it (``gossamer``, or ``gossamer-wN``
for worker N of a ``--workers`` crawl), its opening time and a serial, so two workers that
opened a file in the same second wrote the same name. In ``OUT/warc`` every writer of every
source gets its own number: the files of the first source's writer become
``gossamer-w1-STAMP-SERIAL.warc.gz``, the next writer's ``gossamer-w2-...``, and so on. They
keep the crawl's naming, so ``gossamer recover OUT`` still knows them as the crawl's own; a
file of another naming (not written by Gossamer) is kept as ``sK-NAME`` for the K-th source.

Bytes. A file is hard-linked into ``OUT/warc`` (copied where a link cannot be made, across
file systems): nothing in Gossamer changes a complete WARC file, so sharing it is safe. The
exception is a file holding revisit records (exact duplicates, see
``gossamer.store.revisits``): each names its original's file, offset and length in
``Gossamer-Refers-To-Location``, and that file has a new name now. Such a file is rebuilt:
every other record is copied byte for byte, each revisit record gets the new location in
that one header field and is compressed again (its block, and so its digests, are
unchanged). A revisit's member may change length, which moves the records after it; the
file's :class:`Placement` remembers each move, and every reference (pages rows, CDXJ lines,
later revisits) goes through it. The revisit records are found by the source's own CDXJ
lines (``mime`` ``warc/revisit``), complete in any crawl that ended or was resumed or
recovered; a revisit's original is always written before it, by the same writer, so files
are placed in write order and every original is placed before its revisits.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from isal import isal_zlib

from gossamer.errors import StoreError
from gossamer.store.cdxj import parse_cdxj_line, sort_cdxj
from gossamer.store.revisits import LOCATION_FIELD, parse_location
from gossamer.store.warcscan import CRAWL_NAME, order_key, read_member

__all__ = [
    "Placed",
    "Placement",
    "Relocation",
    "merge_index",
    "place_files",
    "plan_names",
    "revisit_records",
    "warc_files",
]

_GZIP_WBITS = 31
_LEVEL = 1  # as WarcStore compresses
_COPY_CHUNK = 1 << 20
# The end of a CDXJ line as ``cdxj_line`` writes it (json.dumps, these three fields last); a
# quote inside a JSON string is escaped, so this cannot match inside the URL.
_TAIL = re.compile(
    r'"length": "(?P<length>\d+)", "offset": "(?P<offset>\d+)", '
    r'"filename": "(?P<file>[^"\\]+)"\}\n$'
)


def plan_names(sources: Sequence[Path]) -> list[dict[str, str]]:
    """For each source folder, in order: its WARC file names -> their names in ``OUT/warc``."""
    plans: list[dict[str, str]] = []
    writers = 0
    for position, folder in enumerate(sources, 1):
        names = sorted(path.name for path in warc_files(folder))
        found = {match["prefix"] for name in names if (match := CRAWL_NAME.match(name))}
        numbers: dict[str, int] = {}
        for prefix in sorted(found, key=_writer_order):
            writers += 1
            numbers[prefix] = writers
        plan: dict[str, str] = {}
        for name in names:
            match = CRAWL_NAME.match(name)
            if match is None:
                plan[name] = f"s{position}-{name}"
            else:
                number = numbers[match["prefix"]]
                plan[name] = f"gossamer-w{number}-{match['stamp']}-{match['serial']}.warc.gz"
        plans.append(plan)
    return plans


def _writer_order(prefix: str) -> int:
    """``gossamer`` first, then ``gossamer-w0``, ``gossamer-w1``, ... by number."""
    return -1 if prefix == "gossamer" else int(prefix.rsplit("-w", 1)[1])


def warc_files(folder: Path) -> list[Path]:
    """The WARC files of a crawl folder's ``warc/`` (a ``StoreError`` when it cannot be listed)."""
    warc = folder / "warc"
    try:
        return [path for path in warc.glob("*.warc.gz") if path.is_file()]
    except OSError as exc:
        raise StoreError(f"cannot list WARC folder {warc}: {exc.strerror}") from exc


@dataclass(slots=True)
class Placement:
    """Where one source file went: its new name, and how its records moved in it."""

    name: str
    starts: list[int] = field(default_factory=list)  # old offsets where a new shift begins
    shifts: list[int] = field(default_factory=list)  # bytes moved from that offset on
    lengths: dict[int, int] = field(default_factory=dict)  # rewritten member: old offset -> length

    def offset(self, old: int) -> int:
        found = bisect_right(self.starts, old)
        return old + self.shifts[found - 1] if found else old

    def moved(self, old_offset: int, old_length: int, new_length: int) -> None:
        """A member at ``old_offset`` was rewritten with ``new_length`` bytes."""
        if new_length == old_length:
            return
        self.lengths[old_offset] = new_length
        shift = (self.shifts[-1] if self.shifts else 0) + new_length - old_length
        self.starts.append(old_offset + old_length)
        self.shifts.append(shift)


class Relocation:
    """Where each WARC file of one source folder went, and each record in it."""

    def __init__(self) -> None:
        self.places: dict[str, Placement] = {}

    def name(self, old: str | None) -> str | None:
        place = self.places.get(old) if old is not None else None
        return old if place is None else place.name

    def offset(self, file: str | None, offset: int | None) -> int | None:
        place = self.places.get(file) if file is not None else None
        return offset if place is None or offset is None else place.offset(offset)

    def length(self, file: str | None, offset: int | None, length: int | None) -> int | None:
        place = self.places.get(file) if file is not None else None
        if place is None or offset is None or length is None:
            return length
        return place.lengths.get(offset, length)

    def line(self, line: str) -> str:
        """A CDXJ line of this source, pointing where its record is now."""
        line = line if line.endswith("\n") else line + "\n"
        tail = _TAIL.search(line)
        if tail is None:
            return self._parsed(line)
        # A line as Gossamer writes it: its three last fields change in place.
        place = self.places.get(tail["file"])
        if place is None:
            return line
        start = int(tail["offset"])
        length = place.lengths.get(start, int(tail["length"]))
        where = f'"length": "{length}", "offset": "{place.offset(start)}"'
        return f'{line[: tail.start()]}{where}, "filename": "{place.name}"}}\n'

    def _parsed(self, line: str) -> str:
        """Any other CDXJ line, through its JSON fields."""
        parsed = parse_cdxj_line(line)
        if parsed is None:
            return line
        key, fields = parsed
        file, offset, length = _where(fields)
        if file in self.places and offset is not None:
            new_length = self.length(file, offset, length)
            fields["filename"] = self.name(file)
            fields["offset"] = _like(fields["offset"], self.offset(file, offset))
            if "length" in fields:
                fields["length"] = _like(fields["length"], new_length)
        return f"{key} {json.dumps(fields)}\n"


def _like(old: Any, value: int | None) -> Any:
    """``value`` as the line had it: CDXJ writers keep numbers as strings."""
    return str(value) if isinstance(old, str) else value


def _where(fields: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    file = fields.get("filename")
    return (
        file if isinstance(file, str) else None,
        _number(fields, "offset"),
        _number(fields, "length"),
    )


def _number(fields: dict[str, Any], key: str) -> int | None:
    text = str(fields.get(key))
    return int(text) if text.isdigit() else None


def _index_files(folder: Path) -> list[Path]:
    # index-wN.cdxj too: what a --workers crawl stopped by a crash leaves before its merge.
    return sorted(folder.glob("index*.cdxj"))


def _index_lines(folder: Path) -> Iterator[str]:
    for path in _index_files(folder):
        try:
            with path.open(encoding="utf-8", newline="\n") as lines:
                yield from lines
        except OSError as exc:
            raise StoreError(f"cannot read CDXJ index {path}: {exc.strerror}") from exc


def revisit_records(folder: Path) -> dict[str, list[tuple[int, int]]]:
    """(offset, length) of every revisit record the folder's CDXJ index lists, by file."""
    found: dict[str, set[tuple[int, int]]] = {}
    for line in _index_lines(folder):
        if "warc/revisit" not in line:
            continue
        parsed = parse_cdxj_line(line)
        if parsed is None or parsed[1].get("mime") != "warc/revisit":
            continue
        file, offset, length = _where(parsed[1])
        if file is not None and offset is not None and length is not None:
            found.setdefault(file, set()).add((offset, length))
    return {file: sorted(marks) for file, marks in found.items()}


@dataclass(slots=True)
class Placed:
    """How the files of the merge went: linked, copied, rebuilt; revisit records repointed."""

    linked: int = 0
    copied: int = 0
    rebuilt: int = 0
    repointed: int = 0


def place_files(folder: Path, target: Path, plan: dict[str, str], placed: Placed) -> Relocation:
    """Put ``folder``'s WARC files into ``target`` under the names of ``plan``; where they went."""
    relocation = Relocation()
    revisits = revisit_records(folder)
    for old in sorted(plan, key=order_key):
        place = relocation.places[old] = Placement(plan[old])
        source, copy = folder / "warc" / old, target / place.name
        try:
            if revisits.get(old):
                placed.repointed += _rebuild(source, copy, revisits[old], place, relocation)
                placed.rebuilt += 1
            elif _link(source, copy):
                placed.linked += 1
            else:
                shutil.copyfile(source, copy)
                placed.copied += 1
        except OSError as exc:
            raise StoreError(f"cannot place {source} as {copy}: {exc.strerror}") from exc
    return relocation


def _link(source: Path, target: Path) -> bool:
    """Hard-link ``target`` to ``source``; False where the file system will not."""
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:
        return False  # another file system, or one without hard links: the caller copies
    return True


def _rebuild(
    source: Path,
    target: Path,
    marks: list[tuple[int, int]],
    place: Placement,
    relocation: Relocation,
) -> int:
    """Copy ``source`` to ``target``, repointing the revisit records at ``marks``; how many."""
    repointed = 0
    with source.open("rb") as src, target.open("xb") as out:
        done = 0
        for offset, length in marks:
            if offset < done:
                continue  # overlapping index lines: the first one won
            _copy(src, out, done, offset - done)
            src.seek(offset)
            member = src.read(length)
            rewritten = _repointed(member, relocation)
            out.write(rewritten)
            if rewritten is not member:
                place.moved(offset, length, len(rewritten))
                repointed += 1
            done = offset + len(member)  # (short only where a bad index line ran off the end)
        _copy(src, out, done, None)
    return repointed


def _copy(src: BinaryIO, out: BinaryIO, start: int, size: int | None) -> None:
    src.seek(start)
    while size is None or size > 0:
        chunk = src.read(_COPY_CHUNK if size is None else min(size, _COPY_CHUNK))
        if not chunk:
            return
        out.write(chunk)
        if size is not None:
            size -= len(chunk)


def _repointed(member: bytes, relocation: Relocation) -> bytes:
    """The revisit record in ``member`` pointing at its original's new place; ``member``
    itself when it is no such record or its original is not in this folder."""
    try:
        data, headers = read_member(member)
    except ValueError:
        return member
    where = parse_location(headers.get(LOCATION_FIELD.lower(), ""))
    if headers.get("warc-type") != "revisit" or where is None or where[0] not in relocation.places:
        return member
    file, offset, length = where
    value = f"{relocation.name(file)} {relocation.offset(file, offset)}"
    value += f" {relocation.length(file, offset, length)}"
    head_end = data.find(b"\r\n\r\n")
    lines = data[:head_end].split(b"\r\n")
    name = LOCATION_FIELD.lower().encode() + b":"
    lines = [
        LOCATION_FIELD.encode() + b": " + value.encode() if line.lower().startswith(name) else line
        for line in lines
    ]
    compressed: bytes = isal_zlib.compress(
        b"\r\n".join(lines) + data[head_end:], _LEVEL, _GZIP_WBITS
    )
    return compressed


def merge_index(target: Path, sources: Sequence[tuple[Path, Relocation]]) -> int:
    """Write the CDXJ lines of every source, pointing at the merged files, into ``target``,
    sorted (and without repeats); how many lines it holds."""
    try:
        with target.open("x", encoding="utf-8", newline="\n") as out:
            for folder, relocation in sources:
                out.writelines(relocation.line(line) for line in _index_lines(folder))
    except OSError as exc:
        raise StoreError(f"cannot write CDXJ index {target}: {exc.strerror}") from exc
    sort_cdxj(target)
    try:
        with target.open("rb") as lines:
            return sum(1 for _ in lines)
    except OSError as exc:
        raise StoreError(f"cannot read CDXJ index {target}: {exc.strerror}") from exc
