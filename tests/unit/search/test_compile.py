"""A parsed query becomes tantivy queries: what each of them matches in the shared corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
import tantivy

from gossamer.index import Fields, IndexHandle, open_index
from gossamer.search.compile import CompiledQuery, compile_query
from gossamer.search.query import parse_query
from gossamer.search.ranking import RankingWeights

EVERY_PAGE = {
    "http://a.test/",
    "http://a.test/wal",
    "http://b.test/checkpoint",
    "http://b.test/journal",
    "http://c.test/checkpoint-copy",
    "http://c.test/de",
    "http://d.test/manual.pdf",
    "http://evil.test/hostile?x=%3Cscript%3E",
}


@pytest.fixture(scope="module")
def index(corpus: Path) -> IndexHandle:
    return open_index(corpus, create=False)


def compiled(
    index: IndexHandle,
    text: str,
    weights: RankingWeights | None = None,
    language: str | None = None,
) -> CompiledQuery:
    parsed = parse_query(text)
    return compile_query(
        parsed, index.schema, index.analyzer, weights or RankingWeights(), language=language
    )


def urls(index: IndexHandle, query: tantivy.Query | None) -> set[str]:
    assert query is not None
    searcher = index.index.searcher()
    hits = searcher.search(query, limit=100).hits
    return {str(searcher.doc(address).get_first(Fields.URL)) for _, address in hits}


def strict(
    index: IndexHandle,
    text: str,
    weights: RankingWeights | None = None,
    language: str | None = None,
) -> set[str]:
    return urls(index, compiled(index, text, weights, language).strict)


@pytest.mark.parametrize("text", ["", "   ", "the of and", "-checkpoint", "site:", '""'])
def test_nothing_to_search_for(index: IndexHandle, text: str) -> None:
    query = compiled(index, text)
    assert query.empty
    assert (query.terms, query.loose, query.title_clauses) == (0, None, ())
    assert urls(index, query.strict) == set()


def test_every_word_is_required_in_strict_and_any_will_do_in_loose(index: IndexHandle) -> None:
    checkpoint, rollback = strict(index, "checkpoint"), strict(index, "rollback")
    assert checkpoint and rollback and not checkpoint & rollback
    query = compiled(index, "checkpoint rollback")
    assert query.terms == 2
    assert urls(index, query.strict) == set()
    assert urls(index, query.loose) == checkpoint | rollback
    # One required term: the strict query is already as loose as it gets.
    assert compiled(index, "checkpoint").loose is None


def test_query_words_are_analysed_like_the_documents(index: IndexHandle) -> None:
    assert strict(index, "Logs") == strict(index, "logging") == strict(index, "LOG")
    assert "http://a.test/wal" in strict(index, "logging")
    # A stopword disappears instead of requiring itself.
    query = compiled(index, "the checkpoint")
    assert query.terms == 1
    assert urls(index, query.strict) == strict(index, "checkpoint")


def test_a_word_the_analyzer_splits_is_a_phrase(index: IndexHandle) -> None:
    query = compiled(index, "write-ahead")
    assert query.terms == 1
    assert query.loose is None
    assert urls(index, query.strict) == strict(index, '"write ahead"')
    assert urls(index, query.strict) <= strict(index, "write ahead")


def test_every_text_field_counts_and_a_zero_boost_leaves_one_out(index: IndexHandle) -> None:
    hostile = "http://evil.test/hostile?x=%3Cscript%3E"
    # "evil" is only in that page's URL.
    assert strict(index, "evil") == {hostile}
    assert strict(index, "evil", weights=RankingWeights(url_boost=0)) == set()
    # A phrase is not looked for in the URL's words.
    assert strict(index, '"evil test"') == set()
    # A title word is found through the title alone.
    assert strict(index, "guide", weights=RankingWeights(body_boost=0, headings_boost=0)) == {
        "http://b.test/checkpoint",
        "http://c.test/checkpoint-copy",
    }


def test_title_clauses_match_each_term_in_the_title_only(index: IndexHandle) -> None:
    query = compiled(index, "checkpoint rollback")
    assert [urls(index, clause) for clause in query.title_clauses] == [
        {"http://b.test/checkpoint", "http://c.test/checkpoint-copy"},
        {"http://b.test/journal"},
    ]
    # "rollback" is in the body of a.test/ too, not in its title.
    assert "http://a.test/" in strict(index, "rollback")


def test_exclusions_filter_both_queries(index: IndexHandle) -> None:
    assert strict(index, "checkpoint -guide") == {"http://d.test/manual.pdf"}
    assert strict(index, 'checkpoint -"checkpoint guide"') == {"http://d.test/manual.pdf"}
    loose = compiled(index, "checkpoint rollback -guide").loose
    assert urls(index, loose) == (strict(index, "checkpoint") | strict(index, "rollback")) - {
        "http://b.test/checkpoint",
        "http://c.test/checkpoint-copy",
    }


def test_sites_keep_or_drop_hosts_in_both_queries(index: IndexHandle) -> None:
    assert strict(index, "site:a.test") == {"http://a.test/", "http://a.test/wal"}
    assert compiled(index, "site:a.test").terms == 0
    assert strict(index, "site:a.test site:b.test") == {
        url for url in EVERY_PAGE if url.startswith(("http://a.test/", "http://b.test/"))
    }
    assert strict(index, "checkpoint -site:b.test") == {
        "http://c.test/checkpoint-copy",
        "http://d.test/manual.pdf",
    }
    loose = compiled(index, "checkpoint rollback site:b.test").loose
    assert urls(index, loose) == {"http://b.test/checkpoint", "http://b.test/journal"}
    # A site filter alone cannot match anything when every word is excluded.
    assert strict(index, "site:a.test -logging -rollback") == set()


def test_language_keeps_pages_detected_as_such(index: IndexHandle) -> None:
    assert strict(index, "datenbank") == {"http://c.test/de"}
    assert strict(index, "datenbank", language="en") == set()
    assert strict(index, "datenbank", language="de") == {"http://c.test/de"}
    assert "http://c.test/de" not in strict(index, "site:c.test", language="en")
