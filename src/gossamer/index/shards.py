"""Index stage, sharding: one crawl's tantivy index split into N shards by URL.

Data flow: indexer -> **shards** -> ``DIR/index/shards/K/tantivy`` (K in 0..N-1) -> search.
Only tantivy is split. The document store, the anchor and image stores stay crawl-wide in
``DIR/index``, because what they hold is: ``num`` (a docs.db row) joins PageRank, cached
copies and page info; a near-duplicate group spans the crawl, and two copies of a page may
fall into different shards and must still fold into one result; anchor text is gathered
over every page before a document is written. ``DIR/index/shards.json`` says how many shards
there are; an index without it is the ordinary single one (``DIR/index/tantivy``).

A document's shard is a hash of its ``url_id`` (the URL's SHA-1, as in crawl.db), so it is
the same on every run and every machine: an incremental run deletes a changed or gone
page's old document in the right shard without looking it up. ``ShardWriters`` stands for
one ``tantivy.IndexWriter`` over all shards; ``build_shard`` writes one shard from documents
whose store row (``num``) and group were already chosen, for a job that builds shards apart
(see /work/notes-helpers/shards-layout.md for the Spark job's use).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import tantivy

from gossamer.index.errors import IndexingError
from gossamer.index.schema import (
    ANALYZER,
    INDEX_DIR,
    TANTIVY_DIR,
    Fields,
    IndexHandle,
    committed,
    damaged,
    is_current,
    make_analyzer,
    open_tantivy,
)
from gossamer.urls.canonical import url_id

if TYPE_CHECKING:
    # The writing side's: a search opens shards without the HTML and PDF readers.
    from gossamer.index.anchors import AnchorStore
    from gossamer.index.document import PageFacts
    from gossamer.index.extract import PageText

__all__ = [
    "LAYOUT_FILE",
    "MAX_SHARDS",
    "ShardDocument",
    "ShardWriters",
    "build_shard",
    "commits",
    "open_shard",
    "open_shards",
    "read_layout",
    "relink_shards",
    "shard_of",
    "shard_path",
    "write_layout",
]

LAYOUT_FILE = "shards.json"  # in DIR/index: {"shards": N}
_SHARDS_DIR = "shards"
MAX_SHARDS = 256
_WRITER_HEAP = 128 * 1024 * 1024  # per shard: N writers share what one had


def shard_of(doc_url_id: str, shards: int) -> int:
    """The shard of the document whose URL has SHA-1 ``doc_url_id`` (hex)."""
    return int(doc_url_id[:16], 16) % shards


def shard_path(crawl_dir: Path, shard: int) -> Path:
    """``DIR/index/shards/K``: the folder of shard ``shard`` (its tantivy index inside)."""
    return crawl_dir / INDEX_DIR / _SHARDS_DIR / str(shard)


def read_layout(crawl_dir: Path) -> int | None:
    """The number of shards of ``DIR/index``, or None for an unsharded index (or none)."""
    path = crawl_dir / INDEX_DIR / LAYOUT_FILE
    try:
        shards = json.loads(path.read_text(encoding="utf-8"))["shards"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise damaged(crawl_dir, f"{LAYOUT_FILE}: {exc}") from exc
    if not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        raise damaged(crawl_dir, f"{LAYOUT_FILE} names {shards!r} shards")
    return shards


def write_layout(crawl_dir: Path, shards: int) -> None:
    path = crawl_dir / INDEX_DIR / LAYOUT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"shards": shards}) + "\n", encoding="utf-8")


def commits(crawl_dir: Path) -> tuple[tuple[int, int, int] | None, ...]:
    """Which commit each part of the tantivy index holds (``schema.committed``, per shard):
    what a server compares to see a later ``gossamer index``."""
    shards = read_layout(crawl_dir)
    if shards is None:
        return (committed(crawl_dir),)
    found: list[tuple[int, int, int] | None] = []
    for k in range(shards):
        try:
            meta = (shard_path(crawl_dir, k) / TANTIVY_DIR / "meta.json").stat()
        except OSError:
            found.append(None)
        else:
            found.append((meta.st_ino, meta.st_mtime_ns, meta.st_size))
    return tuple(found)


def open_shard(folder: Path, *, create: bool) -> IndexHandle:
    """Open the tantivy index of one shard folder, as ``schema.open_index`` does one crawl's;
    with ``create``, make it when it does not exist yet (read-only folders work without)."""
    path = folder / TANTIVY_DIR
    try:
        index = open_tantivy(path, create=create)
    except OSError as exc:
        raise IndexingError(f"cannot open index shard {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise IndexingError(f"the index shard {folder} is damaged ({exc})") from exc
    if index is None:
        raise IndexingError(f"the index shard {folder} is missing; run 'gossamer index'")
    if not is_current(index.schema):
        raise IndexingError(f"the index shard {folder} was built by an older Gossamer")
    analyzer = make_analyzer()
    index.register_tokenizer(ANALYZER, analyzer)
    return IndexHandle(index, index.schema, analyzer, path)


def open_shards(crawl_dir: Path, shards: int, *, create: bool) -> list[IndexHandle]:
    return [open_shard(shard_path(crawl_dir, k), create=create) for k in range(shards)]


class ShardWriters:
    """One writer per shard behind the ``tantivy.IndexWriter`` calls the indexer makes: a
    document goes to the shard of its ``url_id``, and so does a delete by ``url_id``."""

    def __init__(self, handles: list[IndexHandle]) -> None:
        self.handles = handles
        try:
            self._writers = [h.index.writer(heap_size=_WRITER_HEAP) for h in handles]
        except ValueError as exc:
            raise IndexingError(f"cannot write an index shard: {exc}") from exc

    def _of(self, doc_url_id: str) -> tantivy.IndexWriter:
        return self._writers[shard_of(doc_url_id, len(self._writers))]

    def add_document(self, doc: tantivy.Document) -> int:
        return self._of(str(doc.get_first(Fields.URL_ID))).add_document(doc)

    def delete_documents_by_term(self, field_name: str, field_value: str) -> int:
        if field_name != Fields.URL_ID:  # the only key a shard can be found by
            raise ValueError(f"a sharded index deletes by {Fields.URL_ID} only")
        return self._of(field_value).delete_documents_by_term(field_name, field_value)

    def commit(self) -> int:
        # Shard by shard: a run killed in between leaves the in-flight mark set in the
        # store, so the next run deletes and adds the batch's documents again everywhere.
        opstamp = 0
        for writer in self._writers:
            opstamp = writer.commit()
        return opstamp

    def rollback(self) -> int:
        opstamp = 0
        for writer in self._writers:
            opstamp = writer.rollback()
        return opstamp

    def wait_merging_threads(self) -> None:
        for writer in self._writers:
            writer.wait_merging_threads()
        self._writers = []


def relink_shards(handles: list[IndexHandle], writers: ShardWriters, anchors: AnchorStore) -> int:
    """``relink`` over a sharded index: each target is looked for in its own shard."""
    from gossamer.index.document import rewritten  # noqa: PLC0415 - see the imports

    targets = anchors.dirty()
    if not targets:
        return 0
    searchers = []
    for handle in handles:
        handle.index.reload()
        searchers.append(handle.index.searcher())
    rewrites = 0
    anchors.begin()
    try:
        for url in targets:
            k = shard_of(url_id(url), len(handles))
            query = tantivy.Query.term_query(handles[k].schema, Fields.URL, url)
            for _, address in searchers[k].search(query, 1, count=False).hits:
                stored = searchers[k].doc(address)
                host = str(stored.get_first(Fields.HOST) or "")
                writers.delete_documents_by_term(
                    Fields.URL_ID, str(stored.get_first(Fields.URL_ID))
                )
                writers.add_document(rewritten(stored, anchors.values_for(url, host)))
                rewrites += 1
        writers.commit()
    except BaseException:
        anchors.rollback()
        writers.rollback()
        raise
    anchors.clear_dirty()
    anchors.commit()
    return rewrites


@dataclass(frozen=True, slots=True)
class ShardDocument:
    """What one shard's document is made of, picklable (a Spark executor can hold it):
    ``facts.num`` and ``facts.group`` must come from the crawl-wide document store."""

    text: PageText
    facts: PageFacts
    anchors: tuple[str, ...] = ()


def build_shard(folder: Path, documents: Iterable[ShardDocument]) -> int:
    """Write ``documents`` into the shard in ``folder`` (made if missing); how many.

    A document already there (same ``url_id``) is replaced."""
    from gossamer.index.document import page_document  # noqa: PLC0415 - see the imports

    handle = open_shard(folder, create=True)
    writer = handle.index.writer(heap_size=_WRITER_HEAP)
    written = 0
    try:
        for item in documents:
            writer.delete_documents_by_term(Fields.URL_ID, item.facts.url_id)
            writer.add_document(page_document(item.text, item.facts, list(item.anchors)))
            written += 1
        writer.commit()
    except BaseException:
        writer.rollback()
        raise
    writer.wait_merging_threads()
    return written
