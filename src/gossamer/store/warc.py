"""Store stage, archive: every fetched exchange becomes a WARC/1.1 request + response pair.

Data flow: fetch -> parse -> **store** (this WARC writer, then the CDXJ index and the SQLite
metadata, both of which point back into the WARC through a ``WarcLocation``).

warcio builds the records; we compress each one ourselves as its own gzip member with
isa-l at a fast level, because warcio's fixed level-9 gzip cost half of all crawl CPU.
One gzip member per record keeps every record seekable by (filename, offset, length).

The engine calls ``write`` from the event loop, so a call does no fsync: the pair of
records is handed to the OS in one ``write()`` and flushed, nothing more.

A file is opened on the first record it gets, not before: a run that archives nothing (a
resume with nothing left to fetch) leaves no file holding only its ``warcinfo`` record. That
the folder takes files is checked when the store is made, so a refusal still fails at start.

A 2xx payload this process archived before becomes a ``revisit`` record pointing at the first
copy instead of a second ``response`` (``gossamer.store.revisits``: which payloads qualify,
and the bounded index of them).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from io import BytesIO
from pathlib import Path
from typing import BinaryIO
from urllib.parse import quote

from isal import isal_zlib
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gossamer.errors import NothingToArchiveError, StoreError
from gossamer.fetch.result import FetchResult, Headers
from gossamer.store import warcbytes
from gossamer.store.revisits import (
    NOT_MODIFIED_PROFILE,
    Original,
    PayloadIndex,
    exchange_headers,
    revisit_record,
)
from gossamer.store.stamps import iso_second, split_time
from gossamer.store.warcbytes import RecordIds, digest_text
from gossamer.urls import path_query_of

__all__ = [
    "DOM_PREFIX",
    "DOM_TYPE",
    "VIEW_PREFIX",
    "WarcLocation",
    "WarcStore",
    "payload_digest",
    "warc_date",
]

DOM_PREFIX = "urn:dom:"  # the WARC-Target-URI of a rendered page's DOM: this and its URL
DOM_TYPE = "text/html; charset=utf-8"  # its Content-Type: the DOM serialised as UTF-8
VIEW_PREFIX = "urn:view:"  # of its screenshot (Browsertrix's name for the viewport's PNG)

_GZIP_WBITS = 31  # deflate inside a gzip container
_NAME_RE = re.compile(r"^(?P<prefix>.+)-\d{14}-(?P<serial>\d{5,})\.warc\.gz$")


@dataclass(frozen=True, slots=True)
class WarcLocation:
    """Where a response record lives: enough to seek to it and read one gzip member."""

    filename: str  # base name of the WARC file
    offset: int  # byte offset of the response record's gzip member
    length: int  # compressed length of that member
    digest: str = ""  # the record's WARC-Payload-Digest, when the writer knows it
    revisit: bool = False  # a revisit record standing for an earlier identical payload
    sha1: bytes = b""  # the raw SHA-1 of the payload behind ``digest``, when known


def warc_date(epoch_seconds: float) -> str:
    """The WARC-Date for a wall-clock time, with microseconds (WARC/1.1 allows them)."""
    second, micro = split_time(epoch_seconds)
    return f"{iso_second(second)}.{micro:06d}Z"


def payload_digest(body: bytes) -> str:
    """The WARC-Payload-Digest of a body as received: ``sha1:`` + base32, as warcio writes it."""
    return digest_text(hashlib.sha1(body).digest())


class WarcStore:
    """Appends request/response pairs to rotating ``.warc.gz`` files in one folder."""

    def __init__(
        self,
        directory: Path,
        *,
        prefix: str = "gossamer",
        max_file_bytes: int = 1_000_000_000,
        compress_level: int = 1,
        clock: Callable[[], float] = time.time,
        make_id: Callable[[], str] | None = None,
        software: str = "Gossamer/0.1",
        originals: PayloadIndex | None = None,
    ) -> None:
        self._directory = directory
        self._prefix = prefix
        self._max_file_bytes = max_file_bytes
        self._level = compress_level
        self._clock = clock
        self._make_id = make_id or RecordIds()
        self._software = software
        # Payloads archived by this store, for revisit records; empty again on every resume.
        self._originals = PayloadIndex() if originals is None else originals
        # warcio writes into this buffer; we take the bytes out and compress them.
        self._buffer = BytesIO()
        self._builder = WARCWriter(self._buffer, gzip=False, warc_version="1.1")
        self._files: list[Path] = []
        self._out: BinaryIO | None = None
        self._size = 0  # bytes in the current file
        self._pairs = 0  # request/response pairs in the current file
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create WARC folder {directory}: {exc.strerror}") from exc
        # A resumed crawl continues the numbering instead of appending to an old file.
        self._serial = self._next_free_serial()
        self._check_folder()

    @property
    def files(self) -> list[Path]:
        """Every WARC file this store has written, in order (none before the first record)."""
        return list(self._files)

    def write(
        self,
        result: FetchResult,
        metadata: Mapping[str, str] | None = None,
        stored: tuple[Original, str] | None = None,
    ) -> WarcLocation:
        """Archive one HTTP exchange; return where its response record was written.

        ``metadata`` becomes a ``metadata`` record (``application/warc-fields``) concurrent
        to the response, as Heritrix writes one with ``via``, ``hopsFromSeed`` and
        ``fetchTimeMs``: it is what lets ``gossamer recover`` rebuild the database from the
        WARC files alone. A result without an HTTP response (``status == 0``) has nothing to
        archive: the caller records the fault in the metadata only.
        """
        if result.status <= 0:
            raise NothingToArchiveError(f"no HTTP response to archive for {result.url}")
        if self._out is None:
            self._open_next()  # the first record (or the first after a failed write)
        date = warc_date(result.started_at)
        response_id = self._make_id()
        sha1 = hashlib.sha1(result.body).digest()
        digest = digest_text(sha1)
        eligible = self._originals.eligible(result)
        original = self._originals.find(sha1) if eligible else None
        if stored is not None and result.status == 304:
            original, digest = stored
            ids = (response_id, date, digest)
            record = self._serialize(
                revisit_record(
                    self._builder, result, ids, original, _http_headers(result),
                    profile=NOT_MODIFIED_PROFILE,
                )
            )  # fmt: skip
        elif original is None:
            record = self._response_record(result, date, response_id, digest)
        else:
            record = self._revisit_record(result, date, response_id, digest, original)
        response = self._compress(record)
        request = self._compress(self._request_record(result, date, response_id))
        members = [response, request]
        if result.rendered is not None:  # right after the response: see dom_record
            members.insert(1, self._compress(self._dom_record(result, date, response_id)))
            if result.screenshot is not None:
                view = self._resource_record(
                    VIEW_PREFIX + result.url, "image/png", result.screenshot, (date, response_id)
                )
                members.insert(2, self._compress(view))
        if metadata:
            members.append(
                self._compress(self._metadata_record(result.url, date, response_id, metadata))
            )
        blob = b"".join(members)  # one copy of the pair's bytes, not one per member
        if self._pairs and self._size + len(blob) > self._max_file_bytes:
            self._open_next()
        name = self._files[-1].name
        location = WarcLocation(name, self._size, len(response), digest, original is not None, sha1)
        self._append(blob)
        self._pairs += 1
        if eligible and original is None:
            first = Original(response_id, result.url, date, name, location.offset, len(response))
            self._originals.add(sha1, first)
        return location

    def close(self) -> None:
        """Flush and close the current file; later writes open a new one."""
        out, self._out = self._out, None
        if out is None:
            return
        try:
            out.close()
        except OSError as exc:
            raise StoreError(f"cannot close WARC file: {exc.strerror}") from exc

    def __enter__(self) -> WarcStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- records ---------------------------------------------------------------------------

    def _response_record(
        self, result: FetchResult, date: str, record_id: str, digest: str
    ) -> bytes:
        first = exchange_headers("response", result, record_id, date)
        headers = _archived_headers(result.response_headers, len(result.body))
        if warcbytes.can_build("", headers):
            head = warcbytes.http_block(_status_line(result), headers)
            return warcbytes.response_record(first, digest, result.truncated, head, result.body)
        # Given here, warcio skips its own pass over the body for this digest.
        first["WARC-Payload-Digest"] = digest
        if result.truncated:
            first["WARC-Truncated"] = "length"
        http_headers = _http_headers(result)
        return self._build(result.url, "response", first, http_headers, result.body)

    def _revisit_record(
        self, result: FetchResult, date: str, record_id: str, digest: str, original: Original
    ) -> bytes:
        ids = (record_id, date, digest)
        record = revisit_record(self._builder, result, ids, original, _http_headers(result))
        return self._serialize(record)

    def _request_record(self, result: FetchResult, date: str, response_id: str) -> bytes:
        first = {
            "WARC-Type": "request",
            "WARC-Record-ID": self._make_id(),
            "WARC-Date": date,
            "WARC-Target-URI": result.url,
            "WARC-Concurrent-To": response_id,
        }
        target = path_query_of(result.url)
        request_line = f"GET {target} HTTP/1.1"
        if warcbytes.can_build(request_line, result.request_headers):
            head = warcbytes.http_block(request_line, result.request_headers)
            return warcbytes.request_record(first, head)
        http_headers = StatusAndHeaders(
            f"{target} HTTP/1.1", list(result.request_headers), protocol="GET"
        )
        return self._build(result.url, "request", first, http_headers, b"")

    def _dom_record(self, result: FetchResult, date: str, response_id: str) -> bytes:
        """A rendered page's DOM: a ``resource`` record whose URI is ``urn:dom:`` and the
        page's URL (Webrecorder's name for it), concurrent to the response. Written as the
        member right after the response's, which is how the index and a resume find it."""
        return self._resource_record(
            DOM_PREFIX + result.url,
            DOM_TYPE,
            result.rendered or b"",
            (date, response_id),
            {"WARC-Gossamer-Render": result.render or "rendered"},
        )

    def _resource_record(
        self,
        uri: str,
        content_type: str,
        data: bytes,
        ids: tuple[str, str],
        extra: Mapping[str, str] | None = None,
    ) -> bytes:
        """A ``resource`` record concurrent to a response; ``ids``: its date and record id."""
        date, response_id = ids
        headers = {
            "WARC-Record-ID": self._make_id(),
            "WARC-Date": date,
            "WARC-Concurrent-To": response_id,
            **(extra or {}),
        }
        record = self._builder.create_warc_record(
            uri,
            "resource",
            payload=BytesIO(data),
            length=len(data),
            warc_content_type=content_type,
            warc_headers_dict=headers,
        )
        return self._serialize(record)

    def _metadata_record(
        self, url: str, date: str, response_id: str, fields: Mapping[str, str]
    ) -> bytes:
        body = "".join(f"{key}: {value}\r\n" for key, value in fields.items()).encode()
        first = {
            "WARC-Type": "metadata",
            "WARC-Record-ID": self._make_id(),
            "WARC-Date": date,
            "WARC-Target-URI": url,
            "WARC-Concurrent-To": response_id,
        }
        return warcbytes.metadata_record(first, body)

    def _warcinfo_record(self, filename: str) -> bytes:
        fields = (
            f"software: {self._software}\r\n"
            "format: WARC File Format 1.1\r\n"
            "conformsTo: http://iipc.github.io/warc-specifications/"
            "specifications/warc-format/warc-1.1/\r\n"
        ).encode()
        warc_headers = {
            "WARC-Type": "warcinfo",
            "WARC-Record-ID": self._make_id(),
            "WARC-Date": warc_date(self._clock()),
            "WARC-Filename": filename,
        }
        record = self._builder.create_warc_record(
            "",
            "warcinfo",
            payload=BytesIO(fields),
            length=len(fields),
            warc_headers_dict=warc_headers,
        )
        return self._serialize(record)

    def _build(
        self,
        url: str,
        record_type: str,
        warc_headers: dict[str, str],
        http_headers: StatusAndHeaders,
        payload: bytes,
    ) -> bytes:
        record = self._builder.create_warc_record(
            url,
            record_type,
            payload=BytesIO(payload),
            length=len(payload),
            warc_headers_dict=warc_headers,
            http_headers=http_headers,
        )
        return self._serialize(record)

    def _serialize(self, record: object) -> bytes:
        self._builder.write_record(record)
        data = self._buffer.getvalue()
        self._buffer.seek(0)
        self._buffer.truncate()
        return data

    def _compress(self, record: bytes) -> bytes:
        # One-shot compression yields one complete gzip member with mtime 0, so the
        # same record always compresses to the same bytes.
        compressed: bytes = isal_zlib.compress(record, self._level, _GZIP_WBITS)
        return compressed

    # -- files -----------------------------------------------------------------------------

    def _next_free_serial(self) -> int:
        highest = -1
        try:
            for path in self._directory.glob(f"{self._prefix}-*.warc.gz"):
                match = _NAME_RE.match(path.name)
                if match and match["prefix"] == self._prefix:
                    highest = max(highest, int(match["serial"]))
        except OSError as exc:
            raise StoreError(f"cannot list WARC folder {self._directory}: {exc}") from exc
        return highest + 1

    def _next_path(self) -> Path:
        stamp = datetime.fromtimestamp(self._clock(), tz=UTC).strftime("%Y%m%d%H%M%S")
        return self._directory / f"{self._prefix}-{stamp}-{self._serial:05d}.warc.gz"

    def _check_folder(self) -> None:
        """Fail now, not mid-crawl, when the folder would refuse the first file: not writable,
        or its name too long. Nothing is created (the file is opened on the first record)."""
        path = self._next_path()
        problem = None
        if not os.access(self._directory, os.W_OK | os.X_OK):
            problem = errno.EACCES
        else:
            with suppress(OSError, ValueError):  # a system that does not say has no bound
                if len(os.fsencode(path.name)) > os.pathconf(self._directory, "PC_NAME_MAX"):
                    problem = errno.ENAMETOOLONG
        if problem is not None:
            raise StoreError(f"cannot create WARC file {path}: {os.strerror(problem)}")

    def _open_next(self) -> None:
        self.close()
        path = self._next_path()
        self._serial += 1
        try:
            # Unbuffered: each record pair is one write() call, so a failed write leaves
            # nothing queued in a buffer that a later close() could still flush.
            self._out = path.open("ab", buffering=0)
        except OSError as exc:
            raise StoreError(f"cannot create WARC file {path}: {exc.strerror}") from exc
        self._files.append(path)
        self._size = self._out.tell()
        self._pairs = 0
        self._append(self._compress(self._warcinfo_record(path.name)))

    def _append(self, blob: bytes) -> None:
        out = self._out
        assert out is not None  # _open_next ran before any append
        try:
            # An unbuffered write may be short when the disk fills: loop until it is whole
            # or the next write raises.
            view = memoryview(blob)
            done = 0
            while done < len(blob):
                count = out.write(view[done:])
                if not count:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += count
        except OSError as exc:
            # The file may now end in a partial member: cut it back to the last whole record
            # (truncating frees space, so this works on a full disk too) and abandon it, so
            # later records start clean in a fresh file with correct offsets.
            self._out = None
            with suppress(OSError):  # the write error is the one worth reporting
                out.truncate(self._size)
            with suppress(OSError):
                out.close()
            raise StoreError(f"cannot write WARC file {self._files[-1]}: {exc.strerror}") from exc
        self._size += len(blob)


def _reason_bytes(result: FetchResult) -> bytes:
    """The reason phrase as the server sent it (RFC 9112 allows obs-text, bytes 0x80-0xFF).

    The HTTP client decodes the phrase as UTF-8 with surrogate escapes, so encoding it back
    the same way gives the server's bytes whatever their charset. Control bytes, which the
    grammar forbids and which would end the line for a reader, are percent-escaped.
    """
    reason = result.reason or _standard_reason(result.status)
    raw = reason.encode("utf-8", "surrogateescape")
    if _CONTROL_RE.search(raw) is None:
        return raw
    return _CONTROL_RE.sub(lambda m: b"%%%02X" % m.group()[0], raw)


_CONTROL_RE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


def _status_line(result: FetchResult) -> bytes:
    """The response's first line: protocol, code and the server's reason bytes."""
    line = b"HTTP/%s %d %s" % (
        result.http_version.encode("ascii"),
        result.status,
        _reason_bytes(result),
    )
    return line.rstrip()


class _ServerStatusAndHeaders(StatusAndHeaders):  # type: ignore[misc]
    """warcio's header block with the status line kept byte for byte.

    warcio writes the block as ASCII, percent-encoding non-ASCII header values; it would
    fail on a non-ASCII reason phrase. The status line warcio sees is an ASCII stand-in; the
    line written is the server's.
    """

    def __init__(self, result: FetchResult) -> None:
        self._first_line = _status_line(result)
        self._sent = _archived_headers(result.response_headers, len(result.body))
        super().__init__(
            self._first_line[5:].decode("ascii", "backslashreplace").split(" ", 1)[1],
            self._sent,
            protocol=f"HTTP/{result.http_version}",
        )

    def percent_encode_non_ascii_headers(self, encoding: str = "UTF-8") -> None:
        """Header values hold the server's bytes, one character each (Latin-1): a value that
        is not ASCII is percent-encoded from those bytes (warcio would encode the characters
        as UTF-8, archiving ``é`` sent as UTF-8 as ``%C3%83%C2%A9``)."""
        self.headers = [
            (name, value if value.isascii() else quote(_sent_bytes(value)))
            for name, value in self._sent
        ]

    def to_ascii_bytes(self, filter_func: object = None) -> bytes:
        block: bytes = super().to_ascii_bytes(filter_func)
        return self._first_line + block[block.index(b"\r\n") :]


def _sent_bytes(value: str) -> bytes:
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:  # not from the wire: a value built as text
        return value.encode("utf-8", "surrogateescape")


def _http_headers(result: FetchResult) -> StatusAndHeaders:
    return _ServerStatusAndHeaders(result)


def _archived_headers(headers: Headers, body_length: int) -> list[tuple[str, str]]:
    """Response headers as archived: the body is stored de-chunked, so the framing changes.

    Transfer-Encoding is dropped and Content-Length states the stored body length, so a
    reader of the record finds headers that agree with the block.
    """
    kept: list[tuple[str, str]] = []
    dechunked = False
    has_length = False
    for name, value in headers:
        lowered = name.lower()
        if lowered == "transfer-encoding":
            dechunked = True
        elif lowered == "content-length":
            if not has_length:  # a repeated header would contradict the one we state
                kept.append((name, str(body_length)))
                has_length = True
        else:
            kept.append((name, value))
    if dechunked and not has_length:
        kept.append(("Content-Length", str(body_length)))
    return kept


def _standard_reason(status: int) -> str:
    # HTTP/2 carries no reason phrase; archives are read as HTTP/1.x, which expects one.
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""
