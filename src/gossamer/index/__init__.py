"""Index: from the crawl's WARC files to a full-text index with duplicate groups.

Data flow: store -> **index** -> rank -> search -> web. ``build_index`` reads each new page
from the WARC files (``archive``), extracts its text (``extract``), detects its language
(``language``), fingerprints it (``shingles``, ``simhash``, ``minhash``) and chooses its
duplicate group (``near``), records it in ``DIR/index/docs.db`` (``gossamer.store.docstore``)
and adds it to the tantivy index in ``DIR/index/tantivy`` (``schema``).
"""

from gossamer.index.archive import ArchivedResponse, WarcReader
from gossamer.index.errors import IndexingError
from gossamer.index.extract import PageText, extract, extract_html, extract_pdf
from gossamer.index.indexer import DOCSTORE_FILE, IndexReport, build_index
from gossamer.index.language import detect_language
from gossamer.index.schema import INDEX_DIR, Fields, IndexHandle, open_index

__all__ = [
    "DOCSTORE_FILE",
    "INDEX_DIR",
    "ArchivedResponse",
    "Fields",
    "IndexHandle",
    "IndexReport",
    "IndexingError",
    "PageText",
    "WarcReader",
    "build_index",
    "detect_language",
    "extract",
    "extract_html",
    "extract_pdf",
    "open_index",
]
