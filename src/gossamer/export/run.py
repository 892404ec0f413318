"""Export stage, the run: rows -> records (in worker processes) -> filters -> one writer.

Data flow: ``crawl.db`` (``store.export_rows``, filtered in SQL, in WARC order) -> chunks of
``CHUNK`` rows -> :func:`~gossamer.export.records.read_records` (a pool of ``jobs`` processes
once the export is big enough to pay for their start, as ``gossamer index`` does) -> the
language filter -> the format's writer -> a file (written beside it and renamed into place
whole) or standard output. At most ``2 * jobs`` chunks are in flight, so memory stays flat
however big the crawl is; the records come out in the rows' order.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO

from gossamer.export.filters import Selection
from gossamer.export.records import PageRecord, read_records
from gossamer.export.writers import open_writer
from gossamer.index.redirects import redirect_targets
from gossamer.store.export_rows import ExportRow, ExportRows
from gossamer.store.tempfiles import replacing

__all__ = ["CHUNK", "ExportReport", "export_pages"]

CHUNK = 200  # rows per task sent to a worker process
_POOL_MIN_ROWS = 2_000  # below this, starting worker processes costs more than it saves

Progress = Callable[[int, int], None]  # (rows done, rows in all)


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What one export wrote."""

    rows: int  # page rows read from crawl.db (after the SQL filters)
    written: int  # records written (after the language filter; WET: pages with text)
    path: Path | None  # None: standard output


def _chunks(rows: Iterator[tuple[ExportRow, str]]) -> Iterator[list[tuple[ExportRow, str]]]:
    while chunk := list(islice(rows, CHUNK)):
        yield chunk


def _records(
    crawl_dir: Path, rows: Iterator[tuple[ExportRow, str]], total: int, jobs: int, text: bool
) -> Iterator[list[PageRecord]]:
    if jobs <= 1 or total < _POOL_MIN_ROWS or not text:
        for chunk in _chunks(rows):
            yield read_records(crawl_dir, chunk, with_text=text)
        return
    # spawn, not fork: a fork would copy the parent's SQLite cursor and its locks.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        in_flight: deque[Future[list[PageRecord]]] = deque()
        try:
            for chunk in _chunks(rows):
                if len(in_flight) >= 2 * jobs:
                    yield in_flight.popleft().result()
                in_flight.append(pool.submit(read_records, crawl_dir, chunk))
            while in_flight:
                yield in_flight.popleft().result()
        finally:
            for future in in_flight:
                future.cancel()


def _write(
    crawl_dir: Path,
    format_name: str,
    stream: IO[bytes],
    selection: Selection,
    *,
    jobs: int,
    progress: Progress | None,
) -> tuple[int, int]:
    redirects = redirect_targets(crawl_dir / "crawl.db")
    with ExportRows(crawl_dir / "crawl.db") as db:
        db.check_crawl()
        total = db.count(selection.rows)
        rows = ((row, redirects.get(row.url, row.url)) for row in db.rows(selection.rows))
        writer = open_writer(format_name, stream, selection.fields)
        done = written = 0
        text = selection.reads_warc or format_name == "wet"
        for records in _records(crawl_dir, rows, total, jobs, text):
            for record in records:
                if selection.keeps(record):
                    writer.write(record)
                    written += 1
            done += len(records)
            if progress is not None:
                progress(done, total)
        writer.close()
    return done, written


def export_pages(
    crawl_dir: Path,
    format_name: str,
    out: Path | None,
    selection: Selection | None = None,
    *,
    jobs: int = 1,
    progress: Progress | None = None,
) -> ExportReport:
    """Write one record per page row of ``crawl_dir`` in ``format_name`` (jsonl, csv, parquet,
    wet) to ``out``, or to standard output when ``out`` is None. A file appears whole or not
    at all: it is written beside its name and renamed at the end."""
    selection = selection or Selection()
    if out is None:
        stream = sys.stdout.buffer
        done, written = _write(
            crawl_dir, format_name, stream, selection, jobs=jobs, progress=progress
        )
        stream.flush()
        return ExportReport(done, written, None)
    with replacing() as files, files.beside(out).open("wb") as stream:
        done, written = _write(
            crawl_dir, format_name, stream, selection, jobs=jobs, progress=progress
        )
    return ExportReport(done, written, out)
