"""A sharded index (``gossamer index --shards N``) searched as one: issue 34."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import tantivy
from aiohttp.test_utils import TestClient, TestServer

from gossamer.index import IndexingError, build_index
from gossamer.index.schema import Fields
from gossamer.index.shards import open_shards, read_layout, shard_of
from gossamer.rank import rank_crawl
from gossamer.search import SearchEngine
from gossamer.search.docranks import save_doc_ranks
from gossamer.search.scatter import RemoteEngine
from gossamer.urls.canonical import url_id
from gossamer.web import make_app
from gossamer.web.app import ENGINE

from ..index import test_recrawl as recrawled
from ..index.fake_crawl import make_crawl, search_corpus
from ..web.served import Client, serve_and_check

SHARDS = 3
QUERIES = (
    "write ahead log",  # three words: every field, and the proximity phrase in each
    "checkpoint",
    "database",
    "journal -wal",
    "site:a.test",
    "log OR journal",
    '"rollback journal" pages',
)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = make_crawl(tmp_path_factory.mktemp("sharded"), search_corpus())
    build_index(folder, shards=SHARDS)
    rank_crawl(folder)
    save_doc_ranks(folder)
    return folder


@pytest.fixture(scope="module")
def both(corpus: Path, sharded: Path) -> Iterator[tuple[SearchEngine, SearchEngine]]:
    with SearchEngine(corpus) as single, SearchEngine(sharded) as split:
        yield single, split


def _urls(folder: Path, shard: int) -> list[str]:
    handle = open_shards(folder, SHARDS, create=False)[shard]
    searcher = handle.index.searcher()
    hits = searcher.search(tantivy.Query.all_query(), 100, count=False).hits
    return [str(searcher.doc(a).get_first(Fields.URL)) for _, a in hits]


def test_every_document_lands_in_exactly_one_shard(
    sharded: Path, both: tuple[SearchEngine, SearchEngine]
) -> None:
    single, split = both
    assert read_layout(sharded) == SHARDS
    placed = {k: _urls(sharded, k) for k in range(SHARDS)}
    every = [url for urls in placed.values() for url in urls]
    assert len(every) == len(set(every)) == single.documents == split.documents
    for k, urls in placed.items():
        assert all(shard_of(url_id(url), SHARDS) == k for url in urls)
    assert sum(1 for urls in placed.values() if urls) > 1  # really split


@pytest.mark.parametrize("query", QUERIES)
def test_a_sharded_index_ranks_and_scores_like_the_single_one(
    both: tuple[SearchEngine, SearchEngine], query: str
) -> None:
    single, split = both
    one, many = single.search(query), split.search(query)
    assert [h.url for h in many.hits] == [h.url for h in one.hits]
    assert (many.matches, many.results) == (one.matches, one.results)
    for a, b in zip(one.hits, many.hits, strict=True):
        assert b.scores.bm25 == pytest.approx(a.scores.bm25, rel=1e-4)
        assert (b.snippet, b.copies, b.duplicates) == (a.snippet, a.copies, a.duplicates)


def test_page_scores_are_the_same_through_shards(both: tuple[SearchEngine, SearchEngine]) -> None:
    single, split = both
    a = single.scores_for("http://a.test/wal", "write ahead log")
    b = split.scores_for("http://a.test/wal", "write ahead log")
    assert a is not None and b is not None
    assert b.bm25 == pytest.approx(a.bm25, rel=1e-4)
    assert b.blended == pytest.approx(a.blended, rel=1e-4)


def test_another_number_of_shards_is_refused_and_the_same_index_goes_on(sharded: Path) -> None:
    with pytest.raises(IndexingError, match="has 3 shards"):
        build_index(sharded, shards=2)
    again = build_index(sharded)  # keeps its shards: nothing new to read
    assert (again.pending, again.documents) == (0, 8)
    assert read_layout(sharded) == SHARDS


def test_cached_copies_and_page_info_through_a_sharded_index(sharded: Path) -> None:
    async def check(client: Client) -> None:
        found = await client.get("/search", params={"q": "rollback journal"})
        assert "http://b.test/journal" in await found.text()
        info = await client.get("/info", params={"url": "http://b.test/journal", "q": "journal"})
        assert info.status == 200
        assert "Rollback journal" in await info.text()
        cached = await client.get("/cached/raw", params={"url": "http://b.test/journal"})
        assert cached.status == 200
        assert "original pages" in await cached.text()

    serve_and_check(sharded, check)


def test_serve_scatters_to_shard_servers_over_loopback(
    sharded: Path, both: tuple[SearchEngine, SearchEngine]
) -> None:
    """Two shard servers (``gossamer serve`` of the sharded folder, one asked for shards 0
    and 2, the other for shard 1) and a front that has the folder's stores only."""
    single, _ = both

    async def main() -> None:
        one = TestServer(make_app(sharded), host="127.0.0.1")
        two = TestServer(make_app(sharded), host="127.0.0.1")
        async with one, two:
            urls = [f"http://127.0.0.1:{one.port}/shard/0", f"http://127.0.0.1:{two.port}/shard/1",
                    f"http://127.0.0.1:{one.port}/shard/2"]  # fmt: skip
            front = make_app(sharded, shards=urls)
            async with TestClient(TestServer(front, host="127.0.0.1")) as client:
                for query in ("write ahead log", "checkpoint", "journal -wal"):
                    page = await (await client.get("/search", params={"q": query})).text()
                    expected = [h.url for h in single.search(query).hits]
                    shown = [u for u in re.findall(r'href="(http://[a-z]\.test/[^"]*)"', page)]
                    assert list(dict.fromkeys(shown))[: len(expected)] == expected, query
                engine = front[ENGINE].engine()
                assert isinstance(engine, RemoteEngine)
                remote = await asyncio.to_thread(engine.search, "write ahead log")
                local = single.search("write ahead log")
                assert [h.url for h in remote.hits] == [h.url for h in local.hits]
                for a, b in zip(local.hits, remote.hits, strict=True):
                    assert b.scores.bm25 == pytest.approx(a.scores.bm25, rel=1e-4)
                    assert (b.snippet, b.copies) == (a.snippet, a.copies)
                # Nothing explained at first: every score comes from the second round.
                late = RemoteEngine(sharded, urls, probed=0, rescored=40)
                try:
                    second = await asyncio.to_thread(late.search, "write ahead log")
                finally:
                    late.close()
                assert [h.url for h in second.hits] == [h.url for h in local.hits]
                for a, b in zip(local.hits, second.hits, strict=True):
                    assert b.scores.bm25 == pytest.approx(a.scores.bm25, rel=1e-4)

    asyncio.run(main())


def test_a_sharded_index_follows_a_recrawl(tmp_path: Path) -> None:
    """Incremental runs keep working: a changed page's old document, a gone page's and a
    page whose anchor text changed are each found in their own shard."""
    folder = make_crawl(tmp_path, recrawled.FIRST, cdxj=True)
    assert build_index(folder, shards=SHARDS).indexed == 7
    assert sorted(_found(folder, "seal")) == [recrawled.CHANGE, recrawled.KEEP]
    recrawled._recrawl(folder)
    second = build_index(folder)
    assert (second.pending, second.indexed, second.removed, second.documents) == (1, 1, 3, 4)
    assert _found(folder, "narwhal") == [recrawled.CHANGE]
    assert _found(folder, "walrus") == _found(folder, "capybara") == _found(folder, "seal") == []
    assert sorted(_found(folder, "penguin")) == [recrawled.CHANGE, recrawled.KEEP]
    placed = [url for k in range(SHARDS) for url in _urls(folder, k)]
    assert len(placed) == len(set(placed)) == 4


def _found(folder: Path, query: str) -> list[str]:
    with SearchEngine(folder) as engine:
        return [hit.url for hit in engine.search(query).hits]
