"""Searching an indexed, ranked crawl: operators, tiers, duplicates, filters, pages, info."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gossamer.search import RankingWeights, SearchEngine, SearchError, page_info
from gossamer.store import CrawlRecords


def urls(engine: SearchEngine, query: str, **kwargs: object) -> list[str]:
    return [hit.url for hit in engine.search(query, **kwargs).hits]  # type: ignore[arg-type]


def test_title_match_ranks_first_with_highlighted_snippet(engine: SearchEngine) -> None:
    result = engine.search("write ahead logging")
    assert result.matched == "all"
    first = result.hits[0]
    assert first.url == "http://a.test/wal"
    assert first.scores.tier == 0
    assert first.title == "Write-ahead logging"
    marked = [piece.lower() for piece, on in first.snippet.parts() if on]
    assert "write" in marked and "ahead" in marked
    assert result.pagerank_used and first.scores.pagerank > 0


def test_stemming_and_stopwords(engine: SearchEngine) -> None:
    assert "http://b.test/journal" in urls(engine, "journals rolled")
    assert engine.search("the of and").matched == "none"


def test_phrase_exclusion_and_site(engine: SearchEngine) -> None:
    phrase = urls(engine, '"rollback journal keeps"')
    assert phrase[0] == "http://b.test/journal"
    assert "http://a.test/wal" not in phrase
    assert "http://b.test/journal" not in urls(engine, "write ahead -journal")
    assert set(urls(engine, "database site:b.test")) <= {
        "http://b.test/journal",
        "http://b.test/checkpoint",
    }
    assert all("b.test" not in u for u in urls(engine, "database -site:b.test"))
    assert set(urls(engine, "site:test")) >= {"http://a.test/", "http://c.test/de"}


def test_duplicates_fold_into_one_result(engine: SearchEngine) -> None:
    result = engine.search("checkpoint guide")
    guides = [h for h in result.hits if h.title == "Checkpoint guide"]
    assert len(guides) == 1
    [guide] = guides
    assert (guide.duplicates, guide.same_content, guide.near_duplicates) == (1, 1, 0)
    [copy] = guide.copies
    assert copy.exact and copy.url != guide.url
    assert {copy.url, guide.url} == {"http://b.test/checkpoint", "http://c.test/checkpoint-copy"}
    assert result.matches == result.results + 1
    alone = next(h for h in engine.search("write ahead logging").hits if h.title)
    assert (alone.duplicates, alone.copies) == (0, ())


def test_any_term_fallback_and_no_match(engine: SearchEngine) -> None:
    result = engine.search("checkpoint zzyzx")
    assert result.matched == "any"
    assert result.hits
    assert engine.search("zzyzx").matched == "none"


def test_english_filter_and_pdf(engine: SearchEngine) -> None:
    assert urls(engine, "datenbank") == ["http://c.test/de"]
    assert urls(engine, "datenbank", language="en") == []
    pdf = engine.search("backup manual").hits[0]
    assert (pdf.url, pdf.kind) == ("http://d.test/manual.pdf", "pdf")


def test_pagination(engine: SearchEngine) -> None:
    everything = urls(engine, "database", per_page=100)
    assert len(everything) >= 3
    second = engine.search("database", page=2, per_page=1)
    assert second.pages == len(everything)
    assert [h.url for h in second.hits] == everything[1:2]
    assert second.hits[0].position == 2
    with pytest.raises(SearchError, match="page"):
        engine.search("database", page=0)


def test_a_page_past_the_last_is_the_last(engine: SearchEngine) -> None:
    everything = urls(engine, "database", per_page=100)
    last = engine.search("database", page=1000, per_page=2)
    pages = -(-len(everything) // 2)
    assert (last.page, last.pages) == (pages, pages)
    assert [h.url for h in last.hits] == everything[(pages - 1) * 2 :]
    nothing = engine.search("zzyzx", page=7)
    assert (nothing.page, nothing.pages, nothing.hits) == (1, 1, ())


def test_scores_for_one_page(engine: SearchEngine) -> None:
    scores = engine.scores_for("http://a.test/wal", "write ahead")
    assert scores is not None and scores.tier == 0 and 0 < scores.text <= 1
    assert engine.scores_for("http://a.test/wal", "zzyzx") is None
    assert engine.scores_for("http://a.test/wal", "the") is None


def test_page_info(engine: SearchEngine, corpus: Path) -> None:
    records = CrawlRecords(corpus / "crawl.db")
    try:
        info = page_info(engine, records, "http://b.test/checkpoint", "checkpoint")
        assert info is not None
        assert [d.url for d in info.same_content] == ["http://c.test/checkpoint-copy"]
        assert info.links_out == ("http://a.test/wal",) and info.links_out_count == 1
        assert info.links_in == ("http://a.test/",)
        assert info.fetch is not None and info.fetch.status == 200
        assert info.scores is not None and info.pagerank > 0
        assert page_info(engine, records, "http://nowhere.test/") is None
        # Discovered but never fetched: known through its links only.
        assert page_info(engine, records, "http://a.test/wal") is not None
    finally:
        records.close()


def test_without_ranks_and_with_other_weights(corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    shutil.rmtree(copy / "rank")
    with SearchEngine(copy, RankingWeights(pagerank=0, host_rank=0)) as plain:
        result = plain.search("database")
        assert not result.pagerank_used
        assert result.hits[0].scores.pagerank == 0.0
    with pytest.raises(SearchError):
        SearchEngine(copy, RankingWeights(text=-1))


def test_hits_blend_text_pagerank_and_host_rank(engine: SearchEngine) -> None:
    w = engine.weights
    hits = engine.search("database", per_page=100).hits
    assert any(hit.scores.host_rank_scaled > 0 for hit in hits)
    for hit in hits:
        s = hit.scores
        expected = w.text * s.text + w.pagerank * s.pagerank_scaled
        assert s.blended == pytest.approx(expected + w.host_rank * s.host_rank_scaled)
        # The score of one page, asked on its own, is the one it had in the list.
        alone = engine.scores_for(hit.url, "database")
        assert alone is not None and alone.blended == pytest.approx(s.blended)


@pytest.mark.parametrize("query", ["database", "wal journal", '"write ahead"', "zzzz", "-x"])
def test_ranked_urls_are_the_results_urls_in_order(engine: SearchEngine, query: str) -> None:
    shown = [hit.url for hit in engine.search(query, per_page=10).hits]
    assert engine.ranked_urls(query, limit=10) == shown
    assert engine.ranked_urls(query, limit=2) == shown[:2]
