"""Search side, over HTTP: shards served by other ``gossamer serve`` processes, searched as one.

Data flow: ``gossamer serve DIR --shard URL ...`` -> **scatter** -> each shard server's JSON
(``/shard/K/search``, ``/freqs``, ``/docs``: ``web/shardapi.py`` over ``answer_*`` below)
-> hits re-scored with the statistics of all shards (``shards.Rescorer``) -> the blend over
the front's own document store and ranks -> results.

A shard server is an ordinary ``gossamer serve`` of a folder whose index holds the shard (a
sharded index serves each of its shards as ``/shard/K``; an unsharded one is shard 0). The
front's DIR needs the crawl-wide parts only: ``DIR/index/docs.db`` and the ranks (PageRank,
duplicate groups, page info), ``crawl.db`` and the WARC files (cached copies). A query costs
three rounds, each to every shard at once: the hits with their BM25 explanations, the
document frequencies of the terms they name (so the statistics are the collection's), and
the stored fields and snippets of the results shown. Page scores (``/info``'s) are not asked
of remote shards: ``scores_for`` answers None there.
"""

from __future__ import annotations

import json
import statistics
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import tantivy

from gossamer.index.schema import Fields
from gossamer.search.compile import CompiledQuery, compile_query
from gossamer.search.engine import PER_PAGE, SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.query import parse_query
from gossamer.search.ranking import Columns, RankingWeights, order_columns
from gossamer.search.results import HitScores, SearchHit, SearchPage, Snippet
from gossamer.search.shards import (
    Collection,
    Phrases,
    Rescorer,
    ShardShape,
    phrases_of,
    terms_in,
)

__all__ = [
    "RemoteEngine",
    "answer_docs",
    "answer_explain",
    "answer_freqs",
    "answer_search",
    "shard_base",
]

_PROBED = 5  # hits of each shard sent with their explanation (``shards``: the estimate)
_RESCORED = 40  # best hits of all shards by estimate explained in a second round
_SNIPPET_CHARS = 240
_MUST = tantivy.Occur.Must


def shard_base(url: str) -> str:
    """``http://h:p`` (shard 0 of that server) or ``http://h:p/shard/K``, without a slash."""
    url = url.rstrip("/")
    return url if "/shard/" in url else f"{url}/shard/0"


# -- the shard server's answers ---------------------------------------------------------------


def _compiled(engine: SearchEngine, body: dict[str, Any]) -> tuple[CompiledQuery, RankingWeights]:
    weights = RankingWeights(**body["weights"])
    parsed = parse_query(str(body["q"]))
    language = body.get("language") or None
    schema, analyzer = engine.schema_and_analyzer
    return compile_query(parsed, schema, analyzer, weights, language=language), weights


def _searcher(engine: SearchEngine, shard: int) -> tantivy.Searcher:
    searchers = engine.shard_set.searchers
    if not 0 <= shard < len(searchers):
        raise SearchError(f"no shard {shard} here: this index has {len(searchers)}")
    return searchers[shard]


def answer_search(engine: SearchEngine, shard: int, body: dict[str, Any]) -> dict[str, Any]:
    """A shard's hits for ``body`` (q, language, weights, loose, limit): scores, the fast
    fields the blend needs, title matches, and the first hits' explanations."""
    compiled, _ = _compiled(engine, body)
    searcher = _searcher(engine, shard)
    shape = engine.shard_set.collection.shapes[shard]
    answer: dict[str, Any] = {"shape": asdict(shape), "count": 0, "hits": []}
    query = compiled.loose if body.get("loose") else compiled.strict
    if compiled.empty or query is None:
        return answer
    limit = int(body["limit"])
    result = searcher.search(query, limit, count=True)
    hits = result.hits
    addresses = [address for _, address in hits]
    nums = searcher.fast_field_values(Fields.NUM, addresses)
    groups = searcher.fast_field_values(Fields.GROUP, addresses)
    titles: dict[tuple[int, int], int] = {}
    if RankingWeights(**body["weights"]).title_tiers:
        for clause in compiled.title_clauses:
            both = tantivy.Query.boolean_query([(_MUST, query), (_MUST, clause)])
            for _, a in searcher.search(both, limit, count=False).hits:
                titles[(a.segment_ord, a.doc)] = titles.get((a.segment_ord, a.doc), 0) + 1
    rows = []
    for i, (score, a) in enumerate(hits):
        probed = int(body.get("probed", _PROBED))
        tree = json.loads(query.explain(searcher, a).to_json()) if i < probed else None
        key = (a.segment_ord, a.doc)
        rows.append([float(score), key[0], key[1], int(nums[i] or 0), int(groups[i] or 0),
                     titles.get(key, 0), tree])  # fmt: skip
    answer["count"] = getattr(result, "count", None) or len(hits)
    answer["hits"] = rows
    return answer


def answer_explain(engine: SearchEngine, shard: int, body: dict[str, Any]) -> dict[str, Any]:
    """The explanations of the hits at ``body["addresses"]`` for the query of ``body``."""
    compiled, _ = _compiled(engine, body)
    searcher = _searcher(engine, shard)
    query = compiled.loose if body.get("loose") else compiled.strict
    if query is None:
        raise SearchError("this query has no loose form")
    trees = [
        json.loads(query.explain(searcher, tantivy.DocAddress(int(seg), int(doc))).to_json())
        for seg, doc in body["addresses"]
    ]
    return {"trees": trees}


def answer_freqs(engine: SearchEngine, shard: int, body: dict[str, Any]) -> dict[str, Any]:
    """The shard's document frequency of each ``[field, term]`` in ``body["pairs"]``."""
    searcher = _searcher(engine, shard)
    return {"freqs": [int(searcher.doc_freq(str(f), str(t))) for f, t in body["pairs"]]}


def answer_docs(engine: SearchEngine, shard: int, body: dict[str, Any]) -> dict[str, Any]:
    """The stored fields of the hits at ``body["addresses"]``, each with its snippet and
    whether the query matches its own text (not only the words of links to it)."""
    compiled, _ = _compiled(engine, body)
    searcher = _searcher(engine, shard)
    schema, _ = engine.schema_and_analyzer
    loose = bool(body.get("loose"))
    base = compiled.loose if loose else compiled.strict
    own = compiled.own_loose if loose else compiled.own_strict
    generator = None
    if base is not None and not compiled.empty:
        generator = tantivy.SnippetGenerator.create(searcher, base, schema, Fields.BODY)
        generator.set_max_num_chars(_SNIPPET_CHARS)
    docs: list[dict[str, Any]] = []
    for segment, number in body["addresses"]:
        doc = searcher.doc(tantivy.DocAddress(int(segment), int(number)))
        fields = {k: [str(v) for v in values] for k, values in doc.to_dict().items()}
        crawled = doc.get_first(Fields.CRAWLED)
        fields[Fields.CRAWLED] = [crawled.isoformat()] if crawled is not None else []
        snippet: dict[str, Any] = {"text": "", "ranges": []}
        if generator is not None:
            found = generator.snippet_from_doc(doc)
            ranges = [[r.start, r.end] for r in found.highlighted()]
            snippet = {"text": found.fragment(), "ranges": ranges}
        url = str(doc.get_first(Fields.URL) or "")
        docs.append({"fields": fields, "snippet": snippet, "own": _own(searcher, schema, own, url)})
    return {"docs": docs}


def _own(
    searcher: tantivy.Searcher, schema: tantivy.Schema, own: tantivy.Query | None, url: str
) -> bool:
    if own is None:
        return True
    only = tantivy.Query.term_query(schema, Fields.URL, url)
    query = tantivy.Query.boolean_query([(_MUST, own), (_MUST, only)])
    return bool(searcher.search(query, 1, count=False).hits)


# -- the front -------------------------------------------------------------------------------


class _Remote:
    """One shard server, asked in JSON over HTTP."""

    def __init__(self, url: str, timeout: float) -> None:
        self.base = shard_base(url)
        self._timeout = timeout

    def post(self, what: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base}/{what}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise SearchError(f"shard {self.base} did not answer: {exc}") from exc
        if "error" in answer:
            raise SearchError(f"shard {self.base}: {answer['error']}")
        return answer


class _RemoteDoc:
    """A remote shard's stored document, read as the engine reads a tantivy one."""

    def __init__(self, fields: dict[str, list[str]]) -> None:
        self._fields = fields

    def get_first(self, field_name: str) -> Any:
        values = self._fields.get(field_name)
        value = values[0] if values else None
        if field_name == Fields.CRAWLED and value:
            return datetime.fromisoformat(value)
        if field_name in (Fields.NUM, Fields.GROUP) and value is not None:
            return int(value)
        return value


@dataclass(frozen=True, slots=True)
class _Gathered:
    score: float
    shard: int
    address: tuple[int, int]
    num: int
    group: int
    title_terms: int


class RemoteEngine(SearchEngine):
    """A ``SearchEngine`` whose shards are shard servers; the crawl-wide parts (document
    store, ranks, duplicates) are DIR's own, opened as a front (``front_only``)."""

    def __init__(
        self,
        crawl_dir: Path,
        urls: Sequence[str],
        weights: RankingWeights | None = None,
        timeout: float = 30.0,
        *,
        probed: int = _PROBED,
        rescored: int = _RESCORED,
    ) -> None:
        """``probed``: hits of each shard explained at once; ``rescored``: best hits of all
        shards explained next (see ``shards`` for both)."""
        if not urls:
            raise SearchError("give at least one shard server")
        super().__init__(crawl_dir, weights, front_only=True)
        self._remotes = [_Remote(url, timeout) for url in urls]
        self._pool = ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="scatter")
        self._documents = 0
        self._probed, self._rescored = probed, rescored

    @property
    def documents(self) -> int:
        return self._documents or self.store.count()

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        super().close()

    def scores_for(self, url: str, text: str, language: str | None = None) -> HitScores | None:
        return None  # not asked of remote shards (see the module docstring)

    def _all(self, what: str, bodies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        futures = [
            self._pool.submit(remote.post, what, body)
            for remote, body in zip(self._remotes, bodies, strict=True)
        ]
        return [future.result() for future in futures]

    def _request(self, text: str, language: str | None, loose: bool) -> dict[str, Any]:
        return {"q": text, "language": language or "", "weights": asdict(self.weights),
                "loose": loose, "limit": self.weights.candidates}  # fmt: skip

    def _frequencies(
        self, trees: list[dict[str, Any]], phrases: Phrases, table: dict[tuple[str, str], list[int]]
    ) -> None:
        """Add to ``table`` every shard's frequency of the terms ``trees`` name."""
        pairs: set[tuple[str, str]] = set()
        for tree in trees:
            pairs |= terms_in(tree, phrases)
        missing = sorted(pairs - table.keys())
        if missing:
            answers = self._all("freqs", [{"pairs": missing}] * len(self._remotes))
            for i, pair in enumerate(missing):
                table[pair] = [int(a["freqs"][i]) for a in answers]

    def _gather(
        self, text: str, language: str | None, loose: bool, phrases: Phrases
    ) -> tuple[list[_Gathered], int]:
        """Round 1: each shard's hits, its first ``probed`` explained, re-scored with the
        collection's statistics and estimating the others; round 2: the best ``rescored``
        by estimate plus the PageRank prior explained and re-scored (as ``Shards.search``)."""
        request = self._request(text, language, loose)
        request["probed"] = self._probed
        answers = self._all("search", [request] * len(self._remotes))
        shapes = [ShardShape(a["shape"]["docs"], a["shape"]["avgdl"]) for a in answers]
        self._documents = int(sum(shape.docs for shape in shapes))
        table: dict[tuple[str, str], list[int]] = {}
        trees = [row[6] for a in answers for row in a["hits"] if row[6] is not None]
        self._frequencies(trees, phrases, table)
        collection = Collection(shapes, lambda f, t: table.get((f, t), [0] * len(shapes)))
        rescorers = [Rescorer(collection, k, phrases) for k in range(len(answers))]
        gathered: list[_Gathered] = []
        exact: list[bool] = []
        for k, answer in enumerate(answers):
            ratios = []
            for score, segment, number, num, group, title_terms, tree in answer["hits"]:
                if tree is not None:
                    new = rescorers[k].value(tree)
                    ratios.append(new / score if score > 0 else 1.0)
                else:
                    new = score * (statistics.median(ratios) if ratios else 1.0)
                gathered.append(_Gathered(new, k, (segment, number), num, group, title_terms))
                exact.append(tree is not None)
        self._explain_best(
            gathered, exact, request=request, phrases=phrases, table=table, rescorers=rescorers
        )
        gathered.sort(key=lambda g: (-g.score, g.num))  # ties as ``Shards.search`` breaks them
        return gathered[: self.weights.candidates], sum(int(a["count"]) for a in answers)

    def _explain_best(
        self,
        gathered: list[_Gathered],
        exact: list[bool],
        *,
        request: dict[str, Any],
        phrases: Phrases,
        table: dict[tuple[str, str], list[int]],
        rescorers: list[Rescorer],
    ) -> None:
        """Re-score in place the best ``rescored`` estimates not explained yet."""
        top = max((g.score for g in gathered), default=0.0) or 1.0
        order = sorted(
            range(len(gathered)),
            key=lambda i: -(gathered[i].score / top + self._prior(gathered[i].num)),
        )
        wanted: dict[int, list[int]] = {}
        for i in order[: self._rescored]:
            if not exact[i]:
                wanted.setdefault(gathered[i].shard, []).append(i)
        if not wanted:
            return
        futures = {
            k: self._pool.submit(
                self._remotes[k].post,
                "explain",
                {**request, "addresses": [list(gathered[i].address) for i in positions]},
            )
            for k, positions in wanted.items()
        }
        trees = {k: future.result()["trees"] for k, future in futures.items()}
        self._frequencies([t for found in trees.values() for t in found], phrases, table)
        for k, positions in wanted.items():
            for i, tree in zip(positions, trees[k], strict=True):
                gathered[i] = replace(gathered[i], score=rescorers[k].value(tree))

    def search(
        self, text: str, *, page: int = 1, language: str | None = None, per_page: int = PER_PAGE
    ) -> SearchPage:
        started = time.perf_counter()
        parsed = parse_query(text)
        compiled = compile_query(
            parsed, self._schema, self._analyzer, self.weights, language=language
        )
        phrases = phrases_of(parsed, self._analyzer, self.weights)
        hits: list[_Gathered] = []
        matched, count, loose = "none", 0, False
        if not compiled.empty:
            matched = "all"
            hits, count = self._gather(text, language, False, phrases)
            if not hits and compiled.loose is not None:
                matched, loose = "any", True
                hits, count = self._gather(text, language, True, phrases)
            if not hits:
                matched = "none"
        last = len(self._pagerank) - 1
        nums = [min(max(h.num, 0), last) if last >= 0 else 0 for h in hits]
        columns = Columns(
            bm25=[h.score for h in hits],
            pagerank=[self._pagerank[n] for n in nums] if last >= 0 else [0.0] * len(hits),
            host_rank=[self._host_rank[n] for n in nums] if last >= 0 else [0.0] * len(hits),
            title_terms=[h.title_terms for h in hits] if self.weights.title_tiers else None,
            group=[h.group for h in hits],
        )
        ordered = order_columns(columns, compiled.terms, self.weights)
        page = min(page, max(1, -(-len(ordered) // per_page)))
        start = (page - 1) * per_page
        shown = ordered[start : start + per_page]
        docs = self._docs(text, language, loose, [hits[item.candidate.key] for item in shown])
        page_hits = []
        for i, (item, answer) in enumerate(zip(shown, docs, strict=True)):
            if answer is None:
                continue
            snippet = Snippet("")
            if answer["snippet"]["text"]:
                ranges = [(a, b) for a, b in answer["snippet"]["ranges"]]
                snippet = Snippet.from_bytes_ranges(answer["snippet"]["text"], ranges)
            hit = self.hit(start + i + 1, _RemoteDoc(answer["fields"]), item, snippet)
            page_hits.append(hit if answer["own"] else _via_links(hit))
        return SearchPage(
            query=text,
            understood=str(parsed),
            page=page,
            per_page=per_page,
            matches=count,
            results=len(ordered),
            hits=tuple(page_hits),
            matched=matched,
            language=language,
            pagerank_used=self.pagerank_used,
            seconds=time.perf_counter() - started,
        )

    def ranked_urls(
        self, text: str, *, limit: int = PER_PAGE, language: str | None = None
    ) -> list[str]:
        return [hit.url for hit in self.search(text, language=language, per_page=limit).hits]

    def _docs(
        self, text: str, language: str | None, loose: bool, hits: list[_Gathered]
    ) -> list[dict[str, Any] | None]:
        by_shard: dict[int, list[int]] = {}
        for i, hit in enumerate(hits):
            by_shard.setdefault(hit.shard, []).append(i)
        found: list[dict[str, Any] | None] = [None] * len(hits)
        futures = {}
        for k, positions in by_shard.items():
            body = self._request(text, language, loose)
            body["addresses"] = [list(hits[i].address) for i in positions]
            futures[k] = self._pool.submit(self._remotes[k].post, "docs", body)
        for k, positions in by_shard.items():
            for i, doc in zip(positions, futures[k].result()["docs"], strict=True):
                found[i] = doc
        return found


def _via_links(hit: SearchHit) -> SearchHit:
    return replace(hit, via_links=True)
