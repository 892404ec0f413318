"""Search side, meaning: the page vectors and the model, and the hybrid ranking's order.

Data flow: engine (the blend's ordered hits) -> **semantic** (the query embedded, the
nearest page vectors, the fusion of ``hybrid``) -> engine (result pages).

The vectors (``index.vectors``) and the model (``index.embed``) are loaded when the first
hybrid query comes (numpy and the model: about half a second), so every other ranking
imports neither. The nearest pages are kept only if tantivy holds them and the query's
filters (exclusions, ``site:``, language) let them through, so a page found by its meaning
obeys ``-word`` as one found by its words does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, overload

import tantivy

from gossamer.index.schema import Fields
from gossamer.search.compile import CompiledQuery
from gossamer.search.errors import SearchError
from gossamer.search.hybrid import fuse
from gossamer.search.query import ParsedQuery
from gossamer.search.ranking import Candidate, Ordered, Ranking, RankingWeights

if TYPE_CHECKING:
    from gossamer.index.embed import Embedder
    from gossamer.index.vectors import Vectors

__all__ = ["Semantic", "SemanticInput", "SemanticOrder"]

_Hits = list[tuple[float, tantivy.DocAddress]]


@dataclass(frozen=True, slots=True, eq=False)
class SemanticInput:
    """What the blend made of a query: the fusion's input."""

    parsed: ParsedQuery
    compiled: CompiledQuery
    hits: Sequence[tuple[float, tantivy.DocAddress]]
    ordered: Ranking
    weights: RankingWeights


@dataclass(frozen=True, slots=True, eq=False)
class SemanticOrder:
    """The fused order: the hits (the blend's, then pages found by meaning alone), the
    order over them, and each fused hit's cosine by its key."""

    hits: _Hits
    ordered: Sequence[Ordered]
    similarity: dict[int, float]


class _Joined(Sequence[Ordered]):
    """The fused head, then the rest of the blend's order (built only where read: a page
    shows 30 of up to 1,000)."""

    __slots__ = ("_head", "_tail")

    def __init__(self, head: list[Ordered], tail: Ranking) -> None:
        self._head, self._tail = head, tail

    def __len__(self) -> int:
        return len(self._head) + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Ordered: ...

    @overload
    def __getitem__(self, index: slice) -> list[Ordered]: ...

    def __getitem__(self, index: int | slice) -> Ordered | list[Ordered]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        head = len(self._head)
        return self._head[index] if index < head else self._tail[index - head]


def _ints(values: Sequence[int | float | bool | None]) -> list[int]:
    return [int(v or 0) for v in values]


def query_text(parsed: ParsedQuery) -> str:
    """The words and phrases a user asked for, as one text to embed (no exclusions)."""
    return " ".join(
        alternative.text
        for term in parsed.include
        for alternative in (term.alternatives or (term,))
    )


class Semantic:
    """One index's page vectors and the model that embeds its queries."""

    def __init__(self, vectors: Vectors, embedder: Embedder) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self._where: dict[int, tantivy.DocAddress] | None = None  # num -> address, all docs

    @classmethod
    def open(cls, crawl_dir: Path) -> Semantic:
        from gossamer.index.embed import Embedder  # noqa: PLC0415 - the semantic extra
        from gossamer.index.vectors import Vectors  # noqa: PLC0415 - numpy: hybrid only

        vectors = Vectors.open(crawl_dir)
        if vectors is None:
            raise SearchError(
                f"{crawl_dir} has no page vectors for --ranking hybrid: run"
                f" 'gossamer index --embeddings {crawl_dir}'"
            )
        return cls(vectors, Embedder())

    def fuse(
        self,
        searcher: tantivy.Searcher,
        schema: tantivy.Schema,
        given: SemanticInput,
        ranks: tuple[Sequence[float], Sequence[float]],
    ) -> SemanticOrder | None:
        """The blend's first pages fused with the nearest ones; None when the query has
        no words to embed (``site:`` alone)."""
        text = query_text(given.parsed)
        if not text.strip():
            return None
        query = self.embedder.embed([text])[0]
        w = given.weights
        depth = w.semantic_depth
        near = self.vectors.nearest(query, depth)
        addresses, group_of = self._allowed(searcher, schema, given.compiled, near)
        vector_side = [(num, group_of[num], sim) for num, sim in near if num in addresses]
        top = list(given.ordered[:depth])
        hits = list(given.hits)
        top_nums = _ints(
            searcher.fast_field_values(Fields.NUM, [hits[o.candidate.key][1] for o in top])
        )
        blend_side = [(n, o.candidate.group, o.score) for n, o in zip(top_nums, top, strict=True)]
        union = list(dict.fromkeys([*top_nums, *(num for num, _, _ in vector_side)]))
        similarity = dict(zip(union, self.vectors.similarity(query, union), strict=True))
        fused = fuse(
            blend_side, vector_side, similarity, fusion=w.fusion, semantic=w.semantic, rrf_k=w.rrf_k
        )
        by_num = dict(zip(top_nums, top, strict=True))
        pagerank, host_rank = ranks
        ordered: list[Ordered] = []
        similar: dict[int, float] = {}
        for item in fused:
            known = by_num.get(item.num)
            if known is None:  # found by its meaning alone: a hit of its own
                hits.append((0.0, addresses[item.num]))
                inside = 0 <= item.num < len(pagerank)
                candidate = Candidate(
                    key=len(hits) - 1,
                    bm25=0.0,
                    pagerank=pagerank[item.num] if inside else 0.0,
                    host_rank=host_rank[item.num] if inside else 0.0,
                    title_terms=0,
                    group=item.group,
                )
                known = Ordered(candidate, 0, 0.0, item.score)
            else:
                known = Ordered(known.candidate, known.tier, known.text, item.score)
            similar[known.candidate.key] = item.similarity
            ordered.append(known)
        tail = given.ordered.without_groups({item.group for item in fused}, depth)
        return SemanticOrder(hits, _Joined(ordered, tail), similar)

    def _allowed(
        self,
        searcher: tantivy.Searcher,
        schema: tantivy.Schema,
        compiled: CompiledQuery,
        near: list[tuple[int, float]],
    ) -> tuple[dict[int, tantivy.DocAddress], dict[int, int]]:
        """Of the nearest pages, those tantivy holds that pass the query's filters: their
        addresses and groups by number."""
        if not near:
            return {}, {}
        if compiled.filters:
            these = tantivy.Query.term_set_query(schema, Fields.NUM, [num for num, _ in near])
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, these), *compiled.filters])
            hits = searcher.search(query, len(near), count=False).hits
            found = [address for _, address in hits]
        else:  # most queries: no filter, so no query either, only a look-up
            where = self._addresses(searcher)
            found = [where[num] for num, _ in near if num in where]
        nums = _ints(searcher.fast_field_values(Fields.NUM, found))
        groups = _ints(searcher.fast_field_values(Fields.GROUP, found))
        return dict(zip(nums, found, strict=True)), dict(zip(nums, groups, strict=True))

    def _addresses(self, searcher: tantivy.Searcher) -> dict[int, tantivy.DocAddress]:
        """Every document's address by its number, read once (a fast field of each)."""
        if self._where is None:
            total = int(searcher.num_docs)
            hits = searcher.search(tantivy.Query.all_query(), max(total, 1), count=False).hits
            found = [address for _, address in hits]
            nums = _ints(searcher.fast_field_values(Fields.NUM, found))
            self._where = dict(zip(nums, found, strict=True))
        return self._where
