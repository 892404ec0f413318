"""Export stage, output: one writer per format, each taking records one at a time.

Data flow: records (filtered, fields chosen) -> **writers** -> a stream or a file. Every
writer holds at most one batch: JSON Lines and CSV write each record as it comes, Parquet
buffers one row group (``ROW_GROUP`` records or ``ROW_GROUP_BYTES`` of text, whichever comes
first), WET writes one gzip member per page. So an export's memory does not grow with the
crawl (BENCHMARKS.md measures it at 5,000 and 20,000 pages).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Protocol

from gossamer import __version__
from gossamer.export.records import FIELDS, PageRecord, iso_time, record_values

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["ROW_GROUP", "Writer", "open_writer"]

ROW_GROUP = 1_000  # records per Parquet row group
ROW_GROUP_BYTES = 32 * 1024 * 1024  # ... or this much text, whichever comes first
_KINDS = {field.name: field.kind for field in FIELDS}


class Writer(Protocol):
    def write(self, record: PageRecord) -> None: ...

    def close(self) -> None: ...


class JsonLinesWriter:
    """One JSON object per line, UTF-8, the fields in the order chosen."""

    def __init__(self, stream: IO[bytes], fields: Sequence[str]) -> None:
        self._stream = stream
        self._fields = fields

    def write(self, record: PageRecord) -> None:
        line = json.dumps(record_values(record, self._fields), ensure_ascii=False)
        self._stream.write(line.encode("utf-8", "surrogatepass") + b"\n")

    def close(self) -> None:
        self._stream.flush()


class CsvWriter:
    """A header line, then one row per record; links separated by spaces (URLs have none)."""

    def __init__(self, stream: IO[bytes], fields: Sequence[str]) -> None:
        self._text = io.TextIOWrapper(stream, encoding="utf-8", newline="", write_through=True)
        self._csv = csv.writer(self._text)
        self._fields = fields
        self._csv.writerow(fields)

    def write(self, record: PageRecord) -> None:
        values = record_values(record, self._fields)
        self._csv.writerow(
            [
                " ".join(value) if isinstance(value, list) else "" if value is None else value
                for value in values.values()
            ]
        )

    def close(self) -> None:
        self._text.flush()
        self._text.detach()


def parquet_schema(fields: Sequence[str]) -> pa.Schema:
    """The Parquet schema of the chosen fields (docs/DATA.md lists it)."""
    import pyarrow as pa  # noqa: PLC0415 (the parquet extra, only for this format)

    types = {
        "string": pa.string(),
        "int": pa.int64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "strings": pa.list_(pa.string()),
    }
    return pa.schema([pa.field(name, types[_KINDS[name]]) for name in fields])


class ParquetWriter:
    """Row groups of ``ROW_GROUP`` records, zstd-compressed."""

    def __init__(self, stream: IO[bytes], fields: Sequence[str]) -> None:
        import pyarrow.parquet as pq  # noqa: PLC0415

        self._fields = fields
        self._schema = parquet_schema(fields)
        self._writer = pq.ParquetWriter(stream, self._schema, compression="zstd")
        self._columns: dict[str, list[Any]] = {name: [] for name in fields}
        self._rows = 0
        self._bytes = 0

    def write(self, record: PageRecord) -> None:
        for name in self._fields:
            value = getattr(record, name)
            if name == "fetched_at" and value is not None:
                value = datetime.fromtimestamp(value, UTC)
            elif name == "links":
                value = list(value)
            self._columns[name].append(value)
        self._rows += 1
        self._bytes += len(record.text or "")
        if self._rows >= ROW_GROUP or self._bytes >= ROW_GROUP_BYTES:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa  # noqa: PLC0415

        if self._rows:
            table = pa.Table.from_pydict(self._columns, schema=self._schema)
            self._writer.write_table(table)
            del table
            # Arrow's allocator keeps freed blocks for reuse; handing them back after each row
            # group keeps the process's size that of one group, however many are written.
            pa.default_memory_pool().release_unused()
        self._columns = {name: [] for name in self._fields}
        self._rows = self._bytes = 0

    def close(self) -> None:
        self._flush()
        self._writer.close()


class WetWriter:
    """Common Crawl's WET: a warcinfo record, then one ``conversion`` record of plain text
    per page that has text (title on the first line, then the main text), gzip per record."""

    def __init__(self, stream: IO[bytes], fields: Sequence[str]) -> None:
        from warcio.warcwriter import WARCWriter  # noqa: PLC0415

        del fields  # a WET record has its own fixed shape
        self._writer = WARCWriter(stream, gzip=True, warc_version="WARC/1.0")
        info = self._writer.create_warcinfo_record(
            "gossamer-export.warc.wet.gz",
            {
                "software": f"Gossamer {__version__}",
                "description": "main text of each page, as gossamer index extracts it",
            },
        )
        self._writer.write_record(info)

    def write(self, record: PageRecord) -> None:
        if record.text is None:
            return
        text = f"{record.title or ''}\n{record.text}".encode("utf-8", "surrogatepass")
        headers = {
            "WARC-Date": iso_time(record.fetched_at) or "",
            "Content-Type": "text/plain",
        }
        if record.language:
            headers["WARC-Identified-Content-Language"] = record.language
        converted = self._writer.create_warc_record(
            record.url,
            "conversion",
            payload=io.BytesIO(text),
            length=len(text),
            warc_content_type="text/plain",
            warc_headers_dict=headers,
        )
        self._writer.write_record(converted)

    def close(self) -> None:
        pass


_WRITERS: dict[str, Callable[[IO[bytes], Sequence[str]], Writer]] = {
    "jsonl": JsonLinesWriter,
    "csv": CsvWriter,
    "parquet": ParquetWriter,
    "wet": WetWriter,
}


def open_writer(format_name: str, stream: IO[bytes], fields: Sequence[str]) -> Writer:
    """The writer of ``format_name`` (jsonl, csv, parquet or wet) over ``stream``."""
    return _WRITERS[format_name](stream, fields)
