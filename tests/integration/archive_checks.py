"""What must hold in a crawl folder after any fault, resume or recover.

* ``crawl.db`` agrees with the WARC files: every ``pages`` row that points into them points at
  its URL's last response record (by WARC-Date, then file order, then offset) and carries its
  status, and every URL with a response record has a row;
* no byte Gossamer did not write has changed, and of its own files only a torn tail was ever
  cut, with the bytes cut kept in a ``.torn`` file beside it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from gossamer.store.warcscan import Member, crawl_files, order_key, scan

RESPONSES = frozenset({"response", "revisit"})


@dataclass(frozen=True, slots=True)
class Record:
    key: tuple[str, tuple[str, int, str], int]
    filename: str
    offset: int
    length: int
    status: int


def rows(out: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(out / "crawl.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def recorded_files(out: Path) -> set[str]:
    sql = "SELECT DISTINCT warc_file FROM pages WHERE warc_file IS NOT NULL"
    return {str(name) for (name,) in rows(out, sql)}


def last_responses(out: Path) -> dict[str, Record]:
    """Per URL, its last response record in the crawl's own WARC files."""
    last: dict[str, Record] = {}
    for path in crawl_files(out / "warc", recorded_files(out)).ours:
        for item in scan(path):
            # A revisit record (an exact duplicate) stands for a response.
            if not isinstance(item, Member) or item.headers.get("warc-type") not in RESPONSES:
                continue
            record = next(iter(ArchiveIterator(BytesIO(item.data))))
            url = record.rec_headers.get_header("WARC-Target-URI")
            # WARC-Date always has six decimals here, so the strings sort as times do.
            key = (record.rec_headers.get_header("WARC-Date"), order_key(path.name), item.offset)
            status = int(record.http_headers.get_statuscode())
            if url not in last or last[url].key < key:
                last[url] = Record(key, path.name, item.offset, item.length, status)
    return last


def assert_pages_match_warc(out: Path) -> None:
    last = last_responses(out)
    found = rows(out, "SELECT url, status, warc_file, warc_offset, warc_length FROM pages")
    wrong = {}
    for url, status, name, offset, length in found:
        if name is None:
            continue
        record = last.get(str(url))
        expected = None if record is None else (record.status, record.filename, record.offset)
        if expected != (status, name, offset) or record is None or record.length != length:
            wrong[url] = ((status, name, offset, length), record)
    assert wrong == {}
    assert set(last) - {str(url) for url, *_ in found} == set()


@dataclass(frozen=True, slots=True)
class Files:
    """Hashes of every file in ``warc/`` and which of them the crawl wrote."""

    digests: dict[str, str]
    own: frozenset[str]


def snapshot(out: Path) -> Files:
    folder = out / "warc"
    own = {path.name for path in crawl_files(folder, recorded_files(out)).ours}
    digests = {path.name: _digest(path.read_bytes()) for path in folder.iterdir()}
    return Files(digests, frozenset(own))


def assert_nothing_destroyed(before: Files, out: Path) -> list[str]:
    """Every file is unchanged, except own files that lost a torn tail kept beside them;
    returns the names of those."""
    folder = out / "warc"
    cut = []
    for name, digest in before.digests.items():
        path = folder / name
        assert path.exists(), f"{name} disappeared"
        data = path.read_bytes()
        if _digest(data) == digest:
            continue
        assert name in before.own, f"{name} was not written by Gossamer and was changed"
        torn = sorted(folder.glob(f"{name}.torn*"))
        assert any(_digest(data + t.read_bytes()) == digest for t in torn), f"{name} damaged"
        cut.append(name)
    return cut


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
