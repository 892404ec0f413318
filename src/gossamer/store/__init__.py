"""Store: the crawl's durable output under its folder DIR, and the one owner of its databases.

Data flow: fetch -> parse -> **store**. Each response goes to a WARC file (``warc``), gets a
line in ``DIR/index.cdxj`` (``cdxj``) and a row in ``DIR/crawl.db`` (``metadata``), which also
holds every discovered URL and the link graph; ``reports`` summarises it all in
``DIR/reports``. Every query on ``crawl.db`` is in this package: its shape (``schema``,
``migrate``), its writes (``writes``, committed inline or on the writer thread of ``writer``)
and its reads (``reads``: ``CrawlRecords`` for readers outside the crawl: rank, search, web).
The index's bookkeeping database ``DIR/index/docs.db`` is here too (``docstore``). Every fault
is raised as ``StoreError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

if TYPE_CHECKING:
    from gossamer.store.cdxj import CdxjWriter, sort_cdxj
    from gossamer.store.metadata import MetadataDB, crawl_db_problem
    from gossamer.store.reads import CrawlReads, CrawlRecords, recorded_files
    from gossamer.store.reports import summary_line, write_reports
    from gossamer.store.rows import PageRow, page_row
    from gossamer.store.warc import WarcLocation, WarcStore

# Loaded on first use: a reader of one file (docs.db, crawl.db) does not import the WARC
# writer, the CDXJ writer or the fetcher's types behind them.
_HOMES = {
    "CdxjWriter": "cdxj",
    "sort_cdxj": "cdxj",
    "MetadataDB": "metadata",
    "crawl_db_problem": "metadata",
    "CrawlReads": "reads",
    "CrawlRecords": "reads",
    "recorded_files": "reads",
    "summary_line": "reports",
    "write_reports": "reports",
    "PageRow": "rows",
    "page_row": "rows",
    "WarcLocation": "warc",
    "WarcStore": "warc",
}

__all__ = [
    "CdxjWriter",
    "CrawlReads",
    "CrawlRecords",
    "MetadataDB",
    "PageRow",
    "WarcLocation",
    "WarcStore",
    "crawl_db_problem",
    "page_row",
    "recorded_files",
    "sort_cdxj",
    "summary_line",
    "write_reports",
]

__getattr__ = exports(__name__, _HOMES)
