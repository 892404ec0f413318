"""Store stage, before a merge: the archived pages a source's ``crawl.db`` does not list.

Data flow: a source's WARC files + its ``crawl.db`` (read-only) -> **merge_check** -> merge
goes on, or refuses the source. A crawl killed with ``kill -9`` can leave response records in
its WARC files (and lines in its CDXJ) whose rows never reached ``crawl.db``: the batch that
would have listed them was lost with the process. Merging the databases as they are would
drop those pages without a word, although the WARC files carried into OUT still hold them.
A resume or ``gossamer recover DIR`` replays such records into ``crawl.db``
(``engine.replay``); a merge only reads its sources, so it refuses one that needs it and
names the command.

The rule is the replay's: a response or revisit record is listed when a ``pages`` row points
at it, or when its URL's row points at a later record (a refetch replaced it; later by
WARC-Date, then file order, then offset), or when a recrawl's visit that left the row as it
was is recorded in the URL's ``schedule`` row at or after it. Damaged stretches are not
counted: ``recover`` reports them, and no row can point into them.

Every own file is read once, but the records rows point at, the bulk of it, are stepped over
by their offset and length rather than inflated: only the small request and metadata records
between them are (20,000 pages, 86 MB: 0.5 s of CPU instead of 1.5 s). A file where a step
does not land on a gzip member is read record by record instead (``warcscan.scan``), as the
replay reads it.
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from gossamer.errors import StoreError
from gossamer.store.connect import faults
from gossamer.store.records import EPOCH, kept_visit_covers, warc_time
from gossamer.store.warcscan import Member, crawl_files, header_fields, order_key, scan

__all__ = ["require_listed", "unlisted_records"]

_RESPONSES = frozenset({"response", "revisit"})
_Key = tuple[int, tuple[str, int, str], int]  # (microseconds, file order, offset)
_GZIP = b"\x1f\x8b\x08"
_GZIP_WBITS = 31
_CHUNK = 1 << 16
_FIRST_READ = 1 << 12


class _OffTrackError(Exception):
    """A step over a listed record did not land where a member starts: read the file whole."""


def require_listed(folder: Path, database_uri: str) -> None:
    """Refuse, naming ``gossamer recover``, a source whose WARC files hold pages its
    ``crawl.db`` (opened by ``database_uri``, read-only) does not list."""
    missing = unlisted_records(folder, database_uri)
    if missing:
        raise StoreError(
            f"{folder}'s WARC files hold {missing} archived record(s) its crawl.db does not"
            f" list (its crawl was killed?): run 'gossamer recover {folder}' before merging"
            " it, which replays them"
        )


def unlisted_records(folder: Path, database_uri: str) -> int:
    """How many response and revisit records of ``folder``'s own WARC files no row lists."""
    with faults("read", folder / "crawl.db"):
        conn = sqlite3.connect(database_uri, uri=True)
        try:
            rows = _rows(conn)
            files = crawl_files(folder / "warc", {name for name, _ in rows})
            missing = 0
            for path in files.ours:
                try:
                    missing += _unlisted_in(path, rows, conn)
                except OSError as exc:
                    raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        finally:
            conn.close()
    return missing


def _rows(conn: sqlite3.Connection) -> dict[tuple[str, int], tuple[str, int]]:
    """(file, offset) -> (url, length) of every row pointing at a record."""
    sql = "SELECT warc_file, warc_offset, url, warc_length FROM pages WHERE warc_file IS NOT NULL"
    return {
        (str(name), int(offset)): (str(url), int(length or 0))
        for name, offset, url, length in conn.execute(sql)
    }


def _unlisted_in(
    path: Path, rows: dict[tuple[str, int], tuple[str, int]], conn: sqlite3.Connection
) -> int:
    name = path.name
    listed = {offset: length for (file, offset), (_, length) in rows.items() if file == name}
    try:
        members = list(_stepping(path, listed))
    except _OffTrackError:
        members = [item for item in scan(path) if isinstance(item, Member)]
    missing = 0
    for member in members:
        if member.headers.get("warc-type") not in _RESPONSES:
            continue
        url = member.headers.get("warc-target-uri", "")
        if rows.get((name, member.offset)) == (url, member.length):
            continue
        when = _usec(warc_time(member.headers.get("warc-date", "")))
        current = _current(conn, url)
        if current is None or current < (when, order_key(name), member.offset):
            missing += not _checked_since(conn, url, when)
    return missing


def _stepping(path: Path, listed: dict[int, int]) -> Iterator[Member]:
    """The members of a file that are not at a listed offset, stepping over those that are.

    ``_OffTrackError`` when a step lands anywhere but on a gzip member or the end of the
    file, or a member cannot be read (damage, a torn tail: ``scan`` sorts those out).
    """
    with path.open("rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        offset = 0
        while offset < size:
            step = listed.get(offset)
            if step:
                stream.seek(offset)
                if stream.read(len(_GZIP)) != _GZIP:
                    raise _OffTrackError
                offset += step
                continue
            data, length = _member_at(stream, offset)
            yield Member(offset, length, data, _headers(data))
            offset += length


def _member_at(stream: BinaryIO, offset: int) -> tuple[bytes, int]:
    """The content of the gzip member at ``offset`` and its compressed length."""
    stream.seek(offset)
    decoder = zlib.decompressobj(_GZIP_WBITS)
    parts: list[bytes] = []
    read = 0
    size = _FIRST_READ  # most members between listed records are small metadata records
    while chunk := stream.read(size):
        read += len(chunk)
        try:
            parts.append(decoder.decompress(chunk))
        except zlib.error as exc:
            raise _OffTrackError from exc
        if decoder.eof:
            return b"".join(parts), read - len(decoder.unused_data)
        size = _CHUNK
    raise _OffTrackError  # the file ends inside the member: a torn tail


def _headers(data: bytes) -> dict[str, str]:
    """The WARC headers of a record, names lower-cased; {} for anything else."""
    end = data.find(b"\r\n\r\n")
    if not data.startswith(b"WARC/1.") or end < 0:
        raise _OffTrackError
    return header_fields(data[:end])


def _current(conn: sqlite3.Connection, url: str) -> _Key | None:
    """When the record ``url``'s row points at was made, as the replay orders records."""
    sql = "SELECT fetched_at, warc_file, warc_offset FROM pages WHERE url = ?"
    row = conn.execute(sql, (url,)).fetchone()
    if row is None:
        return None
    fetched_at, name, offset = row
    when = _usec(datetime.fromtimestamp(float(fetched_at or 0.0), tz=UTC))
    return (when, order_key(name or ""), -1 if offset is None else int(offset))


def _checked_since(conn: sqlite3.Connection, url: str, when: int) -> bool:
    """Whether a recrawl recorded its visit to ``url`` at or after ``when`` in the page's
    schedule row only (a 304, the same content again, a failure: the replay's rule too)."""
    sql = "SELECT checked_at, answer FROM schedule WHERE url = ?"
    try:
        row = conn.execute(sql, (url,)).fetchone()
    except sqlite3.OperationalError:  # a crawl.db from before recrawls (no schedule table)
        return False
    return row is not None and kept_visit_covers(str(row[1]), float(row[0]), when)


def _usec(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)
