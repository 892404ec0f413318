"""Ranking quality on real documentation sites, tuned on some and reported on the others.

Set-up, all on this machine (``quality_corpora``): Debian's ``sqlite3-doc``,
``python3.11-doc`` and ``git-doc`` are each served on 127.0.0.1, crawled by
``gossamer crawl``, indexed and ranked. Each has judged queries in ``benchmarks/queries/``
(written as people type them; binary relevance, judged by reading the pages).

What it reports, per corpus: MRR@10 (reciprocal rank of the first answer), nDCG@10 and
top-1 (queries whose first result answers them), for

* the presets ``bm25`` and ``blend`` (the default) of ``RankingWeights``;
* a small grid search of the blend's weights on one corpus (the *tuning* corpus), and the
  weights it picks, measured on the other (the *held-out* corpus), both ways round: what
  a tuning on one site is worth on a site it never saw;
* an ablation of the default: each component taken out (or, for title tiers, put in).

The shipped ``blend`` preset is the grid's choice on the SQLite corpus, so its Python
figures are held-out figures, and its SQLite ones are not. The git corpus is never tuned on
(``Corpus.tunable``): its judgments were written before any ranking ran on it, so all its
figures are held-out figures. ``--corpora`` measures a chosen few (the grid runs only when
two or more are chosen, and never with ``--no-tuning``).

    apt-get install sqlite3-doc python3.11-doc git-doc   # once
    python benchmarks/search_quality.py --out /tmp/quality            # crawls all three
    python benchmarks/search_quality.py --out /tmp/quality --reuse    # reuses the crawls
    python benchmarks/search_quality.py --out /tmp/q --corpora git --no-tuning  # git only
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from quality_corpora import CORPORA, Corpus, prepare

from gossamer.search import RankingWeights, SearchEngine
from gossamer.search.ranking import RANKINGS

CUTOFF = 10
BLEND = RANKINGS["blend"]

ABLATION: dict[str, RankingWeights] = {
    "BM25 alone (`--ranking bm25`)": RANKINGS["bm25"],
    "blend (default)": BLEND,
    "blend without anchor text": replace(BLEND, anchor_boost=0.0),
    "blend without proximity": replace(BLEND, proximity_boost=0.0),
    "blend without PageRank prior": replace(BLEND, pagerank=0.0, host_rank=0.0),
    "blend with title tiers": replace(BLEND, title_tiers=True),
    "blend with flat field boosts": replace(
        BLEND, title_boost=1.0, headings_boost=1.0, description_boost=1.0
    ),
}

Judged = dict[str, tuple[str, ...]]  # query -> paths of the pages that answer it

GRID: dict[str, tuple[float | bool, ...]] = {
    "anchor_boost": (0.0, 0.5, 1.0, 2.0),
    "proximity_boost": (0.0, 0.5, 1.0, 2.0),
    "proximity_slop": (0, 3),
    "pagerank": (0.0, 0.1, 0.3),
    "title_tiers": (False, True),
}


@dataclass(frozen=True, slots=True)
class Score:
    mrr: float
    ndcg: float
    top1: int
    queries: int

    @property
    def key(self) -> float:
        return self.mrr + self.ndcg

    def row(self, name: str) -> str:
        return f"| {name} | {self.mrr:.3f} | {self.ndcg:.3f} | {self.top1} of {self.queries} |"


def judge(engine: SearchEngine, judged: Judged) -> tuple[Score, list[str]]:
    reciprocal, gains, misses = [], [], []
    for query, answers in judged.items():
        hits = engine.search(query, per_page=CUTOFF).hits
        paths = [hit.url.split("/", 3)[3] for hit in hits]
        relevant = [path in answers for path in paths]
        first = next((i for i, ok in enumerate(relevant) if ok), None)
        reciprocal.append(0.0 if first is None else 1.0 / (first + 1))
        dcg = sum(1.0 / math.log2(i + 2) for i, ok in enumerate(relevant) if ok)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(answers), CUTOFF)))
        gains.append(dcg / ideal)
        if first != 0:
            where = first + 1 if first is not None else "-"
            misses.append(f"{query!r}: first answer at {where}, got {paths[:3]}")
    n = len(judged)
    top1 = sum(1 for r in reciprocal if r == 1.0)
    return Score(sum(reciprocal) / n, sum(gains) / n, top1, n), misses


def measure(
    engine: SearchEngine, judged: Judged, weights: RankingWeights
) -> tuple[Score, list[str]]:
    engine.weights = weights  # the engine reads its weights per query
    return judge(engine, judged)


def tune(engine: SearchEngine, judged: Judged) -> RankingWeights:
    """The grid point with the best MRR@10 + nDCG@10 on this corpus (first best wins)."""
    best, best_score = BLEND, -1.0
    names = list(GRID)
    for values in itertools.product(*GRID.values()):
        weights = replace(BLEND, **dict(zip(names, values, strict=True)))  # type: ignore[arg-type]
        score, _ = measure(engine, judged, weights)
        if score.key > best_score + 1e-9:
            best, best_score = weights, score.key
    return best


def _knobs(weights: RankingWeights) -> str:
    return ", ".join(f"{name}={getattr(weights, name)}" for name in GRID)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/gossamer-quality"))
    parser.add_argument("--reuse", action="store_true", help="reuse crawls an earlier run made")
    parser.add_argument("--no-tuning", action="store_true", help="skip the grid search")
    parser.add_argument("--verbose", action="store_true", help="list queries not answered first")
    parser.add_argument(
        "--corpora",
        type=_corpus_names,
        default=tuple(CORPORA),
        metavar="NAME,...",
        help=f"the corpora to crawl and measure, comma-separated (default: {','.join(CORPORA)})",
    )
    args = parser.parse_args()
    chosen = {name: CORPORA[name] for name in args.corpora}
    folders = {name: prepare(c, args.out, reuse=args.reuse) for name, c in chosen.items()}
    engines = {name: SearchEngine(folder) for name, folder in folders.items()}
    judged = {name: corpus.judgments() for name, corpus in chosen.items()}
    try:
        for name, corpus in chosen.items():
            _ablation(corpus, engines[name], judged[name], args.verbose)
        if not args.no_tuning and len(chosen) > 1:
            _held_out(engines, judged)
    finally:
        for engine in engines.values():
            engine.close()


def _corpus_names(text: str) -> tuple[str, ...]:
    """``--corpora``: known corpus names, comma-separated, each once, in the order given."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in CORPORA]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown corpus {', '.join(unknown) or '(none given)'};"
            f" choose from {', '.join(CORPORA)}"
        )
    return names


def _ablation(corpus: Corpus, engine: SearchEngine, judged: Judged, verbose: bool) -> None:
    print(f"\n{corpus.name}: {len(judged)} queries, {engine.documents} documents, cut-off {CUTOFF}")
    print("| ranking | MRR@10 | nDCG@10 | top-1 |\n| --- | --- | --- | --- |")
    for label, weights in ABLATION.items():
        score, misses = measure(engine, judged, weights)
        print(score.row(label))
        if verbose and weights is BLEND:
            print("\n".join(f"    {miss}" for miss in misses))


def _held_out(engines: dict[str, SearchEngine], judged: dict[str, Judged]) -> None:
    """Tune on each tunable corpus, then measure the weights on every other corpus."""
    tuned = {name: tune(engines[name], judged[name]) for name in engines if CORPORA[name].tunable}
    for name, weights in tuned.items():
        print(f"\ntuned on {name}: {_knobs(weights)}")
    print("\n| tuned on | measured on | ranking | MRR@10 | nDCG@10 | top-1 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for source, target in itertools.product(tuned, engines):
        if source == target:
            continue
        for label, weights in (("BM25 alone", RANKINGS["bm25"]), ("tuned blend", tuned[source])):
            score, _ = measure(engines[target], judged[target], weights)
            print(f"| {source} | {target} (held out) |" + score.row(label)[1:])


if __name__ == "__main__":
    main()
