"""Web UI, cached copies: a crawled page read back from the WARC, made safe to display.

Data flow: crawl.db (where) -> WARC (what) -> **cached** -> the sandboxed ``/cached/raw``
response. The copy is served on its own route under a policy of its own (see ``app``):
no scripts, no network, a sandboxed unique origin, so whatever the crawled page holds runs
nowhere. Here it is only decoded: HTML is re-encoded as UTF-8 (the header then states the
charset, whatever the page claimed), PDFs become their extracted text, and other binary
types are described rather than shown.

A copy shows at most ``MAX_SHOWN`` bytes of an archived text or HTML body (``cut`` says how
many more there were). A stored page may be tens of megabytes (a page of a million links
is 30 MB, and its rewritten links make that 86 MB): nobody reads that in a cached copy, the
browser struggles with it, and each copy being prepared holds a parse tree of ~24 times its
size. 2 MiB is more than 99% of real HTML pages and half what the crawl reads for links.
"""

from __future__ import annotations

from dataclasses import dataclass

from gossamer.index import IndexingError, WarcReader, extract_pdf
from gossamer.index.extract import kind_of
from gossamer.parse import decode_html
from gossamer.store import CrawlRecords
from gossamer.web.render import esc

__all__ = ["MAX_SHOWN", "CachedCopy", "load_cached"]

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
    mime = row.content_type or response.content_type or ""  # crawl.db holds the sniffed type
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
