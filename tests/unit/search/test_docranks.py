"""Ranks by document: the saved arrays answer as the computed ones, and a stale file is not
used (a new rank run, a new index run), nor a damaged one."""

from __future__ import annotations

import shutil
from pathlib import Path

from gossamer.index import DOCSTORE_FILE, INDEX_DIR
from gossamer.rank import rank_crawl
from gossamer.search import SearchEngine
from gossamer.search.docranks import DOC_RANKS, _read, _stamp, doc_ranks, save_doc_ranks
from gossamer.store.docstore import DocStore


def _hits(folder: Path) -> list[tuple[str, float, float, float]]:
    with SearchEngine(folder) as engine:
        found = engine.search("database").hits
    return [(h.url, h.scores.pagerank, h.scores.host_rank, h.scores.blended) for h in found]


def _from_file(folder: Path) -> bool:
    """Whether the saved file is what the engine would use (its stamp matches)."""
    store = DocStore(folder / INDEX_DIR / DOCSTORE_FILE, readonly=True)
    try:
        return _read(folder / INDEX_DIR / DOC_RANKS, _stamp(folder, store)) is not None
    finally:
        store.close()


def test_saved_ranks_give_the_same_results(corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    (copy / INDEX_DIR / DOC_RANKS).unlink(missing_ok=True)
    computed = _hits(copy)
    assert computed and any(pagerank > 0 for _, pagerank, _, _ in computed)
    assert save_doc_ranks(copy)
    assert _from_file(copy)
    assert _hits(copy) == computed
    store = DocStore(copy / INDEX_DIR / DOCSTORE_FILE, readonly=True)
    try:
        assert doc_ranks(copy, store).used
    finally:
        store.close()


def test_a_stale_or_damaged_file_is_not_used(corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    assert save_doc_ranks(copy)
    expected = _hits(copy)
    rank_crawl(copy)  # the rank files are new: the stamp no longer matches
    assert not _from_file(copy)
    assert _hits(copy) == expected  # computed again, from the same graph
    saved = copy / INDEX_DIR / DOC_RANKS
    assert save_doc_ranks(copy)
    whole = saved.read_bytes()
    for damaged in (b"not a rank file", whole[:-8], whole + b"\0" * 8, b"X" + whole[1:]):
        saved.write_bytes(damaged)  # short, long, or another magic: computed again
        assert not _from_file(copy)
        assert _hits(copy) == expected
    shutil.rmtree(copy / "rank")  # ranks gone: a saved file of ranks must not be believed
    assert save_doc_ranks(copy)
    with SearchEngine(copy) as engine:
        result = engine.search("database")
    assert not result.pagerank_used
    assert all(hit.scores.pagerank == 0.0 for hit in result.hits)


def test_nothing_to_save_without_an_index(tmp_path: Path) -> None:
    assert not save_doc_ranks(tmp_path)
