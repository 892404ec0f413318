"""Search side, precondition: whether a crawl folder's index may be searched now.

Data flow: index -> **ready** -> search / web. ``gossamer search`` and ``gossamer serve`` ask
before opening a :class:`~gossamer.search.engine.SearchEngine`, so that an index a failed
``gossamer index`` run left half-built is refused with a line saying what to run, instead of
answering from part of the crawl as if it were all of it. A damaged index is refused with
the command that builds it again; ranks, read later, say the same of ``gossamer rank``.
"""

from __future__ import annotations

from pathlib import Path

from gossamer.errors import StoreError
from gossamer.index.access import is_writing
from gossamer.index.errors import IndexingError
from gossamer.index.schema import (
    DOCSTORE_FILE,
    INDEX_DIR,
    TANTIVY_DIR,
    damaged,
    has_tantivy,
    holds_tantivy,
)
from gossamer.index.shards import read_layout, shard_path
from gossamer.store.docstore import DocStore

__all__ = ["require_complete_index"]


def require_complete_index(crawl_dir: Path, *, remote: bool = False) -> None:
    """Refuse to search an index a failed ``gossamer index`` run left behind half-built.

    An index being written right now is searched as far as it is committed, once it holds
    at least one page. ``remote``: the folder is a front whose shards are served elsewhere,
    so its tantivy part need not be here.
    """
    index_dir = crawl_dir / INDEX_DIR
    run = f"run 'gossamer index {crawl_dir}'"
    if not (index_dir / DOCSTORE_FILE).is_file():
        raise IndexingError(f"no search index in {crawl_dir}; {run} first")
    with DocStore(index_dir / DOCSTORE_FILE, readonly=True) as store:
        try:
            empty, in_flight = store.count() == 0, store.in_flight
        except StoreError as exc:
            raise damaged(crawl_dir, exc) from exc
        if is_writing(index_dir):
            if empty:
                raise IndexingError(
                    f"the search index of {crawl_dir} is being written by another process and"
                    " holds no page yet; try again when 'gossamer index' has finished"
                )
            return
        if in_flight:
            raise IndexingError(
                f"the search index of {crawl_dir} is incomplete: the last 'gossamer index' run"
                f" did not finish; {run} again"
            )
        if not empty and not remote and not _has_tantivy(crawl_dir):
            raise damaged(crawl_dir, "its tantivy folder is missing")
        if empty and _has_pages(store, crawl_dir):
            raise IndexingError(
                f"the search index of {crawl_dir} is incomplete: no page is indexed yet; {run}"
            )


def _has_pages(store: DocStore, crawl_dir: Path) -> bool:
    try:
        return store.has_pending(crawl_dir / "crawl.db")
    except StoreError:
        return False  # crawl.db cannot be read from here: nothing to compare with


def _has_tantivy(crawl_dir: Path) -> bool:
    """Whether the index's tantivy part is there: the single one, or every shard's."""
    shards = read_layout(crawl_dir)
    if shards is None:
        return has_tantivy(crawl_dir)
    return all(holds_tantivy(shard_path(crawl_dir, k) / TANTIVY_DIR) for k in range(shards))
