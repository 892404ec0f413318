"""Index stage, input: read one archived HTTP response back out of the crawl's WARC files.

Data flow: store -> **index** (and the web UI's cached copies). ``crawl.db`` says where each
response record lives (file, offset, compressed length); since every record is its own gzip
member, one seek and one read of ``length`` bytes give the whole record, which
``gossamer.store.records`` parses, removing the Content-Encoding with the crawl's cap. Those
bytes must be exactly one complete gzip member holding one complete record; a missing file, a
cut or damaged record is an ``IndexingError`` that callers report and skip. The WARC headers
of any record can be read too (``warc_headers``): the page-versions view follows a
not-modified revisit to its original with them (``gossamer.search.versions``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import TracebackType

from gossamer.index.errors import IndexingError
from gossamer.store.dom import RENDER_STATES, dom_after
from gossamer.store.records import (
    MAX_DECODED,
    ArchivedResponse,
    MemberFiles,
    RecordError,
    read_response,
)
from gossamer.store.revisits import beside
from gossamer.store.warc import DOM_TYPE
from gossamer.store.warcscan import read_member

__all__ = ["ArchivedResponse", "WarcReader", "text_source"]

log = logging.getLogger(__name__)


class WarcReader:
    """Random access to response records of one crawl's ``warc/`` folder.

    Keeps the files it has opened, so reading many records in file order costs one open per
    file; ``close`` (or the ``with`` block) releases them. ``max_decoded`` caps a decoded body
    (the crawl's ``fetch.max_decoded``). A revisit record (an exact duplicate) is read as the
    response it stands for, with its original's payload.
    """

    def __init__(self, warc_dir: Path, *, max_decoded: int = MAX_DECODED) -> None:
        self._dir = warc_dir
        self._max_decoded = max_decoded
        self._files = MemberFiles(warc_dir)

    def read(self, filename: str, offset: int, length: int) -> ArchivedResponse:
        """The response record at ``offset`` of ``filename``; ``IndexingError`` if unusable."""
        member = self._member(filename, offset, length)

        def original(name: str, at: int, size: int) -> bytes:  # a revisit's, beside it
            return self._files.read(beside(filename, name), at, size)

        try:
            return read_response(member, self._max_decoded, original)
        except RecordError as exc:
            detail = f": {exc.detail}" if exc.detail else ""
            raise IndexingError(f"{exc.problem} at {filename}@{offset}{detail}") from exc

    def dom(self, filename: str, offset: int, length: int, url: str) -> bytes | None:
        """The rendered DOM archived right after the response at ``offset`` (None: none
        there); ``IndexingError`` if unreadable."""
        self._member(filename, offset, 0)  # the file name checked as for a response
        try:
            return dom_after(self._files, filename, offset, length, url)
        except (RecordError, OSError) as exc:
            raise IndexingError(f"unreadable DOM after {filename}@{offset}: {exc}") from exc

    def warc_headers(self, filename: str, offset: int, length: int) -> dict[str, str]:
        """The WARC header fields (names lower-cased) of any record, e.g. a revisit's
        pointer to its original; ``IndexingError`` if unusable."""
        try:
            return read_member(self._member(filename, offset, length))[1]
        except ValueError as exc:
            raise IndexingError(f"corrupt WARC record at {filename}@{offset}: {exc}") from exc

    def _member(self, filename: str, offset: int, length: int) -> bytes:
        if "/" in filename or "\\" in filename or filename.startswith("."):
            # The name comes from crawl.db or an index line; never let it leave the folder.
            raise IndexingError(f"bad WARC file name in crawl database: {filename!r}")
        try:
            return self._files.read(filename, offset, length)
        except OSError as exc:
            # Only open() names the file in its error.
            verb = "cannot open WARC file" if exc.filename else "cannot read"
            raise IndexingError(f"{verb} {self._dir / filename}: {exc.strerror}") from exc

    def close(self) -> None:
        self._files.close()

    def __enter__(self) -> WarcReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def text_source(
    reader: WarcReader, response: ArchivedResponse, place: tuple[str, int, int], render: str | None
) -> tuple[bytes, str | None]:
    """What a page's text is read from: a rendered page's DOM (as UTF-8 HTML), else its
    response's content (None: the caller's own type). ``place``: the response's file, offset
    and length; ``render``: its ``pages.render``. A DOM that cannot be read leaves the
    response's content, with a warning."""
    if render not in RENDER_STATES:
        return response.content, None
    filename, offset, length = place
    try:
        dom = reader.dom(filename, offset, length, response.url)
    except IndexingError as exc:
        log.warning("%s: its DOM is unreadable, reading its HTML: %s", response.url, exc)
        return response.content, None
    return (response.content, None) if dom is None else (dom, DOM_TYPE)
