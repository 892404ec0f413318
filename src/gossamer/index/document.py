"""Index stage, documents: the tantivy document of one page, new or rewritten.

Data flow: indexer (an extracted page and its store row) -> **document** -> tantivy; and
relink (a stored document whose anchor text changed) -> **document** -> tantivy. A stored
document holds every field but the ones made again from other data (the URL's words, the
``site`` suffixes, the anchor text), so it can be rewritten without reading the WARC again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import tantivy

from gossamer.index.extract import PageText
from gossamer.index.schema import Fields, url_words

__all__ = ["PageFacts", "page_document", "rewritten"]


@dataclass(frozen=True, slots=True)
class PageFacts:
    """What a document says about a page besides its text."""

    url: str
    url_id: str
    host: str
    lang: str
    mime: str
    fetched_at: float
    doc_id: str | None
    num: int  # row in the document store
    group: int  # near-duplicate group


def _derived(doc: tantivy.Document, url: str, host: str, anchors: list[str]) -> None:
    doc.add_text(Fields.URL_WORDS, url_words(url))
    labels = host.split(".")
    for i in range(len(labels)):
        doc.add_text(Fields.SITE, ".".join(labels[i:]))
    for words in anchors:
        doc.add_text(Fields.ANCHORS, words)


def page_document(text: PageText, facts: PageFacts, anchors: list[str]) -> tantivy.Document:
    """A new document for an indexable page; ``anchors`` from ``AnchorStore.values_for``."""
    doc = tantivy.Document()
    doc.add_text(Fields.URL, facts.url)
    doc.add_text(Fields.URL_ID, facts.url_id)
    doc.add_text(Fields.TITLE, text.title)
    for heading in text.headings:
        doc.add_text(Fields.HEADINGS, heading)
    doc.add_text(Fields.DESCRIPTION, text.description)
    doc.add_text(Fields.BODY, text.body)
    doc.add_text(Fields.HOST, facts.host)
    doc.add_text(Fields.LANG, facts.lang)
    doc.add_text(Fields.CONTENT_TYPE, text.kind)
    doc.add_text(Fields.MIME, facts.mime)
    doc.add_date(Fields.CRAWLED, datetime.fromtimestamp(facts.fetched_at, tz=UTC))
    if facts.doc_id:
        doc.add_text(Fields.DOC_ID, facts.doc_id)
    doc.add_unsigned(Fields.NUM, facts.num)
    doc.add_unsigned(Fields.GROUP, facts.group)
    _derived(doc, facts.url, facts.host, anchors)
    return doc


_STORED_TEXT = (
    Fields.URL,
    Fields.URL_ID,
    Fields.TITLE,
    Fields.HEADINGS,
    Fields.DESCRIPTION,
    Fields.BODY,
    Fields.HOST,
    Fields.LANG,
    Fields.CONTENT_TYPE,
    Fields.MIME,
    Fields.DOC_ID,
)


def rewritten(stored: tantivy.Document, anchors: list[str]) -> tantivy.Document:
    """The stored document ``stored`` again, with ``anchors`` as its anchor text."""
    values: dict[str, list[Any]] = stored.to_dict()
    doc = tantivy.Document()
    for name in _STORED_TEXT:
        for value in values.get(name, ()):
            doc.add_text(name, str(value))
    for crawled in values.get(Fields.CRAWLED, ()):
        doc.add_date(Fields.CRAWLED, crawled)
    for name in (Fields.NUM, Fields.GROUP):
        for number in values.get(name, ()):
            doc.add_unsigned(name, int(number))
    url = str(stored.get_first(Fields.URL) or "")
    _derived(doc, url, str(stored.get_first(Fields.HOST) or ""), anchors)
    return doc
