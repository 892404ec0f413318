"""Index stage, layout: the tantivy schema, its English analyzer, and opening ``DIR/index``.

Data flow: extract -> **index** -> search. Writer and searcher both open the index here, so
both register the same analyzer under the same name; tantivy stores only the name.

The analyzer is tantivy's ``en_stem`` chain (simple tokenizer, long-token removal, lower
case, Porter stemmer) with English stopwords removed before stemming. Stopword removal
keeps token positions, so a phrase such as "out of memory" still needs its words in place.

An index written before a field existed cannot be searched for it: ``open_index`` checks
for the newest field (``Fields.ANCHORS``) and says to run ``gossamer index`` again, which
rebuilds such an index from the crawl (see ``indexer``). So is a damaged one: tantivy and
SQLite commit atomically, so a killed ``gossamer index`` never damages the index, but a disk
or a hand can; a search then names the command, and ``gossamer index`` finds the damage
(:func:`unusable`) and builds the index anew, as everything in it comes from the crawl. A
compaction (``index.compact``) swaps a rewritten index in by two renames; one killed half-way
is settled (:func:`settle`) when a writer next opens the index.
"""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import tantivy

from gossamer.index.access import LOCK_NAME, readonly_index_path
from gossamer.index.errors import IndexingError
from gossamer.store.connect import readonly_uri

__all__ = [
    "ANALYZER",
    "DOCSTORE_FILE",
    "INDEX_DIR",
    "RAW_FIELDS",
    "TANTIVY_DIR",
    "TEXT_FIELDS",
    "Fields",
    "IndexHandle",
    "build_schema",
    "committed",
    "damaged",
    "drop_unusable",
    "fresh_path",
    "has_tantivy",
    "holds_tantivy",
    "is_current",
    "make_analyzer",
    "open_index",
    "retired_path",
    "settle",
    "unusable",
    "url_words",
]

INDEX_DIR = "index"  # under the crawl folder
DOCSTORE_FILE = "docs.db"  # under INDEX_DIR: the document store (gossamer.store.docstore)
TANTIVY_DIR = "tantivy"  # under INDEX_DIR (or a shard's folder), beside the document store
_STORES = (DOCSTORE_FILE, "anchors.db")  # the SQLite files beside it
# SQLite's codes for a file that is not a database or whose pages are broken; any other
# fault (a lock, a permission) says nothing about the file itself.
_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
ANALYZER = "gossamer_en"
_MAX_TOKEN_BYTES = 40


class Fields:
    """Field names, in one place so writer and searcher cannot disagree."""

    URL = "url"  # stored, raw: the exact URL, for look-ups and deletes
    URL_ID = "url_id"  # stored, raw: SHA-1 of the URL, as in crawl.db
    URL_WORDS = "url_words"  # analysed words of the URL but its scheme (see url_words)
    ANCHORS = "anchors"  # words of the links pointing at the page (see index.anchors)
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


TEXT_FIELDS = (
    Fields.TITLE,
    Fields.HEADINGS,
    Fields.DESCRIPTION,
    Fields.BODY,
    Fields.URL_WORDS,
    Fields.ANCHORS,
)
_UNSTORED = frozenset({Fields.URL_WORDS, Fields.ANCHORS})  # made again from the URL, anchors.db
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
        builder.add_text_field(name, stored=name not in _UNSTORED, tokenizer_name=ANALYZER)
    for name in RAW_FIELDS:
        builder.add_text_field(name, stored=name != Fields.SITE, tokenizer_name="raw")
    builder.add_text_field(Fields.MIME, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_date_field(Fields.CRAWLED, stored=True, indexed=True, fast=True)
    builder.add_unsigned_field(Fields.NUM, stored=True, indexed=True, fast=True)
    builder.add_unsigned_field(Fields.GROUP, stored=True, indexed=True, fast=True)
    return builder.build()


def url_words(url: str) -> str:
    """The part of a URL worth searching: host, path and query, without the scheme.

    Path names say what a page is ("/docs/json-functions"); the host's words find a site
    by name in a crawl of many, and in a crawl of one site every page has them, which
    BM25's inverse document frequency turns into next to nothing.
    """
    return url.split("//", 1)[-1]


def is_current(schema: tantivy.Schema) -> bool:
    """Whether an index has every field this version writes (the newest one is enough)."""
    try:
        tantivy.Query.term_query(schema, Fields.ANCHORS, "")
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class IndexHandle:
    """An open tantivy index with the schema and analyzer that go with it."""

    index: tantivy.Index
    schema: tantivy.Schema
    analyzer: tantivy.TextAnalyzer
    path: Path


def damaged(crawl_dir: Path, what: object) -> IndexingError:
    """The error a search gives for a damaged index: what is wrong, and the command that
    builds the index again."""
    return IndexingError(
        f"the search index of {crawl_dir} is damaged ({what}); run 'gossamer index {crawl_dir}'"
        " to build it again"
    )


def has_tantivy(crawl_dir: Path) -> bool:
    """Whether ``DIR/index`` holds a tantivy index (its ``meta.json``), whole or not."""
    return holds_tantivy(crawl_dir / INDEX_DIR / TANTIVY_DIR)


def holds_tantivy(path: Path) -> bool:
    """Whether the tantivy folder ``path`` (the single index's, or a shard's) holds an index;
    one that a killed compaction left renamed aside (see :func:`settle`) counts."""
    return any((p / "meta.json").is_file() for p in (path, retired_path(path)))


def committed(crawl_dir: Path) -> tuple[int, int, int] | None:
    """Which commit of tantivy ``DIR/index`` holds: its ``meta.json``'s inode, time and size,
    which every commit changes (tantivy replaces the file whole); None when there is none.
    A server compares it with the one it opened, to see a later ``gossamer index``."""
    try:
        meta = (crawl_dir / INDEX_DIR / TANTIVY_DIR / "meta.json").stat()
    except OSError:
        return None
    return meta.st_ino, meta.st_mtime_ns, meta.st_size


def fresh_path(path: Path) -> Path:
    """Where ``index.compact`` writes the index in ``path`` anew before swapping it in."""
    return path.with_name(f"{path.name}.compacting")


def retired_path(path: Path) -> Path:
    """Where ``index.compact`` moves the index in ``path`` aside while swapping."""
    return path.with_name(f"{path.name}.old")


def settle(path: Path) -> None:
    """Finish or undo a compaction of the index in ``path`` that was killed (the steps are
    in ``index.compact``): the old index is put back if the new one was not renamed in yet,
    else removed; a half-written new one is removed. Call with the index lock held: a
    running compaction looks just like a killed one. Raises OSError."""
    old, new = retired_path(path), fresh_path(path)
    if old.is_dir():
        if path.is_dir():
            shutil.rmtree(old)  # killed after the swap, while removing the old one
        else:
            old.rename(path)  # killed between the two renames: the old one is whole
    if new.is_dir():
        shutil.rmtree(new)  # killed while writing it: the index in ``path`` is untouched


def open_tantivy(path: Path, *, create: bool) -> tantivy.Index | None:
    """The tantivy index in folder ``path`` (a crawl's, or one shard's): opened for writing
    with ``create`` (made first if it does not exist), else read through a read-only view;
    None when it does not exist and may not be made. Raises OSError or tantivy's ValueError.

    A compaction killed half-way is settled first for writing (the writer holds the index
    lock); a reader may hold no lock, so while ``path`` is missing it reads the old index
    where the compaction moved it, without renaming anything."""
    if create:
        settle(path)
    elif not path.is_dir() and retired_path(path).is_dir():
        path = retired_path(path)
    if path.is_dir() and tantivy.Index.exists(str(path)):
        if create:
            return tantivy.Index.open(str(path))
        with readonly_index_path(path) as readable:
            return tantivy.Index.open(str(readable))
    if not create:
        return None
    path.mkdir(parents=True, exist_ok=True)
    return tantivy.Index(build_schema(), path=str(path))


def clear_index(index_dir: Path, keep: tuple[str, ...] = (LOCK_NAME,)) -> None:
    """Delete everything under ``index_dir`` but the files named in ``keep`` (the caller
    holds the lock). Raises OSError."""
    for entry in index_dir.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def open_index(crawl_dir: Path, *, create: bool) -> IndexHandle:
    """Open ``DIR/index/tantivy``; with ``create``, make it when it does not exist yet.

    Without ``create`` the index is only read, which works on a read-only folder too.
    """
    path = crawl_dir / INDEX_DIR / TANTIVY_DIR
    analyzer = make_analyzer()
    try:
        index = open_tantivy(path, create=create)
    except OSError as exc:
        raise IndexingError(f"cannot open search index {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # tantivy's answer to files it cannot make sense of
        raise damaged(crawl_dir, exc) from exc
    if index is None:
        raise IndexingError(
            f"no search index in {crawl_dir}; run 'gossamer index {crawl_dir}' first"
        )
    if not create and not is_current(index.schema):
        raise IndexingError(
            f"the search index of {crawl_dir} was built by an older Gossamer;"
            f" run 'gossamer index {crawl_dir}' again to rebuild it"
        )
    index.register_tokenizer(ANALYZER, analyzer)
    return IndexHandle(index, index.schema, analyzer, path)


def unusable(crawl_dir: Path) -> str:
    """Why ``DIR/index`` must be built anew ("" when it need not): written by an older
    Gossamer, or damaged (tantivy cannot open it, a SQLite file is not a database, or the
    tantivy index and the document store disagree on whether anything is indexed: the store
    commits a batch after tantivy, with a mark while in between)."""
    index_dir = crawl_dir / INDEX_DIR
    path = index_dir / TANTIVY_DIR
    for name in _STORES:
        fault = _sqlite_damage(index_dir / name)
        if fault:
            return f"damaged: {name}: {fault}"
    listed = _store_lists_documents(index_dir)
    if not has_tantivy(crawl_dir):
        return "damaged: the tantivy index is missing" if listed else ""
    try:
        index = tantivy.Index.open(str(path))
        documents = index.searcher().num_docs
    except ValueError as exc:
        return f"damaged: {exc}"
    if documents and not listed:
        return f"damaged: the document store lists none of tantivy's {documents} documents"
    return "" if is_current(index.schema) else "written by an older Gossamer"


def _sqlite_damage(path: Path) -> str:
    if not path.is_file():
        return ""
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return str(exc) if getattr(exc, "sqlite_errorcode", None) in _DAMAGE_CODES else ""
    return ""


_LISTS_DOCUMENTS = (
    "SELECT EXISTS (SELECT 1 FROM docs)"
    " OR EXISTS (SELECT 1 FROM meta WHERE key = 'in_flight' AND value = '1')"
)


def _store_lists_documents(index_dir: Path) -> bool:
    """Whether the document store holds a document, or a batch that tantivy may hold and
    the store not yet (``DocStore.in_flight``)."""
    path = index_dir / DOCSTORE_FILE
    if not path.is_file():
        return False
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            return bool(conn.execute(_LISTS_DOCUMENTS).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return False  # no tables yet: a first run killed before its first batch


def drop_unusable(crawl_dir: Path) -> str:
    """Delete an index that must be built anew (see :func:`unusable`); why, or "".

    Everything under ``DIR/index`` goes but the lock file (the caller holds that lock):
    tantivy's files, and the document and anchor stores that must agree with them.
    """
    index_dir = crawl_dir / INDEX_DIR
    try:
        reason = unusable(crawl_dir)
        if not reason:
            return ""
        clear_index(index_dir)
    except OSError as exc:
        raise IndexingError(f"cannot replace the search index {index_dir}: {exc}") from exc
    return reason
