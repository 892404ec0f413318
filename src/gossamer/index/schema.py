"""Index stage, layout: the tantivy schema, its English analyzer, and opening ``DIR/index``.

Data flow: extract -> **index** -> search. Writer and searcher both open the index here, so
both register the same analyzer under the same name; tantivy stores only the name.

The analyzer is tantivy's ``en_stem`` chain (simple tokenizer, long-token removal, lower
case, Porter stemmer) with English stopwords removed before stemming. Stopword removal
keeps token positions, so a phrase such as "out of memory" still needs its words in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tantivy

from gossamer.index.access import readonly_index_path
from gossamer.index.errors import IndexingError

__all__ = [
    "ANALYZER",
    "INDEX_DIR",
    "RAW_FIELDS",
    "TEXT_FIELDS",
    "Fields",
    "IndexHandle",
    "build_schema",
    "make_analyzer",
    "open_index",
]

INDEX_DIR = "index"  # under the crawl folder
_TANTIVY_DIR = "tantivy"  # under INDEX_DIR, beside the document store
ANALYZER = "gossamer_en"
_MAX_TOKEN_BYTES = 40


class Fields:
    """Field names, in one place so writer and searcher cannot disagree."""

    URL = "url"  # stored, raw: the exact URL, for look-ups and deletes
    URL_ID = "url_id"  # stored, raw: SHA-1 of the URL, as in crawl.db
    URL_WORDS = "url_words"  # analysed words of the URL (path names say a lot)
    TITLE = "title"
    HEADINGS = "headings"
    DESCRIPTION = "description"
    BODY = "body"
    HOST = "host"  # stored, raw: the host name, without scheme or port
    SITE = "site"  # raw, one value per host suffix, for site: matching subdomains
    LANG = "lang"
    CONTENT_TYPE = "content_type"  # "html" or "pdf"
    MIME = "mime"  # the Content-Type as served, stored only
    CRAWLED = "crawled"  # date of the fetch
    DOC_ID = "doc_id"  # SHA-1 of the decoded content: equal ids are exact duplicates
    NUM = "num"  # row number in the document store: the join key for ranks and groups
    GROUP = "group"  # near-duplicate group (a NUM), for collapsing results


TEXT_FIELDS = (Fields.TITLE, Fields.HEADINGS, Fields.DESCRIPTION, Fields.BODY, Fields.URL_WORDS)
RAW_FIELDS = (
    Fields.URL,
    Fields.URL_ID,
    Fields.HOST,
    Fields.SITE,
    Fields.LANG,
    Fields.CONTENT_TYPE,
    Fields.DOC_ID,
)


def make_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(_MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        builder.add_text_field(name, stored=name != Fields.URL_WORDS, tokenizer_name=ANALYZER)
    for name in RAW_FIELDS:
        builder.add_text_field(name, stored=name != Fields.SITE, tokenizer_name="raw")
    builder.add_text_field(Fields.MIME, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_date_field(Fields.CRAWLED, stored=True, indexed=True, fast=True)
    builder.add_unsigned_field(Fields.NUM, stored=True, indexed=True, fast=True)
    builder.add_unsigned_field(Fields.GROUP, stored=True, indexed=True, fast=True)
    return builder.build()


@dataclass(frozen=True, slots=True)
class IndexHandle:
    """An open tantivy index with the schema and analyzer that go with it."""

    index: tantivy.Index
    schema: tantivy.Schema
    analyzer: tantivy.TextAnalyzer
    path: Path


def open_index(crawl_dir: Path, *, create: bool) -> IndexHandle:
    """Open ``DIR/index/tantivy``; with ``create``, make it when it does not exist yet.

    Without ``create`` the index is only read, which works on a read-only folder too.
    """
    path = crawl_dir / INDEX_DIR / _TANTIVY_DIR
    analyzer = make_analyzer()
    try:
        if path.is_dir() and tantivy.Index.exists(str(path)):
            if create:
                index = tantivy.Index.open(str(path))
            else:
                with readonly_index_path(path) as readable:
                    index = tantivy.Index.open(str(readable))
        elif create:
            path.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(build_schema(), path=str(path))
        else:
            raise IndexingError(f"no search index in {crawl_dir}; run 'gossamer index' first")
    except (ValueError, OSError) as exc:
        raise IndexingError(f"cannot open search index {path}: {exc}") from exc
    index.register_tokenizer(ANALYZER, analyzer)
    return IndexHandle(index, index.schema, analyzer, path)
