"""Sitemaps: the URLs a site lists for crawlers, read from XML, gzipped XML or plain text.

Role in the data flow: a URL source beside the links of pages. The engine fetches the sitemaps
that robots.txt names in ``Sitemap:`` lines (or a guessed ``/sitemap.xml``) and hands each body
to :func:`parse_sitemap`; the entries of a ``<urlset>`` go to the frontier, those of a
``<sitemapindex>`` are further sitemaps to fetch.

A sitemap is untrusted input. gzip is inflated a chunk at a time and reading stops at
:data:`MAX_SITEMAP_BYTES`, so a gzip bomb never becomes a huge string. XML goes through expat in
streaming mode and any DOCTYPE is refused before its first declaration is read: without a DTD
there is no entity to expand (billion laughs, quadratic blow-up) or to fetch (XXE), which is
what defusedxml does, here without the dependency. Every problem is a value, an error kind in
:attr:`Sitemap.errors` kept beside the entries read before it; :func:`parse_sitemap` never raises.
"""

from __future__ import annotations

import codecs
import contextlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import NoReturn
from xml.parsers import expat

__all__ = ["MAX_SITEMAP_BYTES", "MAX_SITEMAP_URLS", "Sitemap", "SitemapEntry", "parse_sitemap"]

MAX_SITEMAP_URLS = 50_000  # sitemaps.org limit per file
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # uncompressed size limit per file

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One ``<url>`` or ``<sitemap>``: its location as written (entities decoded, whitespace
    stripped, not canonicalised) and its ``<lastmod>`` text, if any."""

    loc: str
    lastmod: str | None


@dataclass(frozen=True, slots=True)
class Sitemap:
    """A parsed sitemap. ``is_index`` means the entries are further sitemaps; ``errors`` holds
    each error kind met once, in the order met (see :func:`parse_sitemap`)."""

    is_index: bool
    entries: tuple[SitemapEntry, ...]
    errors: tuple[str, ...]


class _StopReadingError(Exception):
    """Ends reading early, its error kind already noted: raising is how an expat handler stops."""


class _Collector:
    """Entries and error kinds, shared by the decompressor and the readers."""

    def __init__(self) -> None:
        self.entries: list[SitemapEntry] = []
        self.errors: dict[str, None] = {}  # an ordered set
        self.is_index = False

    def error(self, kind: str) -> None:
        self.errors.setdefault(kind, None)

    def add(self, loc: str, lastmod: str | None) -> None:
        if len(self.entries) >= MAX_SITEMAP_URLS:
            self.error("sitemap_too_many_urls")
            raise _StopReadingError
        self.entries.append(SitemapEntry(loc, lastmod))

    def cut_short(self) -> bool:
        """Did the bytes stop before the document did (too large, or a broken gzip)?"""
        return "sitemap_too_large" in self.errors or "sitemap_bad_gzip" in self.errors


def parse_sitemap(body: bytes) -> Sitemap:
    """Read a sitemap: a ``<urlset>``, a ``<sitemapindex>`` or a plain list of URLs, each
    possibly gzipped (told by its magic bytes, not by a header). Error kinds:

    ``sitemap_bad_xml`` not well-formed (entries before the break are kept);
    ``sitemap_dtd`` a DOCTYPE, refused outright with no entries;
    ``sitemap_too_large`` above :data:`MAX_SITEMAP_BYTES` once inflated (reading stops there);
    ``sitemap_too_many_urls`` entries beyond :data:`MAX_SITEMAP_URLS` dropped;
    ``sitemap_bad_gzip`` a corrupt gzip stream (what inflated before it is kept);
    ``sitemap_not_sitemap`` XML whose root is neither ``urlset`` nor ``sitemapindex``.
    """
    found = _Collector()
    raw = _gunzip(body, found) if body.startswith(GZIP_MAGIC) else _slices(body)
    chunks = _capped(raw, found)
    first = _first_content(chunks)
    if first:
        reader = _read_xml if first.startswith(b"<") else _read_text
        with contextlib.suppress(_StopReadingError):
            reader(chain([first], chunks), found)
    return Sitemap(found.is_index, tuple(found.entries), tuple(found.errors))


def _slices(body: bytes) -> Iterator[bytes]:
    for start in range(0, len(body), _CHUNK):
        yield body[start : start + _CHUNK]


def _gunzip(body: bytes, found: _Collector) -> Iterator[bytes]:
    """Inflate every member a chunk at a time, so the caller decides how much to read. A corrupt
    or truncated stream ends with ``sitemap_bad_gzip`` after all that inflated before it."""
    inflater = zlib.decompressobj(wbits=31)
    for data in _slices(body):
        piece, more = data, True  # output may be waiting inside zlib although all input is taken
        while piece or more:
            if inflater.eof:
                if not piece.strip(b"\0"):  # zero padding after the last member is allowed
                    break
                inflater = zlib.decompressobj(wbits=31)
            try:
                out = inflater.decompress(piece, _CHUNK)
            except zlib.error:
                found.error("sitemap_bad_gzip")
                return
            piece = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            more = len(out) == _CHUNK
            if out:
                yield out
    if not inflater.eof:
        found.error("sitemap_bad_gzip")


def _capped(chunks: Iterator[bytes], found: _Collector) -> Iterator[bytes]:
    """Pass chunks on up to :data:`MAX_SITEMAP_BYTES` in all; past that, note it and stop."""
    left = MAX_SITEMAP_BYTES
    for chunk in chunks:
        if len(chunk) > left:
            found.error("sitemap_too_large")
            if left:
                yield chunk[:left]
            return
        left -= len(chunk)
        yield chunk


def _first_content(chunks: Iterator[bytes]) -> bytes:
    """The first chunk with something besides a UTF-8 byte order mark and leading whitespace,
    stripped of both; ``b""`` when the whole body is blank. Blank chunks are dropped."""
    opening = next(chunks, b"").removeprefix(codecs.BOM_UTF8)
    for chunk in chain([opening], chunks):
        stripped = chunk.lstrip()
        if stripped:
            return stripped
    return b""


def _read_text(chunks: Iterator[bytes], found: _Collector) -> None:
    """A text sitemap: one absolute http(s) URL per line; other lines are ignored."""
    pending = bytearray()  # the unfinished line; appended to in place, so long lines stay linear
    for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            pending += chunk[start:end]
            _text_line(bytes(pending), found)
            pending.clear()
            start = end + 1
        pending += chunk[start:]
    _text_line(bytes(pending), found)


def _text_line(line: bytes, found: _Collector) -> None:
    url = line.decode("utf-8", errors="replace").strip()
    if url[:8].lower().startswith(("http://", "https://")):
        found.add(url, None)


class _XmlReader:
    """Expat handlers that pick ``loc`` and ``lastmod`` out of each entry, by local name."""

    def __init__(self, found: _Collector) -> None:
        self.found = found
        self.depth = 0
        self.entry_name = "url"
        self.field: str | None = None  # 'loc' or 'lastmod' while inside one, in an entry
        self.text: list[str] = []
        self.values: dict[str, str] = {}

    def doctype(
        self, name: str, _system: str | None, _public: str | None, internal_subset: bool
    ) -> NoReturn:
        # Refused either way, before any declaration is read; only the error kind differs:
        # an HTML page served in place of a sitemap is a wrong document, not an attack.
        plain_html = name.lower() == "html" and not internal_subset
        self.found.error("sitemap_not_sitemap" if plain_html else "sitemap_dtd")
        raise _StopReadingError

    def declaration(self, *_: object) -> NoReturn:
        # Declarations only occur inside a DOCTYPE, which is refused first; kept as a backstop.
        self.found.error("sitemap_dtd")
        raise _StopReadingError

    def start(self, name: str, _attributes: dict[str, str]) -> None:
        local = name.rpartition(" ")[2]  # expat writes namespaced names as 'uri local'
        self.depth += 1
        if self.depth == 1:
            if local not in ("urlset", "sitemapindex"):
                self.found.error("sitemap_not_sitemap")
                raise _StopReadingError
            self.found.is_index = local == "sitemapindex"
            self.entry_name = "sitemap" if self.found.is_index else "url"
        elif self.depth == 2 and local == self.entry_name:
            self.values = {}
        elif self.depth == 3 and local in ("loc", "lastmod"):
            self.field, self.text = local, []

    def end(self, name: str) -> None:
        local = name.rpartition(" ")[2]
        if self.depth == 3 and self.field is not None:
            self.values[self.field] = "".join(self.text).strip()
            self.field = None
        elif self.depth == 2 and local == self.entry_name:
            loc = self.values.get("loc")
            if loc:
                self.found.add(loc, self.values.get("lastmod") or None)
        self.depth -= 1

    def characters(self, data: str) -> None:
        if self.field is not None:
            self.text.append(data)


def _read_xml(chunks: Iterator[bytes], found: _Collector) -> None:
    reader = _XmlReader(found)
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = reader.doctype
    parser.EntityDeclHandler = reader.declaration
    parser.UnparsedEntityDeclHandler = reader.declaration
    parser.ExternalEntityRefHandler = reader.declaration
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.characters
    try:
        for chunk in chunks:
            parser.Parse(chunk, False)
        if not found.cut_short():  # a document we stopped reading was not broken by its author
            parser.Parse(b"", True)
    except expat.ExpatError:
        found.error("sitemap_bad_xml")
