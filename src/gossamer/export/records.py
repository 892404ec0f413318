"""Export stage, one record per page: a ``crawl.db`` row joined with its archived response.

Data flow: ``store.export_rows`` (rows in WARC order) -> **records** (each row's WARC record
read back, its text extracted exactly as ``gossamer index`` extracts it) -> filters ->
writers. The text comes from the indexer's own function (``index.extract.extract``) and the
indexer's own rules for what it keeps: no text for a body that could not be decoded, a page
that asks not to be indexed (noindex) or one with neither words nor title; the language is
``index.language.detect_language`` of title and text with the page's ``lang`` as hint. So the
``text`` of a record is, character for character, the body the search index holds for that
page (a test holds the two equal).

:data:`FIELDS` is the one list of the record's fields, their types and what they mean: the
JSON and CSV writers, the Parquet schema, ``--fields`` and docs/DATA.md all follow it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gossamer.index.archive import WarcReader, text_source
from gossamer.index.errors import IndexingError
from gossamer.index.extract import extract, kind_of
from gossamer.index.language import detect_language
from gossamer.store.export_rows import ExportRow
from gossamer.store.records import MAX_DECODED
from gossamer.store.warc import payload_digest

__all__ = ["FIELDS", "Field", "PageRecord", "read_records", "record_values"]


@dataclass(frozen=True, slots=True)
class Field:
    """One field of an exported record: its name, its type, and what it holds."""

    name: str
    kind: str  # "string", "int", "timestamp", "strings" (a list of strings)
    about: str


FIELDS: tuple[Field, ...] = (
    Field("url", "string", "the URL fetched (canonical form)"),
    Field("final_url", "string", "where its redirects end; the URL itself when it answered"),
    Field("status", "int", "HTTP status; 0 when no response came (see error)"),
    Field("fetched_at", "timestamp", "when the fetch started, UTC"),
    Field("content_type", "string", "media type as stored (sniffed when the server lied)"),
    Field("host", "string", "host name (lower case, punycode)"),
    Field("depth", "int", "link hops from a seed"),
    Field("language", "string", "ISO 639-1 code as the indexer detects it; 'und' if unsure"),
    Field("title", "string", "the page's title as the indexer reads it"),
    Field("text", "string", "main text, boilerplate removed, as the search index holds it"),
    Field("links", "strings", "the URLs the page links to (canonical form, deduplicated)"),
    Field("warc_file", "string", "the WARC file holding the response (in DIR/warc/)"),
    Field("warc_offset", "int", "byte offset of the response record's gzip member"),
    Field("warc_length", "int", "byte length of that gzip member"),
    Field("payload_digest", "string", "WARC-Payload-Digest of the body as received"),
    Field("error", "string", "why the fetch failed or was cut (too_large, timeout, ...)"),
)
FIELD_NAMES = tuple(f.name for f in FIELDS)


@dataclass(frozen=True, slots=True)
class PageRecord:
    """One exported page; None where a value does not exist for it (no response, no text)."""

    url: str
    final_url: str
    status: int
    fetched_at: float | None
    content_type: str | None
    host: str | None
    depth: int | None
    language: str | None
    title: str | None
    text: str | None
    links: tuple[str, ...]
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    payload_digest: str | None
    error: str | None


def _no_text(row: ExportRow, final_url: str, digest: str | None = None) -> PageRecord:
    return PageRecord(
        row.url,
        final_url,
        row.status,
        row.fetched_at,
        row.content_type,
        row.host,
        row.depth,
        None,
        None,
        None,
        row.links,
        row.warc_file,
        row.warc_offset,
        row.warc_length,
        digest,
        row.error or None,
    )


def _record(reader: WarcReader, row: ExportRow, final_url: str) -> PageRecord:
    if row.warc_file is None or row.warc_offset is None or row.warc_length is None:
        return _no_text(row, final_url)
    try:
        response = reader.read(row.warc_file, row.warc_offset, row.warc_length)
    except IndexingError:
        # A record gone or damaged: the row is exported without what only the record gives;
        # ``gossamer recover`` is what repairs such a folder.
        return _no_text(row, final_url)
    digest = payload_digest(response.body)
    mime = row.content_type or response.content_type
    if response.decode_error or kind_of(mime) is None or not (200 <= row.status < 300):
        return _no_text(row, final_url, digest)
    place = (row.warc_file, row.warc_offset, row.warc_length)
    content, rendered_type = text_source(reader, response, place, row.render)
    text = extract(content, rendered_type or mime, row.url)
    if text is None or text.noindex or (not text.body.split() and not text.title):
        return _no_text(row, final_url, digest)
    language = detect_language(f"{text.title}\n{text.body}", text.lang_hint)
    return replace(
        _no_text(row, final_url, digest), language=language, title=text.title, text=text.body
    )


def read_records(
    crawl_dir: Path,
    rows: Sequence[tuple[ExportRow, str]],
    max_decoded: int = MAX_DECODED,
    with_text: bool = True,
) -> list[PageRecord]:
    """The records of ``rows`` (each with its final URL), reading the crawl's WARC files; runs
    in worker processes. Without ``with_text`` no record is read at all (the fields asked for
    need none)."""
    if not with_text:
        return [_no_text(row, final) for row, final in rows]
    with WarcReader(crawl_dir / "warc", max_decoded=max_decoded) as reader:
        return [_record(reader, row, final) for row, final in rows]


def iso_time(seconds: float | None) -> str | None:
    """A fetch time as ISO 8601 UTC with microseconds, as JSON and CSV spell it."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def record_values(record: PageRecord, fields: Sequence[str]) -> dict[str, Any]:
    """The chosen fields of a record as plain values (time as ISO text, links as a list)."""
    values: dict[str, Any] = {}
    for name in fields:
        value = getattr(record, name)
        if name == "fetched_at":
            value = iso_time(value)
        elif name == "links":
            value = list(value)
        values[name] = value
    return values
