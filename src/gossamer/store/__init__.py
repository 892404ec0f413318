"""Store: the crawl's durable output under its folder DIR.

Data flow: fetch -> parse -> **store**. Each response goes to a WARC file (``warc``), gets a
line in ``DIR/index.cdxj`` (``cdxj``) and a row in ``DIR/crawl.db`` (``metadata``), which also
holds every discovered URL and the link graph; ``reports`` summarises it all in
``DIR/reports``. Every fault is raised as ``StoreError``.
"""

from gossamer.store.cdxj import CdxjWriter, sort_cdxj
from gossamer.store.metadata import MetadataDB, PageRow, page_row
from gossamer.store.reports import summary_line, write_reports
from gossamer.store.warc import WarcLocation, WarcStore

__all__ = [
    "CdxjWriter",
    "MetadataDB",
    "PageRow",
    "WarcLocation",
    "WarcStore",
    "page_row",
    "sort_cdxj",
    "summary_line",
    "write_reports",
]
