"""Compaction (issue 34): an index holding many deleted documents is written again from its
live ones, a single index and its shards then count the same statistics, and a compaction
killed between its two renames is finished or undone by the next open."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tantivy

from gossamer.index import INDEX_DIR, build_index
from gossamer.index.anchors import ANCHORS_FILE, AnchorStore
from gossamer.index.compact import compact, deleted_documents, tantivy_paths
from gossamer.index.document import rewritten
from gossamer.index.schema import (
    Fields,
    fresh_path,
    open_index,
    retired_path,
    settle,
)
from gossamer.search import SearchEngine
from gossamer.search.ready import require_complete_index

from .fake_crawl import FakePage, html, make_crawl, search_corpus

SHARDS = 3
QUERIES = ("write ahead log", "checkpoint", "rollback journal", "database pages", "sqlite")
# Read last, so the four pages it links to were written before their anchor text was known
# and are rewritten by relink: four deleted documents beside ten live ones.
LINKS = {
    "http://a.test/": "sqlite home",
    "http://a.test/wal": "write ahead log explained",
    "http://b.test/journal": "rollback journal",
    "http://b.test/checkpoint": "checkpoint guide",
}
DIRECTORY = FakePage(
    "http://e.test/links",
    html("Link directory", "Pages worth reading.", extra="".join(
        f'<a href="{url}">{words}</a>' for url, words in LINKS.items()
    )),
)  # fmt: skip
DOCUMENTS = 9


def _corpus() -> list[FakePage]:
    return [*search_corpus(), DIRECTORY]


def _searchers(folder: Path) -> list[tantivy.Searcher]:
    return [tantivy.Index.open(str(path)).searcher() for path in tantivy_paths(folder)]


# Exact copies: they tie, and either may stand for their group in the results.
_COPY = {"http://c.test/checkpoint-copy": "http://b.test/checkpoint"}


def _urls(engine: SearchEngine, query: str) -> set[str]:
    return {_COPY.get(hit.url, hit.url) for hit in engine.search(query).hits}


def _rewrite(folder: Path, step: int) -> int:
    """Delete and add again every ``step``-th document, as ``relink`` does one, through one
    indexing thread (so into one segment); how many."""
    handle = open_index(folder, create=True)
    searcher = handle.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), 100, count=False).hits
    chosen = sorted((a for _, a in hits), key=lambda a: (a.segment_ord, a.doc))[::step]
    writer = handle.index.writer(heap_size=20_000_000, num_threads=1)
    with AnchorStore(folder / INDEX_DIR / ANCHORS_FILE) as anchors:
        for address in chosen:
            stored = searcher.doc(address)
            url, host = str(stored.get_first(Fields.URL)), str(stored.get_first(Fields.HOST))
            writer.delete_documents_by_term(Fields.URL_ID, str(stored.get_first(Fields.URL_ID)))
            writer.add_document(rewritten(stored, anchors.values_for(url, host)))
    writer.commit()
    writer.wait_merging_threads()
    return len(chosen)


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_crawl(tmp_path_factory.mktemp("single"), _corpus())
    report = build_index(folder)
    # relink rewrote the pages written before their in-links; the run dropped the old copies
    # that tantivy kept (it drops a segment whose documents are all deleted by itself)
    assert report.relinked == len(LINKS)
    assert report.compaction.reclaimed <= report.relinked
    return folder


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_crawl(tmp_path_factory.mktemp("sharded"), _corpus())
    build_index(folder, shards=SHARDS)
    return folder


def test_an_index_of_rewritten_documents_is_written_again_from_its_live_ones(
    tmp_path: Path, single: Path
) -> None:
    folder = tmp_path / "crawl"
    shutil.copytree(single, folder, symlinks=True)
    with SearchEngine(folder) as engine:
        before = {q: _urls(engine, q) for q in QUERIES}
    # All first: tantivy drops a segment whose documents are all deleted, so this leaves one
    # segment of them all; then every other one, whose old copies stay in it, deleted.
    _rewrite(folder, 1)
    dead = _rewrite(folder, 2)
    (searcher,) = _searchers(folder)
    assert (searcher.num_docs, deleted_documents(searcher)) == (DOCUMENTS, dead)

    with AnchorStore(folder / INDEX_DIR / ANCHORS_FILE) as anchors:
        # 5 deleted of 14 held: past the default's tenth, short of 0.6
        assert compact(folder, anchors, threshold=0.6).reclaimed == 0
        assert deleted_documents(_searchers(folder)[0]) == dead
    report = build_index(folder)  # nothing new to read: the compaction alone
    assert (report.pending, report.compaction.reclaimed, report.compaction.indexes) == (0, dead, 1)
    assert f"deleted documents reclaimed: {dead} (1 index(es)" in report.summary()
    (searcher,) = _searchers(folder)
    assert (searcher.num_docs, deleted_documents(searcher)) == (DOCUMENTS, 0)
    assert not retired_path(tantivy_paths(folder)[0]).exists()
    with SearchEngine(folder) as engine:
        assert {q: _urls(engine, q) for q in QUERIES} == before
        # anchor text is not stored: it was made again from the anchor store
        assert "http://a.test/wal" in _urls(engine, "explained")


def test_a_single_index_and_its_shards_count_the_same_statistics(
    single: Path, sharded: Path
) -> None:
    (one,) = _searchers(single)
    shards = _searchers(sharded)
    assert deleted_documents(one) == 0
    assert [deleted_documents(s) for s in shards] == [0] * SHARDS
    assert sum(s.num_docs for s in shards) == one.num_docs
    for term in ("write", "log", "checkpoint", "journal", "databas"):
        for name in (Fields.BODY, Fields.TITLE, Fields.ANCHORS):
            assert sum(s.doc_freq(name, term) for s in shards) == one.doc_freq(name, term)
    with SearchEngine(single) as a, SearchEngine(sharded) as b:
        for query in QUERIES:
            # as sorted lists: two exact copies tie, and either may stand for their group
            one_scores = sorted(h.scores.bm25 for h in a.search(query).hits)
            many_scores = sorted(h.scores.bm25 for h in b.search(query).hits)
            assert one_scores
            assert many_scores == pytest.approx(one_scores, rel=1e-6)


@pytest.mark.parametrize("built", ["single", "sharded"])
def test_a_compaction_killed_between_its_renames_is_undone(
    tmp_path: Path, built: str, request: pytest.FixtureRequest
) -> None:
    folder = tmp_path / "crawl"
    shutil.copytree(request.getfixturevalue(built), folder, symlinks=True)
    path = tantivy_paths(folder)[0]  # the index, or its first shard
    path.rename(retired_path(path))  # step 2 done, step 3 not
    fresh_path(path).mkdir()  # a new index half-written
    (fresh_path(path) / "junk").write_text("x")

    require_complete_index(folder)  # a search is not refused
    with SearchEngine(folder) as engine:  # a reader reads the old index where it lies
        assert engine.documents == DOCUMENTS
    assert not path.exists()  # and moved nothing: it holds no lock

    again = build_index(folder)
    assert (again.pending, again.documents) == (0, DOCUMENTS)
    assert path.is_dir() and not retired_path(path).exists() and not fresh_path(path).exists()
    with SearchEngine(folder) as engine:
        assert "http://a.test/wal" in _urls(engine, "write ahead log")


def test_settle_removes_the_old_index_once_the_new_one_is_in(tmp_path: Path) -> None:
    path = tmp_path / "tantivy"
    path.mkdir()
    (path / "new").write_text("new")
    retired_path(path).mkdir()  # killed while removing the old one
    settle(path)
    assert [p.name for p in tmp_path.iterdir()] == ["tantivy"]
    assert (path / "new").read_text() == "new"
