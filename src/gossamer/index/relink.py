"""Index stage, last step: give pages indexed before their in-links the words of those links.

Data flow: anchors (targets marked ``dirty``) -> **relink** -> tantivy. A run reads pages
in crawl order, so a page is often written before the pages that link to it; and a later
run can add links to a page indexed long ago. Each such page's stored document is read
back, given its anchor text as of now, and replaces the old one: no WARC is read again.
Targets that are not indexed pages (never fetched, not HTML) are simply forgotten; they get
their anchor text when they are indexed.
"""

from __future__ import annotations

import tantivy

from gossamer.index.anchors import AnchorStore
from gossamer.index.document import rewritten
from gossamer.index.errors import IndexingError
from gossamer.index.schema import Fields, IndexHandle

__all__ = ["relink"]


def relink(handle: IndexHandle, writer: tantivy.IndexWriter, anchors: AnchorStore) -> int:
    """Rewrite the indexed documents whose anchor text changed; how many were rewritten.

    Call with everything else committed: the documents are read from a fresh searcher.
    """
    targets = anchors.dirty()
    if not targets:
        return 0
    handle.index.reload()
    searcher = handle.index.searcher()
    rewrites = 0
    anchors.begin()
    try:
        for url in targets:
            query = tantivy.Query.term_query(handle.schema, Fields.URL, url)
            for _, address in searcher.search(query, 1, count=False).hits:
                stored = searcher.doc(address)
                host = str(stored.get_first(Fields.HOST) or "")
                writer.delete_documents_by_term(Fields.URL_ID, str(stored.get_first(Fields.URL_ID)))
                writer.add_document(rewritten(stored, anchors.values_for(url, host)))
                rewrites += 1
        writer.commit()
    except ValueError as exc:
        anchors.rollback()
        writer.rollback()
        raise IndexingError(f"cannot write the search index: {exc}") from exc
    except BaseException:
        anchors.rollback()
        writer.rollback()
        raise
    anchors.clear_dirty()
    anchors.commit()
    return rewrites
