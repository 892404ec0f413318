"""Index: from the crawl's WARC files to a full-text index with duplicate groups.

Data flow: store -> **index** -> rank -> search -> web. ``build_index`` reads each new page
from the WARC files (``archive``), extracts its text (``extract``) and its links' words
(``links``), detects its language (``language``), fingerprints it (``shingles``,
``simhash``, ``minhash``) and chooses its duplicate group (``near``), records it in
``DIR/index/docs.db`` (``gossamer.store.docstore``), its links in ``DIR/index/anchors.db``
(``anchors``) and adds it to the tantivy index in ``DIR/index/tantivy`` (``schema``,
``document``, ``relink``).

The names below are loaded on first use: ``gossamer search`` needs the schema, not the
HTML and PDF readers, and a search from the command line should not wait for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

if TYPE_CHECKING:
    from gossamer.index.archive import ArchivedResponse, WarcReader
    from gossamer.index.errors import IndexingError
    from gossamer.index.extract import PageText, extract, extract_html, extract_pdf
    from gossamer.index.indexer import IndexReport, build_index
    from gossamer.index.language import detect_language
    from gossamer.index.schema import DOCSTORE_FILE, INDEX_DIR, Fields, IndexHandle, open_index

_HOMES = {
    "ArchivedResponse": "archive",
    "WarcReader": "archive",
    "IndexingError": "errors",
    "PageText": "extract",
    "extract": "extract",
    "extract_html": "extract",
    "extract_pdf": "extract",
    "DOCSTORE_FILE": "schema",
    "IndexReport": "indexer",
    "build_index": "indexer",
    "detect_language": "language",
    "INDEX_DIR": "schema",
    "Fields": "schema",
    "IndexHandle": "schema",
    "open_index": "schema",
}

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


__getattr__ = exports(__name__, _HOMES)
