"""Index stage, input: read one archived HTTP response back out of the crawl's WARC files.

Data flow: store -> **index** (and the web UI's cached copies). ``crawl.db`` says where each
response record lives (file, offset, compressed length); since every record is its own gzip
member, one seek and one read of ``length`` bytes give the whole record, which warcio parses.
Those bytes must be exactly one complete gzip member holding one complete record; a missing
file, a cut or damaged record is an ``IndexingError`` that callers report and skip.
The body is archived as received, so its Content-Encoding is removed here with the same
bomb-capped decoder the fetcher uses.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from gossamer.fetch.decode import DecodeError, decode_body
from gossamer.index.errors import IndexingError
from gossamer.store.warcscan import read_member

__all__ = ["MAX_DECODED_BYTES", "ArchivedResponse", "WarcReader"]

# Same order of magnitude as the fetcher's cap: nothing larger was ever kept by a crawl.
MAX_DECODED_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ArchivedResponse:
    """One response record: what the server said, with the entity decoded."""

    url: str
    date: str  # WARC-Date, ISO 8601 UTC
    status: int
    headers: tuple[tuple[str, str], ...]
    content: bytes  # Content-Encoding removed
    decode_error: str = ""  # set (and content left empty) when the coding was corrupt

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        for key, value in self.headers:
            if key.lower() == lowered:
                return value
        return None

    @property
    def content_type(self) -> str:
        return self.header("Content-Type") or ""

    @property
    def crawled_at(self) -> datetime:
        return datetime.fromisoformat(self.date.replace("Z", "+00:00"))


class WarcReader:
    """Random access to response records of one crawl's ``warc/`` folder.

    Keeps the files it has opened, so reading many records in file order costs one open per
    file; ``close`` (or the ``with`` block) releases them.
    """

    def __init__(self, warc_dir: Path) -> None:
        self._dir = warc_dir
        self._files: dict[str, BinaryIO] = {}

    def read(self, filename: str, offset: int, length: int) -> ArchivedResponse:
        """The response record at ``offset`` of ``filename``; ``IndexingError`` if unusable."""
        if "/" in filename or "\\" in filename or filename.startswith("."):
            # The name comes from crawl.db; never let it walk out of the WARC folder.
            raise IndexingError(f"bad WARC file name in crawl database: {filename!r}")
        stream = self._open(filename)
        try:
            stream.seek(offset)
            member = stream.read(length)
        except OSError as exc:
            raise IndexingError(f"cannot read {self._dir / filename}: {exc.strerror}") from exc
        return _parse_record(member, f"{filename}@{offset}")

    def close(self) -> None:
        files, self._files = self._files, {}
        for stream in files.values():
            stream.close()

    def __enter__(self) -> WarcReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _open(self, filename: str) -> BinaryIO:
        stream = self._files.get(filename)
        if stream is None:
            path = self._dir / filename
            try:
                stream = path.open("rb")
            except OSError as exc:
                raise IndexingError(f"cannot open WARC file {path}: {exc.strerror}") from exc
            self._files[filename] = stream
        return stream


def _parse_record(member: bytes, where: str) -> ArchivedResponse:
    try:
        data, warc_headers = read_member(member)
    except ValueError as exc:
        raise IndexingError(
            f"corrupt WARC record at {where} (damaged, cut or gone): {exc}"
        ) from exc
    if warc_headers.get("warc-type") != "response":
        raise IndexingError(f"no response record at {where}")
    try:
        record = next(iter(ArchiveIterator(io.BytesIO(data))), None)
        if record is None or record.http_headers is None:
            raise IndexingError(f"no response record at {where}")
        body: bytes = record.raw_stream.read()
    except (ArchiveLoadFailed, OSError, ValueError, EOFError) as exc:
        raise IndexingError(f"corrupt WARC record at {where}: {exc}") from exc
    http = record.http_headers
    headers = tuple((str(k), str(v)) for k, v in http.headers)
    status = int(http.get_statuscode() or 0)
    content, error = body, ""
    encoding = http.get_header("Content-Encoding")
    try:
        content = decode_body(body, encoding, MAX_DECODED_BYTES)
    except DecodeError as exc:
        # A corrupt coding is a property of that page, not a fault of the index run.
        content, error = b"", exc.kind
    return ArchivedResponse(
        url=str(record.rec_headers.get_header("WARC-Target-URI") or ""),
        date=str(record.rec_headers.get_header("WARC-Date") or ""),
        status=status,
        headers=headers,
        content=content,
        decode_error=error,
    )
