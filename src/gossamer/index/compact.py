"""Index stage, last step of a run: write again a tantivy index that holds many deleted documents.

Data flow: indexer (after relink, every writer closed) -> **compact** -> tantivy. tantivy's
BM25 counts a deleted document (in N, in document frequencies, in field lengths) until a
segment merge drops it, and a ``gossamer index`` run deletes many: ``relink`` deletes and
adds again every page indexed before the links to it, and changed or gone pages are deleted.
Which merges happen depends on the segments, so a single index and the same crawl in N
shards scored with different statistics (issue 34), and both scored worse than without the
dead documents. tantivy-py has no force-merge, so an index whose deleted documents reach
``THRESHOLD`` of all it holds is written anew from its live stored documents, each rebuilt as
``relink`` rebuilds one (``document.rewritten``: the URL's words, the ``site`` suffixes and
the anchor text are not stored and are made again), then swapped in. Each index of the
folder is looked at on its own: the single one, or every shard.

Steps for the index in ``P`` (``DIR/index/tantivy``, or a shard's), and what a run killed
at each leaves (``schema.settle`` finishes or undoes it at the next writer's open; a reader
meanwhile reads ``P.old`` while ``P`` is missing):

1. write ``P.compacting`` and commit it. Killed: ``P`` is untouched; the half-written
   ``P.compacting`` is removed.
2. rename ``P`` to ``P.old``. Killed right after: no ``P``; ``P.old`` is whole and is renamed
   back (the compaction is lost, the next run does it again).
3. rename ``P.compacting`` to ``P``. Killed right after: ``P`` is the new index; ``P.old`` is
   removed.
4. remove ``P.old``. Killed half-way: as after 3.

Both renames are within one folder, so each is atomic. A document keeps its ``num`` (the
document store's row), which is what ranks, groups and page vectors are keyed by, so nothing
else changes.
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import tantivy

from gossamer.index.anchors import AnchorStore
from gossamer.index.document import rewritten
from gossamer.index.errors import IndexingError
from gossamer.index.schema import (
    ANALYZER,
    INDEX_DIR,
    TANTIVY_DIR,
    Fields,
    build_schema,
    fresh_path,
    make_analyzer,
    retired_path,
    settle,
)
from gossamer.index.shards import read_layout, shard_path

__all__ = ["THRESHOLD", "Compaction", "compact", "deleted_documents", "recover", "tantivy_paths"]

log = logging.getLogger(__name__)

# The share of deleted documents at which an index is written again. A first build deletes
# far more (relink: 188 deleted beside 218 live on the judged git corpus, about 45%), so it is
# always compacted; an incremental run that changes a few pages stays below it and does not
# pay for a rewrite of everything. Below a tenth, N and a term's document frequency are off
# by under 10%, which moves BM25's IDF by about log(1.1) ~ 0.1 at most; Lucene's merge policy
# likewise lets a share of deletes wait rather than rewriting for each one.
THRESHOLD = 0.10
_KINDS = ("html", "pdf")  # every document has exactly one (``extract.kind_of``)
_WRITER_HEAP = 128 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Compaction:
    """What one run's compaction did: deleted documents dropped, indexes written again."""

    reclaimed: int = 0
    indexes: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"deleted documents reclaimed: {self.reclaimed}"
            f" ({self.indexes} index(es) written again in {self.seconds:.2f} s)"
        )


def tantivy_paths(crawl_dir: Path) -> list[Path]:
    """The folder of every tantivy index of ``DIR/index``: the single one, or each shard's."""
    shards = read_layout(crawl_dir)
    if shards is None:
        return [crawl_dir / INDEX_DIR / TANTIVY_DIR]
    return [shard_path(crawl_dir, k) / TANTIVY_DIR for k in range(shards)]


def recover(crawl_dir: Path) -> None:
    """Settle a compaction a killed run left half-done, in every index of ``crawl_dir``
    (the caller holds the index lock)."""
    try:
        for path in tantivy_paths(crawl_dir):
            settle(path)
    except OSError as exc:
        raise IndexingError(f"cannot repair the search index of {crawl_dir}: {exc}") from exc


def deleted_documents(searcher: tantivy.Searcher) -> int:
    """How many deleted documents the searcher's segments still hold: a term's document
    frequency counts them, ``num_docs`` does not, and every document has one kind."""
    held = sum(searcher.doc_freq(Fields.CONTENT_TYPE, kind) for kind in _KINDS)
    return max(held - searcher.num_docs, 0)


def compact(crawl_dir: Path, anchors: AnchorStore, threshold: float = THRESHOLD) -> Compaction:
    """Write again every index of ``crawl_dir`` whose deleted documents are at least
    ``threshold`` of all it holds; call with the index lock held and no writer open."""
    started = time.perf_counter()
    reclaimed = indexes = 0
    for path in tantivy_paths(crawl_dir):
        try:
            dropped = _compact_one(path, anchors, threshold)
        except (OSError, ValueError) as exc:
            raise IndexingError(f"cannot compact the search index {path}: {exc}") from exc
        reclaimed += dropped
        indexes += dropped > 0
    seconds = time.perf_counter() - started
    if indexes:
        log.info(
            "compacted %d index(es) of %s: %d deleted documents dropped in %.2f s",
            indexes,
            crawl_dir,
            reclaimed,
            seconds,
        )
    return Compaction(reclaimed, indexes, seconds)


def _compact_one(path: Path, anchors: AnchorStore, threshold: float) -> int:
    """Compact the index in ``path`` if it is due; the deleted documents dropped (0: not due)."""
    if not (path / "meta.json").is_file():
        return 0
    old = tantivy.Index.open(str(path))
    searcher = old.searcher()
    deleted = deleted_documents(searcher)
    live = searcher.num_docs
    if deleted == 0 or deleted < threshold * (deleted + live):
        return 0
    fresh = fresh_path(path)
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir()
    _write_live(searcher, fresh, anchors)
    retired = retired_path(path)
    path.rename(retired)
    fresh.rename(path)
    shutil.rmtree(retired)
    return deleted


def _write_live(searcher: tantivy.Searcher, fresh: Path, anchors: AnchorStore) -> None:
    """Every live document of ``searcher`` into a new index in ``fresh``."""
    index = tantivy.Index(build_schema(), path=str(fresh))
    index.register_tokenizer(ANALYZER, make_analyzer())
    hits = searcher.search(tantivy.Query.all_query(), max(searcher.num_docs, 1), count=False).hits
    # read in the order they lie in, segment by segment (the hits come by score, all equal)
    addresses = sorted((address for _, address in hits), key=lambda a: (a.segment_ord, a.doc))
    # tantivy's own number of indexing threads: on the 20k-page web one thread took 38 s of
    # which 21 in tantivy, two 24 s (a segment per thread; BM25 does not mind)
    writer = index.writer(heap_size=_WRITER_HEAP)
    try:
        for address in addresses:
            stored = searcher.doc(address)
            url = str(stored.get_first(Fields.URL) or "")
            host = str(stored.get_first(Fields.HOST) or "")
            writer.add_document(rewritten(stored, anchors.values_for(url, host)))
        writer.commit()
    except BaseException:
        writer.rollback()
        raise
    writer.wait_merging_threads()
