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
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import tantivy

from gossamer.index.schema import DOCSTORE_FILE, INDEX_DIR, Fields, open_index
from gossamer.search.compile import CompiledQuery, compile_query
from gossamer.search.docranks import doc_ranks
from gossamer.search.errors import SearchError
from gossamer.search.query import ParsedQuery, parse_query
from gossamer.search.ranking import Columns, Ordered, Ranking, RankingWeights, order_columns
from gossamer.search.results import Copy, HitScores, SearchHit, SearchPage, Snippet
from gossamer.search.semantic import Semantic, SemanticInput
from gossamer.store.docstore import DocStore

if TYPE_CHECKING:
    from gossamer.rank.export import Ranks

__all__ = ["COPIES_LISTED", "PER_PAGE", "SearchEngine"]

PER_PAGE = 30
MAX_PAGE = 1000
COPIES_LISTED = 10  # duplicates named with each hit; the page-info view lists up to 100
_SNIPPET_CHARS = 240
_MUST = tantivy.Occur.Must
_Key = tuple[int, int]  # (segment, doc) of a tantivy DocAddress, which is not hashable


def _key(address: tantivy.DocAddress) -> _Key:
    return (address.segment_ord, address.doc)


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
    hits: list[tuple[float, tantivy.DocAddress]]
    ordered: Sequence[Ordered]
    base: tantivy.Query | None
    matched: str  # all, any or none of the query's words; "meaning": none, but hybrid found
    count: int
    own: tantivy.Query | None = None  # ``base`` in the pages' own text (no link words)
    similarity: dict[int, float] = field(default_factory=dict)  # by hit key (hybrid)


class SearchEngine:
    """Searches one crawl folder; open it once and ask many queries."""

    def __init__(self, crawl_dir: Path, weights: RankingWeights | None = None) -> None:
        self.crawl_dir = crawl_dir
        self.weights = weights or RankingWeights()
        self.weights.validate()
        handle = open_index(crawl_dir, create=False)
        self._schema = handle.schema
        self._analyzer = handle.analyzer
        self._searcher = handle.index.searcher()
        self.store = DocStore(crawl_dir / INDEX_DIR / DOCSTORE_FILE, readonly=True)
        self._group_sizes = self.store.group_sizes()
        self._exact_copies = self.store.exact_copies()
        self._doc_ranks = doc_ranks(crawl_dir, self.store)
        self._pagerank, self._host_rank = self._doc_ranks.pagerank, self._doc_ranks.host_rank
        self._ranks: Ranks | None = None
        self._semantic: Semantic | None = None  # the hybrid ranking's, on its first query

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
        return int(self._searcher.num_docs)

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
        snippets = (
            tantivy.SnippetGenerator.create(self._searcher, base, self._schema, Fields.BODY)
            if shown and base is not None
            else None
        )
        if snippets is not None:
            snippets.set_max_num_chars(_SNIPPET_CHARS)
        addresses = [hits[item.candidate.key][1] for item in shown]
        linked = self._via_links(found.own, addresses)
        page_hits = tuple(
            self._with_similarity(
                replace(self._hit(start + i + 1, address, item, snippets), via_links=i in linked),
                found.similarity.get(item.candidate.key),
            )
            for i, (address, item) in enumerate(zip(addresses, shown, strict=True))
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
            doc = self._searcher.doc(found.hits[item.candidate.key][1])
            urls.append(str(doc.get_first(Fields.URL) or ""))
        return urls

    def _ranked(self, text: str, language: str | None) -> _Ranked:
        """The query parsed and compiled, its hits (all its words, else any), in order."""
        parsed = parse_query(text)
        compiled = compile_query(
            parsed, self._schema, self._analyzer, self.weights, language=language
        )
        hits: list[tuple[float, tantivy.DocAddress]] = []
        matched, count = "none", 0
        if not compiled.empty:
            matched = "all"
            hits, count = self._run(compiled.strict)
            if not hits and compiled.loose is not None:
                matched = "any"
                hits, count = self._run(compiled.loose)
            if not hits:
                matched = "none"
        base = compiled.strict if matched == "all" else compiled.loose
        own = compiled.own_strict if matched == "all" else compiled.own_loose
        ordered = self._order(hits, compiled, base)
        if self.weights.hybrid:
            return self._fused(_Ranked(parsed, hits, ordered, base, matched, count, own), compiled)
        return _Ranked(parsed, hits, ordered, base, matched, count, own)

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
        fused = self._semantic.fuse(
            self._searcher,
            self._schema,
            SemanticInput(found.parsed, compiled, found.hits, ordered, self.weights),
            (self._pagerank, self._host_rank),
        )
        if fused is None:
            return found
        matched = "meaning" if found.matched == "none" and fused.ordered else found.matched
        return replace(
            found,
            hits=fused.hits,
            ordered=fused.ordered,
            matched=matched,
            similarity=fused.similarity,
        )

    def _via_links(
        self, own: tantivy.Query | None, addresses: list[tantivy.DocAddress]
    ) -> set[int]:
        """The positions in ``addresses`` of pages the query found only through the words of
        links pointing at them: their own text does not match it."""
        if own is None or not addresses:
            return set()
        urls = [str(self._searcher.doc(a).get_first(Fields.URL) or "") for a in addresses]
        these = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, Fields.URL, u))
             for u in urls]
        )  # fmt: skip
        query = tantivy.Query.boolean_query([(_MUST, own), (_MUST, these)])
        matched = self._searcher.search(query, len(addresses), count=False).hits
        kept = {_key(address) for _, address in matched}
        return {i for i, address in enumerate(addresses) if _key(address) not in kept}

    def scores_for(self, url: str, text: str, language: str | None = None) -> HitScores | None:
        """How ``url`` scores for the query ``text``; None when it does not match."""
        compiled = compile_query(
            parse_query(text), self._schema, self._analyzer, self.weights, language=language
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
            found = self._searcher.search(query, 1, count=False).hits
            if not found:
                continue
            best = self._searcher.search(base, 1, count=False).hits
            score = float(found[0][0])
            item = self._order([(score, found[0][1])], compiled, query)[0]
            c, w = item.candidate, self.weights
            text_score = score / max(float(best[0][0]) if best else score, score, 1e-9)
            num = self._searcher.doc(found[0][1]).get_first(Fields.NUM)
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

    def _run(self, query: tantivy.Query) -> tuple[list[tuple[float, tantivy.DocAddress]], int]:
        result = self._searcher.search(query, self.weights.candidates, count=True)
        count = cast(int | None, getattr(result, "count", None))
        hits = cast(list[tuple[float, tantivy.DocAddress]], result.hits)  # scores are floats
        return hits, count if count is not None else len(hits)

    def _order(
        self,
        hits: list[tuple[float, tantivy.DocAddress]],
        compiled: CompiledQuery,
        base: tantivy.Query | None,
    ) -> Sequence[Ordered]:
        """The hits in result order: columns of numbers, no object per candidate (a query
        on common words has 1,000 of them and shows 30)."""
        if not hits:
            return order_columns(Columns([], [], [], None, []), compiled.terms, self.weights)
        addresses = [address for _, address in hits]
        found = self._searcher.fast_field_values(Fields.NUM, addresses)
        groups = self._searcher.fast_field_values(Fields.GROUP, addresses)
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
            for _, address in self._searcher.search(query, limit, count=False).hits:
                counts[_key(address)] = counts.get(_key(address), 0) + 1
        return counts

    def _hit(
        self,
        position: int,
        address: tantivy.DocAddress,
        item: Ordered,
        snippets: tantivy.SnippetGenerator | None,
    ) -> SearchHit:
        doc = self._searcher.doc(address)
        url = str(doc.get_first(Fields.URL) or "")
        body = str(doc.get_first(Fields.BODY) or "")
        snippet = Snippet("")
        if snippets is not None:
            found = snippets.snippet_from_doc(doc)
            ranges = [(r.start, r.end) for r in found.highlighted()]
            if found.fragment():
                snippet = Snippet.from_bytes_ranges(found.fragment(), ranges)
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
