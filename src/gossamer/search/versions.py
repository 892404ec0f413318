"""Search side, page versions: every archived capture of one URL, and what each one shows.

Data flow: ``DIR/index.cdxj`` (one line per response or revisit record, ``store.cdxj``) ->
**versions** -> the page-info view's list and the cached copy of one version (``web``).

A crawl folder keeps every answer it archived, so after a recrawl (issue 31) a URL has
several: full responses (the first fetch, each change), revisit records (the server said
``304 Not Modified``, or sent the same payload again) and answers saying the page is gone
(404, 410) or moved (3xx). ``crawl.db`` holds only the row that counts now; the versions
are the URL's CDXJ lines, newest first.

The lines are found by the URL itself (the ``"url"`` field, which every line starts with)
rather than by the SURT key, which several URLs may share and whose sorted order holds only
once a crawl has ended: the files (with a ``--workers`` crawl's unmerged ``index-wK.cdxj``)
are read in blocks and searched with ``bytes.find``, so a line appended by a crawl still
running is found too: 81 ms for a URL in a 92 MB index of 300,000 lines, warm (0.9 ms per
MB), where a 10,000-page crawl's index is about 3 MB.

A revisit record of the server-not-modified profile has no payload: it shows the capture it
refers to (``Gossamer-Refers-To-Location``, checked against ``WARC-Refers-To``; else the
URL's capture of ``WARC-Refers-To-Date``). A revisit of the identical-payload profile is
read as the response it stands for, as everywhere (``store.records``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii
from pathlib import Path

from gossamer.index.archive import ArchivedResponse, WarcReader
from gossamer.index.errors import IndexingError
from gossamer.store.cdxj import parse_cdxj_line
from gossamer.store.revisits import (
    LOCATION_FIELD,
    NOT_MODIFIED_PROFILE,
    beside,
    parse_location,
)

__all__ = [
    "MAX_VERSIONS",
    "PageVersion",
    "ShownVersion",
    "find_version",
    "is_timestamp",
    "page_versions",
    "read_version",
]

MAX_VERSIONS = 500  # listed per URL, newest first: a page recrawled daily for a year and more
_BLOCK = 1 << 20  # bytes of an index file searched at a time


@dataclass(frozen=True, slots=True)
class PageVersion:
    """One archived capture of a URL, as its CDXJ line describes it."""

    timestamp: str  # 14 digits, UTC: the capture's second (``at=`` of the cached copy)
    status: int
    mime: str  # "warc/revisit" for a revisit record
    filename: str
    offset: int
    length: int

    @property
    def kind(self) -> str:
        """ "revisit" (not modified, or the same payload again), "gone" (404, 410), "moved"
        (3xx), or "response" (any other answer, archived whole)."""
        if self.mime == "warc/revisit":
            return "revisit"
        if self.status in (404, 410):
            return "gone"
        return "moved" if 300 <= self.status < 400 else "response"

    @property
    def when(self) -> str:
        """The capture's time as people read it: ``2023-11-14 22:13:20 UTC``."""
        t = self.timestamp
        return f"{t[0:4]}-{t[4:6]}-{t[6:8]} {t[8:10]}:{t[10:12]}:{t[12:14]} UTC"


@dataclass(frozen=True, slots=True)
class ShownVersion:
    """What the cached copy of one version shows: ``response``, and for a revisit the
    capture whose content it stands for (``refers_to``, its WARC-Date), "" otherwise."""

    version: PageVersion
    response: ArchivedResponse
    refers_to: str = ""


def is_timestamp(text: str) -> bool:
    """Whether ``text`` is a 14-digit capture time (checked before it is looked up)."""
    return len(text) == 14 and text.isascii() and text.isdigit()


def page_versions(crawl_dir: Path, url: str, limit: int = MAX_VERSIONS) -> list[PageVersion]:
    """The archived captures of ``url``, newest first, at most ``limit``; none when the
    folder has no CDXJ index (or cannot read it)."""
    needle = ('{"url": ' + encode_basestring_ascii(url) + ", ").encode("ascii")
    found: dict[tuple[str, int], PageVersion] = {}
    for path in sorted(crawl_dir.glob("index*.cdxj")):
        for line in _lines_with(path, needle):
            version = _version(line, url)
            if version is not None:
                found[(version.filename, version.offset)] = version  # a line replayed twice
    newest = sorted(found.values(), key=lambda v: (v.timestamp, v.filename, v.offset))
    return newest[::-1][:limit]


def _lines_with(path: Path, needle: bytes) -> Iterator[bytes]:
    """The lines of ``path`` holding ``needle``, read a block at a time."""
    try:
        with path.open("rb") as source:
            carry = b""
            while block := source.read(_BLOCK):
                data = carry + block
                cut = data.rfind(b"\n") + 1  # whole lines now, the rest with the next block
                yield from _matching(data[:cut], needle)
                carry = data[cut:]
            yield from _matching(carry, needle)
    except OSError:
        return  # no index (a folder crawled before CDXJ, or removed): no versions to list


def _matching(data: bytes, needle: bytes) -> Iterator[bytes]:
    at = data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        yield data[start:end]
        at = data.find(needle, end)


def _version(line: bytes, url: str) -> PageVersion | None:
    parsed = parse_cdxj_line(line.decode("utf-8", "replace"))
    if parsed is None:
        return None
    key, fields = parsed
    timestamp = key.rpartition(" ")[2]
    status, offset, length = (str(fields.get(k, "")) for k in ("status", "offset", "length"))
    filename = fields.get("filename")
    if (
        fields.get("url") != url
        or not is_timestamp(timestamp)
        or not isinstance(filename, str)
        or not (status.isdigit() and offset.isdigit() and length.isdigit())
    ):
        return None
    mime = str(fields.get("mime") or "")
    return PageVersion(timestamp, int(status), mime, filename, int(offset), int(length))


def find_version(versions: Sequence[PageVersion], at: str) -> PageVersion | None:
    """The capture of second ``at``; of several in one second, the last one written."""
    return next((v for v in versions if v.timestamp == at), None)


def read_version(
    reader: WarcReader, version: PageVersion, versions: Sequence[PageVersion]
) -> ShownVersion:
    """What ``version`` shows (see the module docstring); ``IndexingError`` when its record,
    or for a revisit its original, cannot be read. ``versions``: the URL's other captures,
    to find the original of a revisit that does not say where it is."""
    where = (version.filename, version.offset, version.length)
    if version.kind != "revisit":
        return ShownVersion(version, reader.read(*where))
    headers = reader.warc_headers(*where)
    if headers.get("warc-profile") != NOT_MODIFIED_PROFILE:
        # The same payload again: read as the response it stands for, with its own headers.
        response = reader.read(*where)
        return ShownVersion(version, response, headers.get("warc-refers-to-date", ""))
    original = _original(reader, version.filename, headers, versions)
    return ShownVersion(version, reader.read(*original), headers.get("warc-refers-to-date", ""))


def _original(
    reader: WarcReader, holder: str, headers: dict[str, str], versions: Sequence[PageVersion]
) -> tuple[str, int, int]:
    """Where the capture a not-modified revisit (in the file ``holder``) refers to is."""
    named = parse_location(headers.get(LOCATION_FIELD.lower(), ""))
    if named is not None:
        pointer = (beside(holder, named[0]), named[1], named[2])
        record_id = headers.get("warc-refers-to")
        if record_id and reader.warc_headers(*pointer).get("warc-record-id") != record_id:
            raise IndexingError(f"the original of the revisit at {pointer[0]} moved")
        return pointer
    date = headers.get("warc-refers-to-date", "")
    second = "".join(c for c in date[:19] if c.isdigit())
    for other in versions:
        if other.timestamp == second and other.kind != "revisit":
            return other.filename, other.offset, other.length
    raise IndexingError(f"no capture of {date or 'the date it names'} to show")
