"""Search side, core: answer a query over one crawl folder's index and ranks.

Data flow: query -> compile -> **engine** (tantivy BM25 candidates, PageRank, title tiers,
duplicate folding) -> results. An engine is opened once (the web server keeps one) and
holds the tantivy searcher, the document store and per-document rank arrays, so a query
costs a few tantivy searches plus a pass over at most ``weights.candidates`` hits.

Ranks join documents by URL once, at open time: ``num`` (a document's row in the store and
a fast field in tantivy) indexes arrays of scaled PageRank, so scoring a candidate
reads two fast fields and no stored document. Candidates stay columns of numbers (no object
per hit; ``ranking.order_columns``) and only the 30 shown are loaded in full.

The ``hybrid`` ranking then fuses the blend's first pages with the pages whose vectors are
nearest the query's (``index.vectors``, ``hybrid``); a page found only by its meaning still
passes the query's exclusions, ``site:`` and language. The model and the vectors are
loaded on the first hybrid query, so the other rankings import neither numpy nor the model.

A sharded index (``gossamer index --shards N``) is searched as one: every tantivy search goes
to each shard and the hits are merged with collection-wide BM25 statistics (``shards``);
the document store, ranks and duplicate groups are crawl-wide already. Hybrid is not
offered there: a sharded index keeps no page vectors.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

import tantivy

from gossamer.index.schema import (
    DOCSTORE_FILE,
    INDEX_DIR,
    Fields,
    build_schema,
    make_analyzer,
    open_index,
)
from gossamer.index.shards import open_shards, read_layout, shard_of
from gossamer.search.compile import CompiledQuery, compile_query
from gossamer.search.docranks import doc_ranks
from gossamer.search.errors import SearchError
from gossamer.search.query import ParsedQuery, parse_query
from gossamer.search.ranking import Columns, Ordered, Ranking, RankingWeights, order_columns
from gossamer.search.results import Copy, HitScores, SearchHit, SearchPage, Snippet
from gossamer.search.semantic import Semantic, SemanticInput
from gossamer.search.shards import Address, Phrases, Shards, address_key, phrases_of
from gossamer.store.docstore import DocStore
from gossamer.urls.canonical import url_id

if TYPE_CHECKING:
    from gossamer.rank.export import Ranks

__all__ = ["COPIES_LISTED", "PER_PAGE", "SearchEngine"]

PER_PAGE = 30
MAX_PAGE = 1000
COPIES_LISTED = 10  # duplicates named with each hit; the page-info view lists up to 100
_SNIPPET_CHARS = 240
_MUST = tantivy.Occur.Must
_Key = tuple[int, int, int]  # (shard, segment, doc): a tantivy DocAddress is not hashable
_Hits = list[tuple[float, Address]]


class StoredDoc(Protocol):
    """What a result is built from: a tantivy document, or a remote shard's copy of one."""

    def get_first(self, field_name: str) -> Any: ...


_key = address_key


def _clamped(values: list[int | float | bool | None], last: int | None) -> list[int]:
    """Fast-field values as ints, a missing one as 0, each within 0..``last`` when given;
    the list itself when it already is that (the usual case, and no copy)."""
    if set(map(type, values)) <= {int}:
        ints = cast(list[int], values)
        if not ints or (min(ints) >= 0 and (last is None or max(ints) <= last)):
            return ints
    if last is None:
        return [int(v or 0) for v in values]
    return [min(max(int(v or 0), 0), last) for v in values]


@dataclass(frozen=True, slots=True)
class _Ranked:
    parsed: ParsedQuery
    hits: _Hits
    ordered: Sequence[Ordered]
    base: tantivy.Query | None
    matched: str  # all, any or none of the query's words; "meaning": none, but hybrid found
    count: int
    own: tantivy.Query | None = None  # ``base`` in the pages' own text (no link words)
    similarity: dict[int, float] = field(default_factory=dict)  # by hit key (hybrid)


class SearchEngine:
    """Searches one crawl folder; open it once and ask many queries."""

    def __init__(
        self, crawl_dir: Path, weights: RankingWeights | None = None, *, front_only: bool = False
    ) -> None:
        """``front_only``: open the crawl-wide parts alone (document store, ranks), for a
        front whose shards are served elsewhere (``scatter``); it searches nothing itself."""
        self.crawl_dir = crawl_dir
        self.weights = weights or RankingWeights()
        self.weights.validate()
        shards = None if front_only else read_layout(crawl_dir)
        handles = []
        if not front_only:
            handles = (
                [open_index(crawl_dir, create=False)]
                if shards is None
                else open_shards(crawl_dir, shards, create=False)
            )
        if (shards is not None or front_only) and self.weights.hybrid:
            raise SearchError("a sharded index keeps no page vectors: choose another ranking")
        self._schema = handles[0].schema if handles else build_schema()
        self._analyzer = handles[0].analyzer if handles else make_analyzer()
        self._shards = Shards([handle.index.searcher() for handle in handles], self._schema)
        self.store = DocStore(crawl_dir / INDEX_DIR / DOCSTORE_FILE, readonly=True)
        self._group_sizes = self.store.group_sizes()
        self._exact_copies = self.store.exact_copies()
        self._doc_ranks = doc_ranks(crawl_dir, self.store)
        self._pagerank, self._host_rank = self._doc_ranks.pagerank, self._doc_ranks.host_rank
        self._ranks: Ranks | None = None
        self._semantic: Semantic | None = None  # the hybrid ranking's, on its first query

    @property
    def shard_set(self) -> Shards:
        """The tantivy searchers this engine asks (one, or one per shard)."""
        return self._shards

    @property
    def schema_and_analyzer(self) -> tuple[tantivy.Schema, tantivy.TextAnalyzer]:
        return self._schema, self._analyzer

    @property
    def rank_arrays(self) -> tuple[Sequence[float], Sequence[float]]:
        """Scaled PageRank and host rank by document number, and whether ranks are used."""
        return self._pagerank, self._host_rank

    @property
    def pagerank_used(self) -> bool:
        return self._doc_ranks.used

    @property
    def ranks(self) -> Ranks | None:
        """The ranks of every URL (for the page-info view), read on first use."""
        if self._ranks is None and self._doc_ranks.used:
            from gossamer.rank.export import load_ranks  # noqa: PLC0415 - pyarrow, page info only

            self._ranks = load_ranks(self.crawl_dir)
        return self._ranks

    def _raw_ranks(self, num: int) -> tuple[float, float]:
        """A page's PageRank and its host's, as computed (not scaled)."""
        ranks = self._doc_ranks
        if not 0 <= num < len(ranks.raw_pagerank):
            return 0.0, 0.0
        return float(ranks.raw_pagerank[num]), float(ranks.raw_host_rank[num])

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> SearchEngine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def documents(self) -> int:
        return self._shards.num_docs

    def search(
        self, text: str, *, page: int = 1, language: str | None = None, per_page: int = PER_PAGE
    ) -> SearchPage:
        """Page ``page`` (from 1) of the results for ``text``; ``language`` filters, e.g. "en".
        A page past the last one is the last one."""
        if not 1 <= page <= MAX_PAGE:
            raise SearchError(f"page must be between 1 and {MAX_PAGE}")
        started = time.perf_counter()
        found = self._ranked(text, language)
        parsed, hits, ordered, base = found.parsed, found.hits, found.ordered, found.base
        matched, count = found.matched, found.count
        page = min(page, max(1, -(-len(ordered) // per_page)))
        start = (page - 1) * per_page
        shown = ordered[start : start + per_page]
        snippets = _Snippets(self._shards, base, self._schema)
        addresses = [hits[item.candidate.key][1] for item in shown]
        linked = self._via_links(found.own, addresses)
        page_hits = tuple(
            self._with_similarity(
                replace(
                    self.hit(start + i + 1, doc, item, snippets.snippet(address[0], doc)),
                    via_links=i in linked,
                ),
                found.similarity.get(item.candidate.key),
            )
            for i, (address, item, doc) in enumerate(
                zip(addresses, shown, [self._shards.doc(a) for a in addresses], strict=True)
            )
        )
        return SearchPage(
            query=text,
            understood=str(parsed),
            page=page,
            per_page=per_page,
            matches=count,
            results=len(ordered),
            hits=page_hits,
            matched=matched,
            language=language,
            pagerank_used=self._doc_ranks.used,
            seconds=time.perf_counter() - started,
        )

    def ranked_urls(
        self, text: str, *, limit: int = PER_PAGE, language: str | None = None
    ) -> list[str]:
        """The URLs of the first ``limit`` results in result order, with nothing else: no
        snippet, copy or score is built (a ranking benchmark asks thousands of queries)."""
        found = self._ranked(text, language)
        urls = []
        for item in found.ordered[:limit]:
            doc = self._shards.doc(found.hits[item.candidate.key][1])
            urls.append(str(doc.get_first(Fields.URL) or ""))
        return urls

    def _ranked(self, text: str, language: str | None) -> _Ranked:
        """The query parsed and compiled, its hits (all its words, else any), in order."""
        parsed = parse_query(text)
        compiled = compile_query(
            parsed, self._schema, self._analyzer, self.weights, language=language
        )
        hits: _Hits = []
        matched, count = "none", 0
        phrases = self._phrases(parsed)
        if not compiled.empty:
            matched = "all"
            limit, prior = self.weights.candidates, self._prior
            hits, count = self._shards.search(compiled.strict, limit, phrases, prior)
            if not hits and compiled.loose is not None:
                matched = "any"
                hits, count = self._shards.search(compiled.loose, limit, phrases, prior)
            if not hits:
                matched = "none"
        base = compiled.strict if matched == "all" else compiled.loose
        own = compiled.own_strict if matched == "all" else compiled.own_loose
        ordered = self._order(hits, compiled, base)
        if self.weights.hybrid:
            return self._fused(_Ranked(parsed, hits, ordered, base, matched, count, own), compiled)
        return _Ranked(parsed, hits, ordered, base, matched, count, own)

    def _prior(self, num: int) -> float:
        """The blend's part that is not text, for document ``num`` (see ``ranking``), in
        units of the text weight: what a sharded search adds to a hit's share of the best
        text score to choose the hits it scores exactly."""
        if not 0 <= num < len(self._pagerank):
            return 0.0
        w = self.weights
        rest = w.pagerank * self._pagerank[num] + w.host_rank * self._host_rank[num]
        return rest / max(w.text, 1e-9)

    def _phrases(self, parsed: ParsedQuery) -> Phrases:
        """What re-scoring a sharded index's phrase matches looks for (``phrases_of``)."""
        if not self._shards.sharded:
            return Phrases()
        return phrases_of(parsed, self._analyzer, self.weights)

    @staticmethod
    def _with_similarity(hit: SearchHit, similarity: float | None) -> SearchHit:
        if similarity is None:
            return hit
        return replace(hit, scores=replace(hit.scores, similarity=similarity))

    def _fused(self, found: _Ranked, compiled: CompiledQuery) -> _Ranked:
        """``found`` with its first pages fused with the pages nearest in meaning."""
        ordered = found.ordered
        assert isinstance(ordered, Ranking)  # the blend's own order, not fused yet
        if self._semantic is None:
            self._semantic = Semantic.open(self.crawl_dir)
        # Only an unsharded index has page vectors: shard 0 is the whole index.
        raw = [(score, address) for score, (_, address) in found.hits]
        fused = self._semantic.fuse(
            self._shards.searchers[0],
            self._schema,
            SemanticInput(found.parsed, compiled, raw, ordered, self.weights),
            (self._pagerank, self._host_rank),
        )
        if fused is None:
            return found
        matched = "meaning" if found.matched == "none" and fused.ordered else found.matched
        return replace(
            found,
            hits=[(score, (0, address)) for score, address in fused.hits],
            ordered=fused.ordered,
            matched=matched,
            similarity=fused.similarity,
        )

    def _via_links(self, own: tantivy.Query | None, addresses: list[Address]) -> set[int]:
        """The positions in ``addresses`` of pages the query found only through the words of
        links pointing at them: their own text does not match it."""
        if own is None or not addresses:
            return set()
        urls = [str(self._shards.doc(a).get_first(Fields.URL) or "") for a in addresses]
        these = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, Fields.URL, u))
             for u in urls]
        )  # fmt: skip
        query = tantivy.Query.boolean_query([(_MUST, own), (_MUST, these)])
        matched = self._shards.matching(query, len(addresses))
        kept = {_key(address) for address in matched}
        return {i for i, address in enumerate(addresses) if _key(address) not in kept}

    def scores_for(self, url: str, text: str, language: str | None = None) -> HitScores | None:
        """How ``url`` scores for the query ``text``; None when it does not match."""
        parsed = parse_query(text)
        compiled = compile_query(
            parsed, self._schema, self._analyzer, self.weights, language=language
        )
        if compiled.empty:
            return None
        # Scored 0: the restriction to one URL must not add its own score to the page's BM25.
        only = tantivy.Query.const_score_query(
            tantivy.Query.term_query(self._schema, Fields.URL, url), 0.0
        )
        for base in (compiled.strict, compiled.loose):
            if base is None:
                continue
            query = tantivy.Query.boolean_query([(_MUST, base), (_MUST, only)])
            shard = shard_of(url_id(url), len(self._shards.searchers))
            phrases = self._phrases(parsed)
            local = self._shards.searchers[shard].search(query, 1, count=False).hits
            if not local:
                continue
            hit = (float(local[0][0]), (shard, local[0][1]))
            score = self._shards.rescore_one(query, hit, phrases)
            best = self._shards.best_score(base, phrases)
            item = self._order([(score, hit[1])], compiled, query)[0]
            c, w = item.candidate, self.weights
            text_score = score / max(best or score, score, 1e-9)
            num = self._shards.doc(hit[1]).get_first(Fields.NUM)
            raw_pr, raw_hr = self._raw_ranks(int(num or 0))
            return HitScores(
                bm25=score,
                text=text_score,
                pagerank=raw_pr,
                pagerank_scaled=c.pagerank,
                host_rank=raw_hr,
                host_rank_scaled=c.host_rank,
                blended=w.text * text_score + w.pagerank * c.pagerank + w.host_rank * c.host_rank,
                tier=item.tier,
            )
        return None

    def _order(
        self,
        hits: _Hits,
        compiled: CompiledQuery,
        base: tantivy.Query | None,
    ) -> Sequence[Ordered]:
        """The hits in result order: columns of numbers, no object per candidate (a query
        on common words has 1,000 of them and shows 30)."""
        if not hits:
            return order_columns(Columns([], [], [], None, []), compiled.terms, self.weights)
        addresses = [address for _, address in hits]
        found = self._shards.fast_field_values(Fields.NUM, addresses)
        groups = self._shards.fast_field_values(Fields.GROUP, addresses)
        in_title = self._title_matches(compiled, base, len(hits))
        page_rank, host_rank = self._pagerank, self._host_rank
        nums = _clamped(found, len(page_rank) - 1)
        columns = Columns(
            bm25=[score for score, _ in hits],
            pagerank=[page_rank[num] for num in nums],
            host_rank=[host_rank[num] for num in nums],
            title_terms=[in_title.get(_key(a), 0) for a in addresses] if in_title else None,
            group=_clamped(groups, None),
        )
        return order_columns(columns, compiled.terms, self.weights)

    def _title_matches(
        self, compiled: CompiledQuery, base: tantivy.Query | None, limit: int
    ) -> dict[_Key, int]:
        counts: dict[_Key, int] = {}
        if base is None or not self.weights.title_tiers:
            return counts
        for clause in compiled.title_clauses:
            query = tantivy.Query.boolean_query([(_MUST, base), (_MUST, clause)])
            for address in self._shards.matching(query, limit):
                counts[_key(address)] = counts.get(_key(address), 0) + 1
        return counts

    def hit(self, position: int, doc: StoredDoc, item: Ordered, snippet: Snippet) -> SearchHit:
        """The result ``item`` at ``position``; ``doc``: its stored document (a tantivy one,
        or a remote shard's answer), ``snippet``: what its generator made, maybe nothing."""
        url = str(doc.get_first(Fields.URL) or "")
        body = str(doc.get_first(Fields.BODY) or "")
        if not snippet.text:
            description = str(doc.get_first(Fields.DESCRIPTION) or "")
            snippet = Snippet((description or body)[:_SNIPPET_CHARS])
        crawled: Any = doc.get_first(Fields.CRAWLED)
        raw_pr, raw_hr = self._raw_ranks(int(doc.get_first(Fields.NUM) or 0))
        host = str(doc.get_first(Fields.HOST) or "")
        c = item.candidate
        return SearchHit(
            position=position,
            url=url,
            title=str(doc.get_first(Fields.TITLE) or ""),
            host=host,
            snippet=snippet,
            kind=str(doc.get_first(Fields.CONTENT_TYPE) or ""),
            lang=str(doc.get_first(Fields.LANG) or ""),
            crawled=crawled.isoformat() if crawled is not None else "",
            scores=HitScores(
                bm25=c.bm25,
                text=item.text,
                pagerank=raw_pr,
                pagerank_scaled=c.pagerank,
                host_rank=raw_hr,
                host_rank_scaled=c.host_rank,
                blended=item.score,
                tier=item.tier,
            ),
            **self._duplicates(c.group, url, doc.get_first(Fields.DOC_ID)),
        )

    def _duplicates(self, group: int, url: str, doc_id: object) -> dict[str, Any]:
        """The hit's duplicate counts and the first of its copies, as ``SearchHit`` fields."""
        others = max(0, self._group_sizes.get(group, 1) - 1)
        same = 0
        copies: tuple[Copy, ...] = ()
        if others:
            content = str(doc_id) if doc_id else None
            if content is not None:
                same = self._exact_copies.get((group, content), 1) - 1
            members = self.store.group_members(group, limit=min(others + 1, 100))
            listed = sorted(
                (Copy(m.url, m.title, content is not None and m.doc_id == content)
                 for m in members if m.url != url),
                key=lambda copy: not copy.exact,
            )  # fmt: skip
            copies = tuple(listed[:COPIES_LISTED])
        return {
            "duplicates": others,
            "group": group,
            "same_content": same,
            "near_duplicates": others - same,
            "copies": copies,
        }


class _Snippets:
    """A snippet generator for each shard, made when a hit of that shard is shown: tantivy
    highlights with the statistics of the searcher it is made from."""

    def __init__(self, shards: Shards, base: tantivy.Query | None, schema: tantivy.Schema) -> None:
        self._shards, self._base, self._schema = shards, base, schema
        self._made: dict[int, tantivy.SnippetGenerator] = {}

    def snippet(self, shard: int, doc: tantivy.Document) -> Snippet:
        """The query's words highlighted in ``doc``'s body, or nothing when they are not
        there (the hit then shows its description)."""
        generator = self._of(shard)
        if generator is None:
            return Snippet("")
        found = generator.snippet_from_doc(doc)
        if not found.fragment():
            return Snippet("")
        return Snippet.from_bytes_ranges(
            found.fragment(), [(r.start, r.end) for r in found.highlighted()]
        )

    def _of(self, shard: int) -> tantivy.SnippetGenerator | None:
        if self._base is None:
            return None
        if shard not in self._made:
            searcher = self._shards.searchers[shard]
            made = tantivy.SnippetGenerator.create(searcher, self._base, self._schema, Fields.BODY)
            made.set_max_num_chars(_SNIPPET_CHARS)
            self._made[shard] = made
        return self._made[shard]
