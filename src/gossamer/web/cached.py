"""Web UI, cached copies: a crawled page read back from the WARC, made safe to display.

Data flow: crawl.db (where) -> WARC (what) -> **cached** -> the sandboxed ``/cached/raw``
response. The copy is served on its own route under a policy of its own (see ``app``):
no scripts, no network, a sandboxed unique origin, so whatever the crawled page holds runs
nowhere. Here it is only decoded: HTML is re-encoded as UTF-8 (the header then states the
charset, whatever the page claimed), PDFs become their extracted text, and other binary
types are described rather than shown.

The copy of ``/cached?url=`` is the capture ``crawl.db``'s row points at: the content that
counts now. ``/cached?url=&at=`` (a capture's 14-digit time, from the page-info view's list
of versions) shows any other version (``load_version``): a revisit saying the page was not
modified shows the capture it refers to, a 404 what the server sent then; ``note`` says so.

A copy shows at most ``MAX_SHOWN`` bytes of an archived text or HTML body (``cut`` says how
many more there were). A stored page may be tens of megabytes (a page of a million links
is 30 MB, and its rewritten links make that 86 MB): nobody reads that in a cached copy, the
browser struggles with it, and each copy being prepared holds a parse tree of ~24 times its
size. 2 MiB is more than 99% of real HTML pages and half what the crawl reads for links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gossamer.index import IndexingError, WarcReader, extract_pdf
from gossamer.index.archive import ArchivedResponse, text_source
from gossamer.index.extract import kind_of
from gossamer.parse import decode_html
from gossamer.search.versions import PageVersion, ShownVersion, find_version, read_version
from gossamer.store import CrawlRecords
from gossamer.web.render import esc

__all__ = ["MAX_SHOWN", "CachedCopy", "load_cached", "load_version"]

MAX_SHOWN = 2 * 1024 * 1024

_HTML = "text/html; charset=utf-8"
_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@dataclass(frozen=True, slots=True)
class CachedCopy:
    url: str
    crawled: str  # WARC-Date of the response
    body: bytes  # what /cached/raw serves
    content_type: str  # its Content-Type
    cut: int = 0  # bytes of the archived body left out (past MAX_SHOWN)
    note: str = ""  # what this version is, when it is not simply the page as crawled
    at: str = ""  # the version's 14-digit time; "" for the copy crawl.db points at


RENDERED_NOTE = (
    "The page as a browser rendered it when it was crawled: its scripts had run. The server"
    " sent the HTML they started from."
)


def _note(text: str) -> bytes:
    return f"<!DOCTYPE html><meta charset=utf-8><p>{esc(text)}</p>".encode()


def load_cached(records: CrawlRecords, reader: WarcReader, url: str) -> CachedCopy | None:
    """The archived response for ``url``, ready to serve; None when nothing was archived."""
    row = records.page(url)
    if row is None or row.warc_file is None or row.warc_offset is None:
        return None
    try:
        response = reader.read(row.warc_file, row.warc_offset, row.warc_length or 0)
    except IndexingError as exc:
        return CachedCopy(url, "", _note(f"The archived copy cannot be read: {exc}"), _HTML)
    place = (row.warc_file, row.warc_offset, row.warc_length or 0)
    content, rendered_type = text_source(reader, response, place, row.render)
    if rendered_type is not None:  # the DOM a browser made of it, which is what was read
        copy = _prepared(url, replace(response, content=content), rendered_type)
        return replace(copy, note=RENDERED_NOTE)
    # crawl.db holds the sniffed type
    return _prepared(url, response, row.content_type or response.content_type or "")


def load_version(
    reader: WarcReader, url: str, at: str, versions: Sequence[PageVersion]
) -> CachedCopy | None:
    """The capture of ``url`` at ``at`` (14 digits) among its ``versions`` (``page_versions``),
    ready to serve; None when there is none."""
    version = find_version(versions, at)
    if version is None:
        return None
    try:
        shown = read_version(reader, version, versions)
    except IndexingError as exc:
        body = _note(f"This version cannot be read: {exc}")
        return CachedCopy(url, version.when, body, _HTML, at=at)
    copy = _prepared(url, shown.response, shown.response.content_type)
    return CachedCopy(
        url, version.when, copy.body, copy.content_type, copy.cut, _version_note(shown), at
    )


def _version_note(shown: ShownVersion) -> str:
    version = shown.version
    if version.kind == "revisit" and version.status == 304:
        return (
            f"On {version.when} the server said the page was not modified: this is the copy"
            f" archived on {shown.refers_to or shown.response.date}."
        )
    if version.kind == "revisit":
        return (
            f"On {version.when} the server sent the content archived on"
            f" {shown.refers_to or 'an earlier date'} again: this is that copy."
        )
    if version.kind == "gone":
        return f"On {version.when} the server answered {version.status}: the page was gone."
    if version.kind == "moved":
        where = shown.response.header("Location") or "elsewhere"
        return f"On {version.when} the server answered {version.status}: moved to {where}."
    return ""


def _prepared(url: str, response: ArchivedResponse, mime: str) -> CachedCopy:
    """An archived response made safe to serve (see the module docstring)."""
    base = mime.split(";", 1)[0].strip().lower()
    content = response.content
    cut = 0
    if kind_of(mime) == "html" or base.startswith("text/"):
        cut = max(0, len(content) - MAX_SHOWN)
        content = content[:MAX_SHOWN]
    if response.decode_error:
        body, kind = _note(f"The archived body is corrupt ({response.decode_error})."), _HTML
    elif kind_of(mime) == "html":
        text, _ = decode_html(content, mime)
        body, kind = text.encode("utf-8", errors="replace"), _HTML
    elif kind_of(mime) == "pdf":
        pdf = extract_pdf(content)
        page = f"<!DOCTYPE html><meta charset=utf-8><title>{esc(pdf.title)}</title>"
        body, kind = (page + f"<pre>{esc(pdf.body)}</pre>").encode(), _HTML
    elif base.startswith("text/"):
        text, _ = decode_html(content, mime)
        body, kind = text.encode("utf-8", errors="replace"), "text/plain; charset=utf-8"
    elif base in _IMAGES:
        body, kind = content, base
    else:
        body, kind = _note(f"{len(content)} bytes of {mime or 'unknown type'}, not shown."), _HTML
    return CachedCopy(url, response.date, body, kind, cut)
