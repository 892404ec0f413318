"""The hybrid ranking: reciprocal-rank and mixed fusion as pure functions, and the engine
finding a page by its meaning alone while the query's filters still hold."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gossamer.errors import ConfigError
from gossamer.index import build_index
from gossamer.index.embed import semantic_installed
from gossamer.search import SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.hybrid import fuse
from gossamer.search.ranking import RANKINGS
from gossamer.web import make_app

from ..index.fake_crawl import FakePage, html, make_crawl
from ..index.fake_embedder import FakeEmbedder
from ..test_cli_search import parse, run_command
from ..web.served import Client, serve_and_check

HYBRID = replace(RANKINGS["hybrid"], fusion="rrf", semantic=1.0, rrf_k=60)


def test_rrf_adds_reciprocal_ranks_and_a_page_on_both_lists_comes_first() -> None:
    blend = [(1, 1, 9.0), (2, 2, 5.0)]
    vector = [(3, 3, 0.9), (2, 2, 0.8)]
    fused = fuse(blend, vector, {}, fusion="rrf", semantic=1.0, rrf_k=60)
    assert [f.num for f in fused] == [2, 1, 3]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 62)
    # 1 and 3 tie at 1/61: the blend's page first.
    assert fused[1].score == pytest.approx(fused[2].score)
    assert (fused[2].blend_rank, fused[2].vector_rank) == (0, 1)


def test_mix_adds_the_cosine_to_the_normalised_blend() -> None:
    blend = [(1, 1, 2.0), (2, 2, 1.0)]
    vector = [(3, 3, 0.9)]
    similarity = {1: 0.0, 2: 0.8, 3: 0.9}
    fused = fuse(blend, vector, similarity, fusion="mix", semantic=1.0, rrf_k=60)
    assert [(f.num, round(f.score, 6)) for f in fused] == [(2, 1.3), (1, 1.0), (3, 0.9)]


@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 5)), max_size=20, unique_by=lambda t: t[0]
    ),
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 5)), max_size=20, unique_by=lambda t: t[0]
    ),
    st.sampled_from(["rrf", "mix"]),
)
def test_every_group_of_either_side_comes_out_once(
    blend: list[tuple[int, int]], vector: list[tuple[int, int]], fusion: str
) -> None:
    # A page's group is the same on both sides, as the engine reads it from one field.
    group = {num: g for num, g in vector} | {num: g for num, g in blend}
    b = [(num, group[num], float(30 - i)) for i, (num, _) in enumerate(blend)]
    v = [(num, group[num], 1.0 - i / 40) for i, (num, _) in enumerate(vector)]
    fused = fuse(b, v, {num: 0.5 for num in group}, fusion=fusion, semantic=0.5, rrf_k=10)
    groups = [f.group for f in fused]
    assert len(groups) == len(set(groups))
    assert set(groups) == {group[num] for num, _, _ in b + v}
    assert fused == fuse(b, v, {num: 0.5 for num in group}, fusion=fusion, semantic=0.5, rrf_k=10)


PAGES = [
    FakePage("http://g.test/revert", html("git-revert", "revert reverses an earlier commit")),
    FakePage("http://g.test/clone", html("git-clone", "clone a repository")),
    FakePage("http://h.test/rollback", html("rollback", "the rollback journal")),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("gossamer.index.vectors.Embedder", FakeEmbedder)
        patch.setattr("gossamer.index.embed.Embedder", FakeEmbedder)
        patch.setattr("gossamer.index.indexer.semantic_installed", lambda: True)
        made = make_crawl(tmp_path_factory.mktemp("hybrid"), PAGES)
        build_index(made, embeddings=True)
        yield made


@pytest.fixture(scope="module")
def engine(folder: Path) -> Iterator[SearchEngine]:
    with SearchEngine(folder, HYBRID) as opened:
        yield opened


def test_a_page_sharing_no_word_with_the_query_is_found_by_its_meaning(
    engine: SearchEngine,
) -> None:
    engine.weights = RANKINGS["blend"]
    assert engine.search("undo mistake").matched == "none"
    engine.weights = HYBRID
    page = engine.search("undo mistake")
    assert page.matched == "meaning"
    assert page.hits[0].url == "http://g.test/revert"
    assert page.hits[0].scores.bm25 == 0.0 and page.hits[0].scores.similarity > 0.9
    assert engine.ranked_urls("undo mistake", limit=1) == ["http://g.test/revert"]


def test_a_page_found_by_meaning_obeys_the_query_filters(engine: SearchEngine) -> None:
    urls = [h.url for h in engine.search("undo").hits]
    assert "http://h.test/rollback" in urls
    assert "http://h.test/rollback" not in engine.ranked_urls("undo -journal", limit=10)
    assert set(engine.ranked_urls("undo site:h.test", limit=10)) == {"http://h.test/rollback"}


def test_words_still_count_first_for_a_page_that_has_them(engine: SearchEngine) -> None:
    assert engine.ranked_urls("clone", limit=1) == ["http://g.test/clone"]


NEEDS_EXTRA = pytest.mark.skipif(
    not semantic_installed(), reason="the command checks for the semantic extra (wordllama)"
)


@NEEDS_EXTRA
def test_hybrid_without_vectors_names_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = make_crawl(tmp_path / "bare", PAGES[:1])
    build_index(bare)
    with SearchEngine(bare, HYBRID) as opened, pytest.raises(SearchError, match="--embeddings"):
        opened.search("undo")
    with pytest.raises(ConfigError, match=f"gossamer index --embeddings {bare}"):
        run_command(parse("search", str(bare), "undo", "--ranking", "hybrid"))


@NEEDS_EXTRA
def test_the_command_line_searches_by_meaning(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gossamer.index.embed.Embedder", FakeEmbedder)
    assert (
        run_command(parse("search", str(folder), "undo mistake", "--ranking", "hybrid", "--json"))
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    assert data["matched"] == "meaning"
    assert data["hits"][0]["url"] == "http://g.test/revert"
    assert data["hits"][0]["scores"]["similarity"] > 0.9
    assert run_command(parse("search", str(folder), "undo mistake", "--ranking", "hybrid")) == 0
    assert "close in meaning" in capsys.readouterr().out


def test_the_web_ui_searches_by_meaning_with_the_model_loaded_at_start(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gossamer.index.embed.Embedder", FakeEmbedder)
    FakeEmbedder.calls = 0
    app = make_app(folder, weights=HYBRID)
    assert FakeEmbedder.calls == 1  # the warm-up query, before any request

    async def check(client: Client) -> None:
        page = await (await client.get("/search", params={"q": "undo mistake"})).text()
        assert "close in meaning" in page and "git-revert" in page

    serve_and_check(app, check)
