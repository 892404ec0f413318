"""Getting the data out of a crawl folder: ``gossamer export`` (JSON Lines, CSV, Parquet, WET,
WACZ).

Data flow: ``crawl.db`` + WARC files (the store) -> ``store.export_rows`` -> **export**:
``records`` (each page's text as the indexer extracts it) -> ``filters`` -> ``writers`` (one
per format), or ``wacz`` (the archive packaged whole). Streamed: memory does not grow with
the crawl. docs/DATA.md lists every field with its type.
"""

from __future__ import annotations

from gossamer.export.filters import Selection
from gossamer.export.records import FIELDS, PageRecord
from gossamer.export.run import ExportReport, export_pages
from gossamer.export.wacz import WaczReport, write_wacz

__all__ = [
    "FIELDS",
    "ExportReport",
    "PageRecord",
    "Selection",
    "WaczReport",
    "export_pages",
    "write_wacz",
]
