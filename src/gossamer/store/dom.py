"""A rendered page's DOM read back from the WARC files: the ``urn:dom:`` resource record
written as the member right after the page's response (``WarcStore._dom_record``).

Data flow: ``crawl.db`` (the response's file, offset and length; ``render`` says there is a
DOM) -> **dom** -> the indexer and the cached copy, which read a rendered page's text and
links from its DOM. The member's length is in no row: it is read until its gzip stream ends,
up to a cap. Merging and exporting copy WARC files whole, so the two members stay adjacent.
"""

from __future__ import annotations

from isal import isal_zlib

from gossamer.store.records import MemberFiles, RecordError
from gossamer.store.warc import DOM_PREFIX
from gossamer.store.warcscan import INFLATE_ERRORS, header_fields

__all__ = ["DOM_CAP", "RENDER_STATES", "dom_after"]

DOM_CAP = 32 * 1024 * 1024  # decompressed bytes of one DOM record read back at most
_CHUNK = 64 * 1024
# The ``pages.render`` values of a page whose DOM was archived.
RENDER_STATES = ("rendered", "unsettled")


def _member_at(files: MemberFiles, filename: str, offset: int, cap: int) -> bytes:
    decoder = isal_zlib.decompressobj(31)
    out: list[bytes] = []
    size = 0
    at = offset
    while not decoder.eof:
        chunk = files.read(filename, at, _CHUNK)
        if not chunk:
            raise RecordError("cut DOM record", f"{filename}@{offset}")
        at += len(chunk)
        try:
            data = decoder.decompress(chunk, cap + 1 - size)
        except INFLATE_ERRORS as exc:
            raise RecordError("corrupt DOM record", f"{filename}@{offset}: {exc}") from exc
        size += len(data)
        out.append(data)
        if size > cap:
            raise RecordError("DOM record too large", f"{filename}@{offset}")
        if decoder.unconsumed_tail:
            raise RecordError("DOM record too large", f"{filename}@{offset}")
    return b"".join(out)


def dom_after(
    files: MemberFiles, filename: str, offset: int, length: int, url: str, *, cap: int = DOM_CAP
) -> bytes | None:
    """The DOM archived for ``url`` right after its response at ``offset`` (``length``
    bytes); None when the next member is not that record. RecordError if unreadable."""
    data = _member_at(files, filename, offset + length, cap)
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    headers = header_fields(head)
    if headers.get("warc-type") != "resource" or headers.get("warc-target-uri") != DOM_PREFIX + url:
        return None
    declared = headers.get("content-length", "")
    return rest[: int(declared)] if declared.isdigit() else rest
