"""Index stage, input: read one archived HTTP response back out of the crawl's WARC files.

Data flow: store -> **index** (and the web UI's cached copies). ``crawl.db`` says where each
response record lives (file, offset, compressed length); since every record is its own gzip
member, one seek and one read of ``length`` bytes give the whole record, which
``gossamer.store.records`` parses, removing the Content-Encoding with the crawl's cap. Those
bytes must be exactly one complete gzip member holding one complete record; a missing file, a
cut or damaged record is an ``IndexingError`` that callers report and skip.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from gossamer.index.errors import IndexingError
from gossamer.store.records import MAX_DECODED, ArchivedResponse, RecordError, read_response

__all__ = ["ArchivedResponse", "WarcReader"]


class WarcReader:
    """Random access to response records of one crawl's ``warc/`` folder.

    Keeps the files it has opened, so reading many records in file order costs one open per
    file; ``close`` (or the ``with`` block) releases them. ``max_decoded`` caps a decoded body
    (the crawl's ``fetch.max_decoded``).
    """

    def __init__(self, warc_dir: Path, *, max_decoded: int = MAX_DECODED) -> None:
        self._dir = warc_dir
        self._max_decoded = max_decoded
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
        try:
            return read_response(member, self._max_decoded)
        except RecordError as exc:
            detail = f": {exc.detail}" if exc.detail else ""
            raise IndexingError(f"{exc.problem} at {filename}@{offset}{detail}") from exc

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
