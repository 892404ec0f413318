"""Content sniffing: the type a fetched body really has when its Content-Type does not say.

Role in the data flow: the fetcher reads a body, then :func:`computed_type` names the type the
rest of the crawl works with (``FetchResult.content_type``: whether the recorder parses the
page for links, the ``pages.content_type`` column, what the indexer extracts). The WARC record
keeps the headers exactly as the server sent them.

Two rules, and no more, so that a correct header is never second-guessed:

* **No usable type** (no Content-Type, one that does not parse as ``type/subtype``, or
  ``unknown/unknown``, ``application/unknown``, ``*/*``): the WHATWG MIME Sniffing Standard's
  "rules for identifying an unknown MIME type" (section 7.1) on the first 1445 bytes: markup
  openings give HTML (unless the server said ``X-Content-Type-Options: nosniff``), then
  ``<?xml``, PDF, PostScript, byte order marks, the image, audio/video and archive signatures,
  and finally text or binary by the bytes present. The three signatures that need a parser
  rather than a byte pattern (MP4, WebM, MP3 without ID3) are left out: such a body is called
  ``application/octet-stream``, which the crawl does not keep either.
* **The known lie**: a body that starts with ``%PDF-`` is a PDF whatever its header says
  (servers send PDFs as ``text/html``; indexed as HTML they become raw PDF syntax). This
  goes beyond the standard, which trusts a supplied HTML type; no other type is overridden.
"""

from __future__ import annotations

import re

__all__ = [
    "PDF",
    "RESOURCE_HEADER",
    "computed_type",
    "media_type",
    "needs_sniffing",
    "unknown_type",
]

RESOURCE_HEADER = 1445  # bytes of a body the standard looks at
PDF = "application/pdf"
OCTET_STREAM = "application/octet-stream"
_UNKNOWN = frozenset({"unknown/unknown", "application/unknown", "*/*"})
_TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_ESSENCE = re.compile(f"{_TOKEN}/{_TOKEN}")
_WHITESPACE = b"\t\n\x0c\r "
_TAG_END = b" >"
# Bytes that never occur in text (section 3: "binary data byte").
_BINARY = re.compile(b"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")

# Markup openings that make a body HTML, each followed by a space or ">" (compared without
# regard to ASCII case, after leading whitespace). Only when scripts may be sniffed.
_HTML_OPENINGS = tuple(
    tag.encode()
    for tag in (
        "<!DOCTYPE HTML",
        "<HTML",
        "<HEAD",
        "<SCRIPT",
        "<IFRAME",
        "<H1",
        "<DIV",
        "<FONT",
        "<TABLE",
        "<A",
        "<STYLE",
        "<TITLE",
        "<B",
        "<BODY",
        "<BR",
        "<P",
        "<!--",
    )
)
# (signature, mask, type): a byte matches where ``byte & mask == signature``; mask 00 is "any".
_Row = tuple[bytes, bytes, str]


def _row(signature: bytes, kind: str, wildcards: tuple[int, ...] = ()) -> _Row:
    mask = bytes(0x00 if i in wildcards else 0xFF for i in range(len(signature)))
    return signature, mask, kind


_SIGNATURES: tuple[_Row, ...] = (
    _row(b"%PDF-", PDF),
    _row(b"%!PS-Adobe-", "application/postscript"),
    _row(b"\xfe\xff", "text/plain"),  # UTF-16BE byte order mark
    _row(b"\xff\xfe", "text/plain"),  # UTF-16LE byte order mark
    _row(b"\xef\xbb\xbf", "text/plain"),  # UTF-8 byte order mark
    # Images (section 6.1).
    _row(b"\x00\x00\x01\x00", "image/x-icon"),
    _row(b"\x00\x00\x02\x00", "image/x-icon"),
    _row(b"BM", "image/bmp"),
    _row(b"GIF87a", "image/gif"),
    _row(b"GIF89a", "image/gif"),
    _row(b"RIFF....WEBPVP", "image/webp", (4, 5, 6, 7)),
    _row(b"\x89PNG\r\n\x1a\n", "image/png"),
    _row(b"\xff\xd8\xff", "image/jpeg"),
    # Audio and video (section 6.2), the byte patterns only.
    _row(b".snd", "audio/basic"),
    _row(b"FORM....AIFF", "audio/aiff", (4, 5, 6, 7)),
    _row(b"ID3", "audio/mpeg"),
    _row(b"OggS\x00", "application/ogg"),
    _row(b"MThd\x00\x00\x00\x06", "audio/midi"),
    _row(b"RIFF....AVI ", "video/avi", (4, 5, 6, 7)),
    _row(b"RIFF....WAVE", "audio/wave", (4, 5, 6, 7)),
    # Archives (section 6.3).
    _row(b"\x1f\x8b\x08", "application/x-gzip"),
    _row(b"PK\x03\x04", "application/zip"),
    _row(b"Rar!\x1a\x07\x00", "application/x-rar-compressed"),
)


def media_type(content_type: str | None) -> str:
    """The media type of a Content-Type value, lower case, without parameters."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def needs_sniffing(content_type: str | None) -> bool:
    """Whether a Content-Type value gives no usable type, so the body must say."""
    essence = media_type(content_type)
    return essence in _UNKNOWN or _ESSENCE.fullmatch(essence) is None


def _matches(head: bytes, row: _Row) -> bool:
    signature, mask, _ = row
    if len(head) < len(signature):
        return False
    return all(b & m == s & m for b, m, s in zip(head, mask, signature, strict=False))


def _is_html(head: bytes) -> bool:
    text = head.lstrip(_WHITESPACE).upper()  # bytes.upper() changes ASCII letters only
    for opening in _HTML_OPENINGS:
        if text.startswith(opening) and text[len(opening) : len(opening) + 1] in (b" ", b">"):
            return True
    return False


def unknown_type(head: bytes, *, scriptable: bool = True) -> str:
    """The type of a body whose header gives none (the standard's section 7.1).

    ``head`` is the start of the body (the first :data:`RESOURCE_HEADER` bytes are read);
    ``scriptable`` false (the server said ``nosniff``) never gives HTML or XML.
    """
    head = head[:RESOURCE_HEADER]
    if scriptable:
        if _is_html(head):
            return "text/html"
        if head.lstrip(_WHITESPACE).startswith(b"<?xml"):
            return "text/xml"
    for row in _SIGNATURES:
        if _matches(head, row):
            return row[2]
    return OCTET_STREAM if _BINARY.search(head) else "text/plain"


def computed_type(declared: str, head: bytes, *, no_sniff: bool = False) -> str:
    """The Content-Type the crawl goes by, given the one the server ``declared`` ("" when
    none) and the start of the decoded body; ``declared`` itself unless a rule above applies."""
    if needs_sniffing(declared):
        return unknown_type(head, scriptable=not no_sniff)
    if head.startswith(b"%PDF-") and media_type(declared) != PDF:
        return PDF
    return declared
