"""Store stage, read back: one archived HTTP response as a value, for every reader.

Data flow: WARC files -> **records** -> replay (resume and recover bring ``crawl.db`` level
with the WARC files), the index, and the web UI's cached copies. Whoever finds the record
(``warcscan.scan`` walking a file, or a seek to the offset ``crawl.db`` gives) hands its bytes
here; this is the one place that parses a response record, and the one place that removes
the Content-Encoding of an archived body, with the crawl's own cap on the decoded size
(``fetch.max_decoded``), so a body decodes the same way at fetch time and every time after.

A ``revisit`` record (an exact duplicate, see ``gossamer.store.revisits``) is read as the
response it stands for: its own URL, date, status and headers, with the payload of the
original record, which :func:`original_payload` reads from the location the revisit names and
checks by record id and payload digest. :class:`MemberFiles` gives that random access.

The metadata record Gossamer writes beside each response (depth, referrer, host, fetch time)
is read here too (:func:`metadata_fields`).
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from gossamer.config import FetchConfig
from gossamer.errors import GossamerError, StoreError
from gossamer.fetch.decode import DecodeError, decode_body
from gossamer.fetch.result import Headers
from gossamer.store.revisits import LOCATION_FIELD, Original, parse_location
from gossamer.store.rows import KEEPS_ROW
from gossamer.store.warcscan import header_fields, read_member

__all__ = [
    "MAX_DECODED",
    "ORIGINAL_GONE",
    "ArchivedResponse",
    "FetchMember",
    "MemberFiles",
    "RecordError",
    "kept_visit_covers",
    "metadata_fields",
    "original_payload",
    "parse_response",
    "read_response",
    "stored_original",
    "warc_time",
]

MAX_DECODED = FetchConfig().max_decoded  # the default cap, for readers of a crawl's files
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ORIGINAL_GONE = "original of revisit record unreadable"
_GONE = ORIGINAL_GONE
_GZIP_WBITS = 31

# The bytes of one gzip member by (WARC file name, offset, compressed length); raises OSError
# or a GossamerError when it cannot.
FetchMember = Callable[[str, int, int], bytes]


class RecordError(StoreError, ValueError):
    """The bytes hold no usable response record; ``problem`` says which way.

    Also a ``ValueError``, as it was before it joined the tree; its readers turn it into a
    damage report (replay) or an :class:`~gossamer.errors.IndexingError` (the indexer)."""

    def __init__(self, problem: str, detail: str = "") -> None:
        super().__init__(f"{problem}: {detail}" if detail else problem)
        self.problem = problem  # "corrupt WARC record" or "no response record"
        self.detail = detail


@dataclass(frozen=True, slots=True)
class ArchivedResponse:
    """One response record: what the server said, with the entity decoded."""

    url: str
    date: str  # WARC-Date, ISO 8601 UTC
    status: int
    headers: Headers
    content: bytes  # Content-Encoding removed; empty when ``decode_error`` is set
    decode_error: str = ""  # "bad_encoding" or "decompression_bomb"
    reason: str = ""
    body: bytes = b""  # the payload as received, still content-encoded
    truncated: bool = False  # WARC-Truncated: the body was cut at a size cap
    remote_ip: str = ""
    refers_to: str = ""  # for a revisit record: the URL of the original, whose payload this is

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((value for key, value in self.headers if key.lower() == lowered), None)

    @property
    def content_type(self) -> str:
        return self.header("Content-Type") or ""

    @property
    def crawled_at(self) -> datetime:
        return warc_time(self.date)


def read_response(
    member: bytes, max_decoded: int = MAX_DECODED, fetch: FetchMember | None = None
) -> ArchivedResponse:
    """The response record in ``member``, one gzip member read at a known offset; with
    ``fetch``, a revisit record too, read as the response it stands for."""
    data, headers = _unpack(member, "corrupt WARC record")
    kind = headers.get("warc-type")
    if kind == "revisit" and fetch is not None:
        return parse_response(data, max_decoded, original_payload(headers, fetch))
    if kind != "response":
        raise RecordError("no response record")
    return parse_response(data, max_decoded)


def original_payload(headers: Mapping[str, str], fetch: FetchMember) -> bytes:
    """The payload a revisit record (its WARC headers, names lower-cased) stands for."""
    where = parse_location(headers.get(LOCATION_FIELD.lower(), ""))
    if where is None:
        raise RecordError(_GONE, f"no {LOCATION_FIELD} field")
    filename, offset, _ = where
    try:
        member = fetch(*where)
    except (OSError, GossamerError) as exc:
        raise RecordError(_GONE, f"{filename}@{offset}: {exc}") from exc
    data, found = _unpack(member, _GONE)
    expected = (headers.get("warc-refers-to"), headers.get("warc-payload-digest"))
    if found.get("warc-type") != "response" or expected != (
        found.get("warc-record-id"),
        found.get("warc-payload-digest"),
    ):
        raise RecordError(_GONE, f"{filename}@{offset} holds another record")
    return _load(data)[2]


def _unpack(member: bytes, problem: str) -> tuple[bytes, dict[str, str]]:
    try:
        return read_member(member)
    except ValueError as exc:
        raise RecordError(problem, f"damaged, cut or gone: {exc}") from exc


def _load(data: bytes) -> tuple[Any, Any, bytes]:
    """warcio's record, its HTTP headers and its payload, from one uncompressed record."""
    try:
        record = next(iter(ArchiveIterator(BytesIO(data))), None)
        http = None if record is None else record.http_headers
        body: bytes = b"" if record is None or http is None else record.raw_stream.read()
    except (ArchiveLoadFailed, OSError, ValueError, EOFError) as exc:
        raise RecordError("corrupt WARC record", str(exc)) from exc
    if record is None or http is None:
        raise RecordError("no response record")
    return record, http, body


def parse_response(
    data: bytes, max_decoded: int = MAX_DECODED, payload: bytes | None = None
) -> ArchivedResponse:
    """The response record in ``data``: one whole uncompressed WARC record; or a revisit
    record, given the ``payload`` of its original (:func:`original_payload`)."""
    record, http, body = _load(data)
    warc = record.rec_headers
    revisit = record.rec_type == "revisit"
    if revisit != (payload is not None):
        raise RecordError("no response record")
    if payload is not None:
        body = payload
    code, _, reason = (http.statusline or "0").partition(" ")
    content, error = b"", ""
    try:
        content = decode_body(body, http.get_header("Content-Encoding"), max_decoded)
    except DecodeError as exc:
        # A corrupt coding is a property of that page, not a fault of the reader.
        error = exc.kind
    return ArchivedResponse(
        url=str(warc.get_header("WARC-Target-URI") or ""),
        date=str(warc.get_header("WARC-Date") or ""),
        status=int(code) if code.isdigit() else 0,
        headers=tuple((str(k), str(v)) for k, v in http.headers),
        content=content,
        decode_error=error,
        reason=reason,
        body=body,
        truncated=bool(warc.get_header("WARC-Truncated")),
        remote_ip=str(warc.get_header("WARC-IP-Address") or ""),
        refers_to=str(warc.get_header("WARC-Refers-To-Target-URI") or "") if revisit else "",
    )


class MemberFiles:
    """Random access to gzip members of the WARC files in one folder, by (file, offset, length).

    Keeps the files it opened, so many reads cost one open per file; ``close`` releases them.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._files: dict[str, BinaryIO] = {}

    def read(self, filename: str, offset: int, length: int) -> bytes:
        if "/" in filename or "\\" in filename or filename.startswith("."):
            # The name comes from crawl.db or a record; never let it leave the WARC folder.
            raise RecordError("bad WARC file name", repr(filename))
        stream = self._files.get(filename)
        if stream is None:
            stream = (self._folder / filename).open("rb")
            self._files[filename] = stream
        stream.seek(offset)
        return stream.read(length)

    def close(self) -> None:
        files, self._files = self._files, {}
        for stream in files.values():
            stream.close()


def kept_visit_covers(answer: str, checked_at: float, when: int) -> bool:
    """Whether a recrawl's visit that left the page's row as it was (a 304, the same content
    again, a failure: recorded in its ``schedule`` row only) came at or after the record made
    at ``when`` (microseconds since the epoch, as replay orders records): that record is
    accounted for. The one rule of replay and merge's check."""
    if answer not in KEEPS_ROW:
        return False
    return (datetime.fromtimestamp(checked_at, tz=UTC) - EPOCH) // timedelta(microseconds=1) >= when


def stored_original(
    files: MemberFiles, filename: str, offset: int, length: int
) -> tuple[Original, str]:
    """The response record a page's row points at, as a revisit record names it, and its
    payload digest; a row pointing at a revisit record gives the original that one names.
    Raises ``RecordError`` when the record cannot be read. Only the start of the record is
    read and inflated: its WARC headers (a recrawl asks this of every page answered 304)."""
    headers = _record_head(files, filename, offset, length)
    digest = headers.get("warc-payload-digest", "")
    if headers.get("warc-type") == "revisit":
        where = parse_location(headers.get(LOCATION_FIELD.lower(), ""))
        refers = headers.get("warc-refers-to", "")
        if where is None or not refers:
            raise RecordError(_GONE, f"{filename}@{offset}: a revisit naming no original")
        target = headers.get("warc-refers-to-target-uri", "")
        date = headers.get("warc-refers-to-date", "")
        return Original(refers, target, date, *where), digest
    if headers.get("warc-type") != "response" or not digest:
        raise RecordError("no response record")
    original = Original(
        headers.get("warc-record-id", ""),
        headers.get("warc-target-uri", ""),
        headers.get("warc-date", ""),
        filename,
        offset,
        length,
    )
    return original, digest


_HEAD_BYTES = 4096  # compressed bytes read for a record's WARC headers (a few hundred bytes)


def _record_head(files: MemberFiles, filename: str, offset: int, length: int) -> dict[str, str]:
    """The WARC headers (names lower-cased) of the record in the member at ``offset``, from
    its first bytes; the whole member when the headers run past them."""
    try:
        start = files.read(filename, offset, min(length, _HEAD_BYTES))
        decoder = zlib.decompressobj(_GZIP_WBITS)
        try:
            text = decoder.decompress(start, _HEAD_BYTES)
        except zlib.error as exc:
            raise RecordError(_GONE, f"{filename}@{offset}: not a gzip member: {exc}") from exc
        end = text.find(b"\r\n\r\n")
        if text.startswith(b"WARC/1.") and end >= 0:
            return header_fields(text[:end])
        _, headers = _unpack(files.read(filename, offset, length), _GONE)
        return headers
    except OSError as exc:
        raise RecordError(_GONE, f"{filename}@{offset}: {exc}") from exc


def metadata_fields(data: bytes) -> dict[str, str]:
    """The ``application/warc-fields`` block of a metadata record (uncompressed)."""
    block = data[data.find(b"\r\n\r\n") + 4 :]
    fields: dict[str, str] = {}
    for line in block.decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def warc_time(value: str) -> datetime:
    """A WARC-Date as an aware datetime; the epoch for a date that cannot be read."""
    with contextlib.suppress(ValueError):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return EPOCH
