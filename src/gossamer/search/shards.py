"""Search side, scatter and gather: the shards of a sharded index searched as one index.

Data flow: engine (a compiled query) -> **shards** (each shard's tantivy hits, re-scored
with collection-wide statistics, merged) -> engine (ordering, results). An unsharded index
is one shard, searched exactly as before (no re-scoring, the same hits in the same order).

Why re-score: tantivy scores BM25 with its own searcher's statistics, the number of
documents, each term's document frequency and each field's average length, and a shard
knows only its own. A rare word's IDF then differs from shard to shard by several percent,
so the scores of two shards cannot be merged as they are. tantivy-py (0.27) takes no outside
statistics, so each shard's best hits are explained (``Query.explain``: every BM25 leaf with
its term frequency, field length, document frequency and average length) and every leaf is
computed again with the statistics of all shards together: document frequencies summed
(``Searcher.doc_freq``), document counts summed, average field lengths weighted by shard
size (read once per shard from the explanation of its most common term in each field).
Sums and boosts are linear, so the new leaves give the new total. A phrase leaf names
neither its field nor its words; it is recognised among the query's phrases by its IDF sum
and the field's average length, and left as it is when nothing matches.

Explaining is the cost (milliseconds a hit on pages of real size), so not every hit is
explained: each shard's first five are, and the median of their corrections estimates the
shard's other hits; then the best ``rescored`` (40) of all shards are explained too, the
best by that estimate plus what the ranking adds to it (the engine's PageRank ``prior``:
on a web with many near-equal text scores the first page comes from deep in the BM25 list).
A first page comes from them; later hits keep their estimate (BENCHMARKS.md, issue 34,
measures the difference this leaves and the cost).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import tantivy

from gossamer.index.schema import RAW_FIELDS, TEXT_FIELDS, Fields
from gossamer.search.query import ParsedQuery
from gossamer.search.ranking import RankingWeights

__all__ = [
    "Address",
    "Collection",
    "Phrases",
    "Rescorer",
    "ShardShape",
    "Shards",
    "address_key",
    "phrases_of",
    "shape_of",
    "terms_in",
]

Address = tuple[int, tantivy.DocAddress]  # (shard, address in that shard's searcher)
Hit = tuple[float, Address]
# Field ids in the order ``schema.build_schema`` adds the fields (tantivy numbers them so).
_FIELD_NAMES = (*TEXT_FIELDS, *RAW_FIELDS, Fields.MIME, Fields.CRAWLED, Fields.NUM, Fields.GROUP)
_PROBED = (*TEXT_FIELDS, Fields.HOST, Fields.SITE, Fields.LANG, Fields.CONTENT_TYPE)
_TERM = re.compile(r'Term=Term\(field=(\d+), type=Str, "(.*)"\)$')
_K1, _B = 1.2, 0.75  # tantivy's BM25 parameters
_PROBED_HITS = 5  # first hits of each shard explained to estimate its correction
_RESCORED = 40  # best hits over all shards (by estimate) explained and re-scored exactly


@dataclass(frozen=True, slots=True)
class Phrases:
    """What the query may hold as phrases: their token lists, and the boosts each text field
    is searched with (a phrase leaf is recognised by its boost too: two fields may have the
    same average length and the same local IDF sum)."""

    words: tuple[tuple[str, ...], ...] = ()
    boosts: tuple[tuple[str, tuple[float, ...]], ...] = ()


_NO_PHRASES = Phrases()


def phrases_of(parsed: ParsedQuery, analyzer: tantivy.TextAnalyzer, w: RankingWeights) -> Phrases:
    """The token lists the query may search as phrases (each term, and all of them for
    proximity), with each field's boosts."""
    texts = [t.text for t in parsed.include if not t.alternatives]
    texts += [a.text for t in parsed.include for a in t.alternatives]
    every = " ".join(t.text for t in parsed.include if not t.alternatives)
    boosts = {
        Fields.TITLE: w.title_boost,
        Fields.HEADINGS: w.headings_boost,
        Fields.DESCRIPTION: w.description_boost,
        Fields.BODY: w.body_boost,
        Fields.URL_WORDS: w.url_boost,
        Fields.ANCHORS: w.anchor_boost,
    }
    return Phrases(
        words=tuple(
            tuple(token.text for token in analyzer.pre_tokenize(text).tokens)
            for text in [*texts, every]
        ),
        boosts=tuple((f, (b, b * w.proximity_boost)) for f, b in boosts.items()),
    )


def address_key(address: Address) -> tuple[int, int, int]:
    """A hashable key for an address (tantivy's ``DocAddress`` is not hashable)."""
    return (address[0], address[1].segment_ord, address[1].doc)


def _idf(docs_with: float, docs: float) -> float:
    return math.log(1.0 + (docs - docs_with + 0.5) / (docs_with + 0.5))


@dataclass(frozen=True, slots=True)
class ShardShape:
    """A shard's size and field lengths as its BM25 sees them."""

    docs: float  # N as tantivy's BM25 counts it
    avgdl: dict[str, float]  # average length of each probed field


FreqsOf = Callable[[str, str], list[int]]  # (field, term) -> document frequency in each shard


class Collection:
    """The statistics of all shards together, for re-scoring any shard's hits."""

    def __init__(self, shapes: Sequence[ShardShape], freqs: FreqsOf) -> None:
        self.shapes = list(shapes)
        self.docs = sum(shape.docs for shape in self.shapes)
        fields = {name for shape in self.shapes for name in shape.avgdl}
        self.avgdl = {
            name: sum(s.avgdl.get(name, 0.0) * s.docs for s in self.shapes) / (self.docs or 1.0)
            for name in fields
        }
        self._freqs = freqs
        self._known: dict[tuple[str, str], list[int]] = {}

    def freqs(self, field: str, term: str) -> list[int]:
        key = (field, term)
        if key not in self._known:
            self._known[key] = self._freqs(field, term)
        return self._known[key]


def _leaf_values(node: dict[str, Any]) -> dict[str, float]:
    return {d["description"].split(",")[0]: float(d["value"]) for d in node.get("details", ())}


def shape_of(searcher: tantivy.Searcher, schema: tantivy.Schema) -> ShardShape:
    """N and each field's average length in one shard, from its most common term's BM25."""
    docs, avgdl = float(searcher.num_docs), {}
    for name in _PROBED:
        common = searcher.terms_with_prefix(name, "", limit=1)
        if not common:
            continue
        query = tantivy.Query.term_query(schema, name, common[0][0])
        found = searcher.search(query, 1, count=False).hits
        if not found:
            continue
        tree = json.loads(query.explain(searcher, found[0][1]).to_json())
        for part in tree.get("details", ()):
            if part["description"].startswith("idf"):
                docs = _leaf_values(part).get("N", docs)
            elif part["description"].startswith("freq /"):
                avgdl[name] = _leaf_values(part).get("avgdl", 0.0)
    return ShardShape(docs, avgdl)


class Shards:
    """The searchers of an index's shards, and their hits merged with global statistics.

    ``phrases`` given to ``search`` are the token lists the query may hold as phrases (see
    the module docstring); ``rescored``: how many of the best hits over all shards are
    re-scored exactly.
    """

    def __init__(
        self,
        searchers: Sequence[tantivy.Searcher],
        schema: tantivy.Schema,
        rescored: int = _RESCORED,
    ) -> None:
        self.searchers = list(searchers)
        self._schema = schema
        self._rescored = rescored
        self._probed = _PROBED_HITS
        self._collection: Collection | None = None

    @property
    def sharded(self) -> bool:
        return len(self.searchers) > 1

    @property
    def num_docs(self) -> int:
        return sum(int(s.num_docs) for s in self.searchers)

    def doc(self, address: Address) -> tantivy.Document:
        return self.searchers[address[0]].doc(address[1])

    def fast_field_values(self, field: str, addresses: Sequence[Address]) -> list[Any]:
        if not self.sharded:
            return list(self.searchers[0].fast_field_values(field, [a for _, a in addresses]))
        values: list[Any] = [None] * len(addresses)
        by_shard: dict[int, list[int]] = {}
        for i, (shard, _) in enumerate(addresses):
            by_shard.setdefault(shard, []).append(i)
        for shard, positions in by_shard.items():
            found = self.searchers[shard].fast_field_values(
                field, [addresses[i][1] for i in positions]
            )
            for i, value in zip(positions, found, strict=True):
                values[i] = value
        return values

    def matching(self, query: tantivy.Query, limit: int) -> list[Address]:
        """Addresses of up to ``limit`` hits of each shard, scores unused (a filter's)."""
        return [
            (k, address)
            for k, searcher in enumerate(self.searchers)
            for _, address in searcher.search(query, limit, count=False).hits
        ]

    def search(
        self,
        query: tantivy.Query,
        limit: int,
        phrases: Phrases = _NO_PHRASES,
        prior: Callable[[int], float] | None = None,
    ) -> tuple[list[Hit], int]:
        """The best ``limit`` hits over all shards, scored as one index would, and how many
        documents match. ``prior``: what the ranking adds to a page's text score (0..1 of
        the best), by document number; the hits explained exactly are chosen by both."""
        if not self.sharded:
            result = self.searchers[0].search(query, limit, count=True)
            count = cast(int | None, getattr(result, "count", None))
            hits = [(float(score), (0, a)) for score, a in result.hits]
            return hits, count if count is not None else len(hits)
        merged: list[Hit] = []
        nums: list[int] = []
        exact: list[bool] = []
        total = 0
        scorers = [Rescorer(self.collection, k, phrases) for k in range(len(self.searchers))]
        for k, searcher in enumerate(self.searchers):
            result = searcher.search(query, limit, count=True)
            count = cast(int | None, getattr(result, "count", None))
            total += count if count is not None else len(result.hits)
            estimated = self._estimated(scorers[k], query, result.hits)
            merged += estimated
            exact += [i < self._probed for i in range(len(estimated))]
            found = searcher.fast_field_values(Fields.NUM, [a for _, a in result.hits])
            nums += [int(n or 0) for n in found]
        # The best by estimate are re-scored exactly: the first page comes from them.
        top = max((score for score, _ in merged), default=0.0) or 1.0
        if prior is None:
            chosen = [-score for score, _ in merged]
        else:
            chosen = [
                -(score / top + prior(num)) for (score, _), num in zip(merged, nums, strict=True)
            ]
        best = sorted(range(len(merged)), key=chosen.__getitem__)[: self._rescored]
        for i in best:
            if not exact[i]:
                shard, address = merged[i][1]
                merged[i] = (self._exact(scorers[shard], query, address), merged[i][1])
        # Equal scores (copies that are not one group) in the order of the document store,
        # which is the order a single index added them in, and mostly breaks its ties by.
        order = sorted(range(len(merged)), key=lambda i: (-merged[i][0], nums[i]))
        return [merged[i] for i in order[:limit]], total

    def best_score(self, query: tantivy.Query, phrases: Phrases = _NO_PHRASES) -> float:
        hits, _ = self.search(query, 1, phrases)
        return hits[0][0] if hits else 0.0

    def rescore_one(
        self, query: tantivy.Query, hit: tuple[float, Address], phrases: Phrases
    ) -> float:
        """The global score of one hit of ``query`` (the page-info view's)."""
        if not self.sharded:
            return hit[0]
        k, address = hit[1]
        return self._exact(Rescorer(self.collection, k, phrases), query, address)

    # -- re-scoring --------------------------------------------------------------------------

    @property
    def collection(self) -> Collection:
        """The statistics of all shards, measured on first use."""
        if self._collection is None:
            self._collection = Collection(
                [shape_of(s, self._schema) for s in self.searchers],
                lambda field, term: [int(s.doc_freq(field, term)) for s in self.searchers],
            )
        return self._collection

    def _exact(self, scorer: Rescorer, query: tantivy.Query, address: tantivy.DocAddress) -> float:
        tree = json.loads(query.explain(self.searchers[scorer.shard], address).to_json())
        return scorer.value(tree)

    def _estimated(
        self,
        scorer: Rescorer,
        query: tantivy.Query,
        hits: Sequence[tuple[float, tantivy.DocAddress]],
    ) -> list[Hit]:
        """A shard's hits, the first ``_probed`` re-scored exactly and the others
        times the median of their corrections."""
        out: list[Hit] = []
        ratios = []
        for score, address in hits[: self._probed]:
            new = self._exact(scorer, query, address)
            if score > 0:
                ratios.append(new / score)
            out.append((new, (scorer.shard, address)))
        ratio = statistics.median(ratios) if ratios else 1.0
        out += [(float(score) * ratio, (scorer.shard, a)) for score, a in hits[self._probed :]]
        return out


def _term_of(context: object) -> tuple[str, str] | None:
    match = _TERM.match(str(context))
    if match is None or int(match.group(1)) >= len(_FIELD_NAMES):
        return None
    return _FIELD_NAMES[int(match.group(1))], match.group(2).replace('\\"', '"').replace(
        "\\\\", "\\"
    )


def terms_in(tree: dict[str, Any], phrases: Phrases) -> set[tuple[str, str]]:
    """The (field, term) pairs whose document frequencies re-scoring ``tree`` may ask for:
    what a remote shard's frequencies are fetched for, in one request."""
    found: set[tuple[str, str]] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        for context in node.get("context", ()):
            term = _term_of(context)
            if term is not None:
                found.add(term)
        stack.extend(node.get("details", ()))
    for words in phrases.words:
        if len(words) > 1:
            found.update((field, word) for field in TEXT_FIELDS for word in words)
    return found


class Rescorer:
    """One shard's explanation trees computed again with the collection's statistics."""

    def __init__(self, collection: Collection, shard: int, phrases: Phrases) -> None:
        self._collection = collection
        self.shard = shard
        self._phrases = [p for p in phrases.words if len(p) > 1]
        self._boosts = dict(phrases.boosts)

    def _freq(self, field: str, term: str) -> tuple[int, int]:
        counts = self._collection.freqs(field, term)
        return counts[self.shard], sum(counts)

    def value(self, node: dict[str, Any], boost: float = 1.0) -> float:
        """The node's value with global statistics; ``boost``: the product of the boosts
        above it."""
        text = str(node.get("description", ""))
        old = float(node.get("value", 0.0))
        children = node.get("details", ())
        if text.startswith("Boost x"):
            factor = float(text[len("Boost x") :].split(maxsplit=1)[0])
            return factor * self.value(children[0], boost * factor) if children else old
        if text.startswith("BooleanClause"):
            return old + sum(self.value(c, boost) - float(c.get("value", 0.0)) for c in children)
        if text.startswith("Phrase Scorer"):
            return self.value(children[0], boost) if len(children) == 1 else old
        if text.startswith("TermQuery"):
            return self._term(node, old, boost)
        return old

    def _term(self, node: dict[str, Any], old: float, boost: float) -> float:
        parts = {str(d["description"]).split(",")[0]: d for d in node.get("details", ())}
        norm = next((d for k, d in parts.items() if k.startswith("freq /")), None)
        if norm is None:
            return old
        given = _leaf_values(norm)
        freq, dl = given.get("freq", 0.0), given.get("dl", 0.0)
        avgdl_here = given.get("avgdl", 0.0)
        field, idf = self._idf(node, parts, avgdl_here, boost)
        if field is None:
            return old
        avgdl = self._collection.avgdl.get(field, avgdl_here) or 1.0
        tf = freq / (freq + _K1 * (1 - _B + _B * dl / avgdl)) if freq else 0.0
        return (_K1 + 1) * idf * tf

    def _idf(
        self, node: dict[str, Any], parts: dict[str, Any], avgdl_here: float, boost: float
    ) -> tuple[str | None, float]:
        """The leaf's field and its IDF over all shards; (None, 0) when it is not known."""
        docs = self._collection.docs
        for context in node.get("context", ()):
            term = _term_of(context)
            if term is not None:
                return term[0], _idf(self._freq(*term)[1], docs)
        local_idf = float(parts.get("idf", {}).get("value", 0.0))
        here = self._collection.shapes[self.shard]
        for words in self._phrases:
            for field in TEXT_FIELDS:
                allowed = self._boosts.get(field)
                if allowed is not None and not any(math.isclose(boost, b) for b in allowed):
                    continue
                if abs(here.avgdl.get(field, -1.0) - avgdl_here) > 1e-3 * max(avgdl_here, 1.0):
                    continue
                local = sum(_idf(self._freq(field, w)[0], here.docs) for w in words)
                if abs(local - local_idf) <= 1e-4 * max(local_idf, 1.0):
                    return field, sum(_idf(self._freq(field, w)[1], docs) for w in words)
        return None, 0.0
