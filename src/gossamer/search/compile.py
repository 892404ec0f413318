"""Search side, translation: a parsed query becomes tantivy queries.

Data flow: query -> **compile** -> engine. Query words go through the same analyzer as the
documents (stopwords out, Porter stems), so "Running" finds "runs"; a query word that is a
stopword disappears, and a word the analyzer splits ("e-mail") becomes a phrase.

Every word is searched in every text field with that field's boost (title, headings,
description, body, the URL's words, and the words of links pointing at the page), and the
per-field BM25 scores add up: a BM25F in spirit, field by field. With two words or more,
the whole query as a sloppy phrase (its words within ``proximity_slop`` positions of each
other, in order) adds a score of its own, so pages where the words stand together come
before pages that merely hold them all. Three queries come out:

* ``strict``: every word and phrase required (what the user sees first);
* ``loose``: any of them, for when the strict one finds nothing;
* ``title_clauses``: each word or phrase in the title alone, to count title matches for
  the tiers.

Both ``strict`` and ``loose`` carry the filters: excluded terms, ``site:`` and language.
An excluded term is looked for in every text field, the words of links pointing at the page
included, whatever the ranking's weights: a page that ``"forest river"`` finds through its
links' words is not one that ``forest -river`` may return. ``a OR b`` is one required term
that either alternative satisfies.

``own_strict`` and ``own_loose`` are ``strict`` and ``loose`` without the words of links: a
result they do not match was found only through the links pointing at it, which the
results say ("matched via links").
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from gossamer.index.schema import Fields
from gossamer.search.query import ParsedQuery, QueryTerm
from gossamer.search.ranking import RankingWeights

__all__ = ["CompiledQuery", "compile_query"]

Must, Should, MustNot = tantivy.Occur.Must, tantivy.Occur.Should, tantivy.Occur.MustNot


@dataclass(frozen=True, slots=True, eq=False)
class CompiledQuery:
    strict: tantivy.Query
    loose: tantivy.Query | None  # None when there is at most one required term
    title_clauses: tuple[tantivy.Query, ...]
    terms: int  # required words and phrases that survived analysis
    empty: bool = False  # nothing to search for: only stopwords, or no words at all
    own_strict: tantivy.Query | None = None  # strict's words in the page's own text
    own_loose: tantivy.Query | None = None
    # The query's filters alone (exclusions, site:, language): what a page found by its
    # meaning rather than its words must still pass.
    filters: tuple[tuple[tantivy.Occur, tantivy.Query], ...] = ()


class _Compiler:
    def __init__(
        self, schema: tantivy.Schema, analyzer: tantivy.TextAnalyzer, weights: RankingWeights
    ) -> None:
        self._schema = schema
        self._analyzer = analyzer
        self._boosts = {
            Fields.TITLE: weights.title_boost,
            Fields.HEADINGS: weights.headings_boost,
            Fields.DESCRIPTION: weights.description_boost,
            Fields.BODY: weights.body_boost,
            Fields.URL_WORDS: weights.url_boost,
            Fields.ANCHORS: weights.anchor_boost,
        }
        self._proximity = weights.proximity_boost
        self._slop = weights.proximity_slop

    def tokens(self, text: str) -> list[tuple[int, str]]:
        tokens = self._analyzer.pre_tokenize(text).tokens
        if not tokens:
            return []
        first = tokens[0].position
        return [(t.position - first, t.text) for t in tokens]

    def field_query(self, field: str, tokens: list[tuple[int, str]]) -> tantivy.Query:
        if len(tokens) == 1:
            return tantivy.Query.term_query(self._schema, field, tokens[0][1])
        return tantivy.Query.phrase_query(self._schema, field, list(tokens))

    def clause(
        self, term: QueryTerm, *, own: bool = False, every: bool = False
    ) -> tantivy.Query | None:
        """The term in any text field with a weight (``own``: but anchors; ``every``: in
        every text field, weighted or not, as an exclusion looks), or None when analysis
        leaves nothing of it. Alternatives: any of them."""
        if term.alternatives:
            either = [self.clause(t, own=own, every=every) for t in term.alternatives]
            found = [(Should, q) for q in either if q is not None]
            return tantivy.Query.boolean_query(found) if found else None
        tokens = self.tokens(term.text)
        if not tokens:
            return None
        fields = [
            (Should, tantivy.Query.boost_query(self.field_query(f, tokens), max(boost, 1e-6)))
            for f, boost in self._boosts.items()
            if (boost > 0 or every)
            and (len(tokens) == 1 or f != Fields.URL_WORDS)
            and not (own and f == Fields.ANCHORS)
        ]
        return tantivy.Query.boolean_query(fields) if fields else None

    def proximity(self, terms: tuple[QueryTerm, ...]) -> tantivy.Query | None:
        """All the query's words near each other, in order, in one field: a score bonus."""
        tokens = self.tokens(" ".join(term.text for term in terms if not term.alternatives))
        if self._proximity <= 0 or len(tokens) < 2:
            return None
        fields = [
            (Should, tantivy.Query.boost_query(
                tantivy.Query.phrase_query(self._schema, f, list(tokens), slop=self._slop),
                boost * self._proximity,
            ))
            for f, boost in self._boosts.items()
            if boost > 0 and f != Fields.URL_WORDS
        ]  # fmt: skip
        return tantivy.Query.boolean_query(fields) if fields else None

    def title_clause(self, term: QueryTerm) -> tantivy.Query | None:
        if term.alternatives:
            either = [self.title_clause(t) for t in term.alternatives]
            found = [(Should, q) for q in either if q is not None]
            return tantivy.Query.boolean_query(found) if found else None
        tokens = self.tokens(term.text)
        return self.field_query(Fields.TITLE, tokens) if tokens else None

    def raw(self, field: str, value: str) -> tantivy.Query:
        return tantivy.Query.term_query(self._schema, field, value)


def compile_query(
    parsed: ParsedQuery,
    schema: tantivy.Schema,
    analyzer: tantivy.TextAnalyzer,
    weights: RankingWeights,
    *,
    language: str | None = None,
) -> CompiledQuery:
    """Translate ``parsed``; ``language`` (e.g. "en") keeps only pages detected as such."""
    compiler = _Compiler(schema, analyzer, weights)
    required: list[tantivy.Query] = []
    own: list[tantivy.Query] = []  # the same terms in the page's own text
    titles: list[tantivy.Query] = []
    for term in parsed.include:
        clause = compiler.clause(term)
        title = compiler.title_clause(term)
        if clause is not None and title is not None:
            required.append(clause)
            titles.append(title)
            own.append(compiler.clause(term, own=True) or tantivy.Query.empty_query())
    filters: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for term in parsed.exclude:
        clause = compiler.clause(term, every=True)
        if clause is not None:
            filters.append((MustNot, clause))
    if parsed.sites:
        sites = [(Should, compiler.raw(Fields.SITE, s)) for s in parsed.sites]
        filters.append((Must, tantivy.Query.boolean_query(sites)))
    filters += [(MustNot, compiler.raw(Fields.SITE, s)) for s in parsed.exclude_sites]
    if language:
        filters.append((Must, compiler.raw(Fields.LANG, language)))
    if not required:
        # site: alone lists the site; a boolean query needs a positive clause to match.
        base = [(Must, tantivy.Query.all_query())] if parsed.sites else []
        if not base:
            return CompiledQuery(tantivy.Query.empty_query(), None, (), 0, empty=True)
        return CompiledQuery(
            tantivy.Query.boolean_query(base + filters), None, (), 0, filters=tuple(filters)
        )
    near = compiler.proximity(parsed.include)
    bonus = [(Should, near)] if near is not None else []
    strict = tantivy.Query.boolean_query([(Must, q) for q in required] + bonus + filters)
    loose = None
    own_strict = tantivy.Query.boolean_query([(Must, q) for q in own])
    own_loose = None
    if len(required) > 1:
        anything = tantivy.Query.boolean_query([(Should, q) for q in required])
        loose = tantivy.Query.boolean_query([(Must, anything), *bonus, *filters])
        own_loose = tantivy.Query.boolean_query([(Should, q) for q in own])
    return CompiledQuery(
        strict,
        loose,
        tuple(titles),
        len(required),
        own_strict=own_strict,
        own_loose=own_loose,
        filters=tuple(filters),
    )
