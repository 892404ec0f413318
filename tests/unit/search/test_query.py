"""The query syntax: words, "phrases", -exclusions, site: filters."""

from __future__ import annotations

import pytest

from gossamer.search import ParsedQuery, QueryTerm, SearchError, parse_query


def test_words_phrases_exclusions_and_sites() -> None:
    parsed = parse_query('sqlite "write ahead"  -journal -"rollback mode" site:A.test -site:b.test')
    assert parsed == ParsedQuery(
        include=(QueryTerm("sqlite"), QueryTerm("write ahead", phrase=True)),
        exclude=(QueryTerm("journal"), QueryTerm("rollback mode", phrase=True)),
        sites=("a.test",),
        exclude_sites=("b.test",),
    )
    assert str(parsed) == 'sqlite "write ahead" -journal -"rollback mode" site:a.test -site:b.test'


def test_forgiving_syntax() -> None:
    assert parse_query('"unclosed phrase here') == ParsedQuery(
        include=(QueryTerm("unclosed phrase here", phrase=True),)
    )
    assert parse_query('- -- site: "" word word').include == (QueryTerm("word"),)
    assert parse_query("site:https://Docs.Example.org/path").sites == ("docs.example.org",)
    assert parse_query("site:*.example.org:8080").sites == ("example.org",)
    assert parse_query("   ").is_empty
    assert not parse_query("site:a.test").is_empty


def test_limits() -> None:
    with pytest.raises(SearchError, match="longer than"):
        parse_query("x" * 1001)
    with pytest.raises(SearchError, match="more than 32 terms"):
        parse_query(" ".join(f"w{i}" for i in range(33)))
