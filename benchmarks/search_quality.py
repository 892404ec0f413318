"""Ranking quality on real documentation sites, tuned on one and reported on the others.

Set-up, all on this machine (``quality_corpora``): Debian's ``sqlite3-doc``,
``python3.11-doc``, ``git-doc`` and ``postgresql-doc-15`` are each served on 127.0.0.1, crawled by
``gossamer crawl``, indexed and ranked. Each has judged queries in ``benchmarks/queries/``
(written as people type them; binary relevance, judged by reading the pages).

What it reports, per corpus: MRR@10 (reciprocal rank of the first answer), nDCG@10 and
top-1 (queries whose first result answers them), for

* a grid search of the blend's weights on each tunable corpus, and the weights it picks
  measured on every other corpus against ``--ranking bm25``;
* an ablation of the candidate default (the SQLite pick; without tuning, the shipped
  ``blend``): each component taken out or swapped, on every corpus.

Protocol, fixed on 2026-11-23 before any figure of this grid was seen (issue 16, second
round), and not to be changed after the held-out figures are seen:

* The grid (``GRID_*``) is field profile (``FIELD_PROFILES``: title / headings /
  description boosts) x anchor boost x proximity boost x PageRank weight x title tiers,
  360 points, all at proximity slop 0 and host rank 0.1. The first round's slop 3 was
  dropped to keep one corpus's grid well under 30 minutes on two cores: the first round
  picked slop 0 on SQLite, and the judged queries are mostly two or three words that
  belong side by side.
* A grid point scores MRR@10 + nDCG@10 on the tuning corpus; the first best point in grid
  order wins a tie (issue 6's boosts and the smaller weights come first).
* SQLite is the tuning corpus: its pick is the shipped ``blend``. It is reported on Python
  (held out) and on git (held out, never tuned on: ``Corpus.tunable``). Tuning on Python
  and reporting on SQLite and git, the reverse, is reported as well; it chooses nothing.
* If the SQLite pick loses to ``bm25`` on a held-out corpus, that is the result.

Amendment, 2026-11-23, fourth session, committed before any ranking ran on the new corpus:
all three corpora above had been looked at (Python and git through published held-out
figures and ablations), so none of them is unseen any more. A fourth, PostgreSQL 15's
manual (``postgresql-doc-15``, ``queries/postgres.tsv``: 114 queries judged by reading the
pages, by someone who never ran a ranking on it), is held out and measured as it is: the
shipped ``blend``, unchanged, against ``--ranking bm25`` on MRR@10 and nDCG@10, with the
bootstrap interval. Whatever the figures, they are reported; no weight changes because of
them.

The grid judges each point through ``SearchEngine.search``, which also builds the snippets
of the ten hits shown and loads their documents: about 95% of a grid point's CPU time
(1.3 s of 1.4 on SQLite), which the judging does not need; the engine has no way yet to
ask for the ordered URLs alone. Each ablation row and each held-out pair also says on how
many queries its reciprocal rank is above or below BM25's, and the default's (or the
pick's) difference from BM25 comes with a paired bootstrap interval over the queries.

    apt-get install sqlite3-doc python3.11-doc git-doc postgresql-doc-15   # once
    python benchmarks/search_quality.py --out /tmp/quality            # crawls all three
    python benchmarks/search_quality.py --out /tmp/quality --reuse    # reuses the crawls
    python benchmarks/search_quality.py --out /tmp/q --corpora git --no-tuning  # git only
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from quality_corpora import CORPORA, Corpus, prepare

from gossamer.search import RankingWeights, SearchEngine
from gossamer.search.ranking import RANKINGS

CUTOFF = 10
BLEND = RANKINGS["blend"]
BM25 = RANKINGS["bm25"]
BOOTSTRAP = 10_000  # resamples of the paired bootstrap
TUNE_FROM = "sqlite"  # the corpus whose pick is the shipped blend

# title, headings and description boosts; URL and body stay at 1
FIELD_PROFILES: dict[str, tuple[float, float, float]] = {
    "issue-6": (3.0, 2.0, 1.5),
    "mild": (1.5, 1.25, 1.0),
    "flat": (1.0, 1.0, 1.0),
}

# The grid, in the order that breaks ties (first best wins): 3 x 5 x 4 x 3 x 2 = 360 points.
GRID_FIELDS = tuple(FIELD_PROFILES)
GRID_ANCHOR = (0.0, 0.25, 0.5, 1.0, 2.0)
GRID_PROXIMITY = (0.0, 0.5, 1.0, 2.0)  # all at slop 0
GRID_PAGERANK = (0.0, 0.1, 0.3)  # host rank stays at the blend's 0.1
GRID_TIERS = (False, True)

Judged = dict[str, tuple[str, ...]]  # query -> paths of the pages that answer it


def with_fields(weights: RankingWeights, profile: str) -> RankingWeights:
    title, headings, description = FIELD_PROFILES[profile]
    return replace(
        weights, title_boost=title, headings_boost=headings, description_boost=description
    )


def profile_of(weights: RankingWeights) -> str:
    boosts = (weights.title_boost, weights.headings_boost, weights.description_boost)
    names = [name for name, profile in FIELD_PROFILES.items() if profile == boosts]
    return names[0] if names else "/".join(str(b) for b in boosts)


def grid_points() -> list[RankingWeights]:
    """Every point of the grid, in grid order."""
    grid = itertools.product(GRID_FIELDS, GRID_ANCHOR, GRID_PROXIMITY, GRID_PAGERANK, GRID_TIERS)
    return [
        replace(
            with_fields(BLEND, fields),
            anchor_boost=anchor,
            proximity_boost=proximity,
            proximity_slop=0,
            pagerank=pagerank,
            title_tiers=tiers,
        )
        for fields, anchor, proximity, pagerank, tiers in grid
    ]


def ablation(base: RankingWeights) -> dict[str, RankingWeights]:
    """The rows of the ablation of ``base``: each component out, or swapped for another."""
    rows = {"BM25 alone (`--ranking bm25`)": BM25}
    if base != BLEND:
        rows["blend shipped now"] = BLEND
    rows["candidate default" if base != BLEND else "blend (default)"] = base
    rows["without anchor text"] = replace(base, anchor_boost=0.0)
    rows["without proximity"] = replace(base, proximity_boost=0.0)
    rows["without PageRank prior"] = replace(base, pagerank=0.0, host_rank=0.0)
    tiers = "without title tiers" if base.title_tiers else "with title tiers"
    rows[tiers] = replace(base, title_tiers=not base.title_tiers)
    for profile in FIELD_PROFILES:
        if profile != profile_of(base):
            rows[f"with {profile} field boosts"] = with_fields(base, profile)
    own = replace(BM25, title_boost=base.title_boost, headings_boost=base.headings_boost)
    own = replace(own, description_boost=base.description_boost)
    if own != BM25:
        rows[f"BM25 alone with {profile_of(base)} field boosts"] = own
    return rows


@dataclass(frozen=True, slots=True)
class Score:
    mrr: float
    ndcg: float
    top1: int
    queries: int
    reciprocal: tuple[float, ...] = ()  # per query, in the order of the judgments
    gains: tuple[float, ...] = ()  # nDCG@10 per query

    @property
    def key(self) -> float:
        return self.mrr + self.ndcg

    def row(self, name: str, baseline: Score | None = None) -> str:
        cells = f"| {name} | {self.mrr:.3f} | {self.ndcg:.3f} | {self.top1} of {self.queries} |"
        if baseline is None:
            return cells
        pairs = list(zip(self.reciprocal, baseline.reciprocal, strict=True))
        better = sum(1 for ours, theirs in pairs if ours > theirs + 1e-9)
        worse = sum(1 for ours, theirs in pairs if ours < theirs - 1e-9)
        return cells + f" {better} / {worse} |"


def interval(ours: tuple[float, ...], theirs: tuple[float, ...]) -> tuple[float, float]:
    """95% paired bootstrap interval of mean(ours - theirs), resampling queries (seeded)."""
    differences = [a - b for a, b in zip(ours, theirs, strict=True)]
    draw = random.Random(16)
    n = len(differences)
    means = sorted(sum(draw.choices(differences, k=n)) / n for _ in range(BOOTSTRAP))
    return means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP) - 1]


def compared(name: str, ours: Score, theirs: Score) -> str:
    """``name`` minus ``--ranking bm25`` on both measures, with bootstrap intervals."""
    parts = []
    for measure_name, a, b in (
        ("MRR@10", ours.reciprocal, theirs.reciprocal),
        ("nDCG@10", ours.gains, theirs.gains),
    ):
        low, high = interval(a, b)
        mean = (sum(a) - sum(b)) / len(a)
        parts.append(f"{measure_name} {mean:+.3f} (95% interval {low:+.3f} to {high:+.3f})")
    return f"{name} minus BM25 alone: " + ", ".join(parts)


def judge(engine: SearchEngine, judged: Judged) -> tuple[Score, list[str]]:
    reciprocal, gains, misses = [], [], []
    for query, answers in judged.items():
        # The ranking alone: no snippets, which were 95% of a query's time here.
        paths = [url.split("/", 3)[3] for url in engine.ranked_urls(query, limit=CUTOFF)]
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
    score = Score(sum(reciprocal) / n, sum(gains) / n, top1, n, tuple(reciprocal), tuple(gains))
    return score, misses


def measure(
    engine: SearchEngine, judged: Judged, weights: RankingWeights
) -> tuple[Score, list[str]]:
    engine.weights = weights  # the engine reads its weights per query
    return judge(engine, judged)


def tune(engine: SearchEngine, judged: Judged) -> tuple[RankingWeights, Score]:
    """The grid point with the best MRR@10 + nDCG@10 on this corpus (first best wins)."""
    best, best_score = BLEND, Score(-1.0, -1.0, 0, 0)
    points = grid_points()
    started = time.perf_counter()
    for weights in points:
        score, _ = measure(engine, judged, weights)
        if score.key > best_score.key + 1e-9:
            best, best_score = weights, score
    seconds = time.perf_counter() - started
    print(f"  {len(points)} points in {seconds:.0f} s ({seconds / len(points):.2f} s a point)")
    return best, best_score


def knobs(w: RankingWeights) -> str:
    return (
        f"fields {profile_of(w)}, anchor {w.anchor_boost}, proximity {w.proximity_boost}"
        f" (slop {w.proximity_slop}), PageRank {w.pagerank}, host rank {w.host_rank},"
        f" title tiers {'on' if w.title_tiers else 'off'}"
    )


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
        base = BLEND
        if not args.no_tuning and len(chosen) > 1:
            tuned = _tune_all(engines, judged)
            held_out(tuned, engines, judged)
            base = tuned.get(TUNE_FROM, BLEND)
        for name, corpus in chosen.items():
            report_ablation(corpus, engines[name], judged[name], base, args.verbose)
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


def report_ablation(
    corpus: Corpus, engine: SearchEngine, judged: Judged, base: RankingWeights, verbose: bool
) -> None:
    print(f"\n{corpus.name}: {len(judged)} queries, {engine.documents} documents, cut-off {CUTOFF}")
    print(f"ablation of: {knobs(base)}")
    print("| ranking | MRR@10 | nDCG@10 | top-1 | RR above / below BM25 |")
    print("| --- | --- | --- | --- | --- |")
    bm25, _ = measure(engine, judged, BM25)
    line = ""
    for label, weights in ablation(base).items():
        score, misses = measure(engine, judged, weights)
        print(score.row(label, bm25))
        if verbose and weights is base:
            print("\n".join(f"    {miss}" for miss in misses))
        if weights is base:
            line = compared(label, score, bm25)
    print(line)


def _tune_all(
    engines: dict[str, SearchEngine], judged: dict[str, Judged]
) -> dict[str, RankingWeights]:
    """The grid's pick on each tunable corpus."""
    tuned = {}
    for name, engine in engines.items():
        if CORPORA[name].tunable:
            print(f"\ntuning on {name}:")
            tuned[name], score = tune(engine, judged[name])
            print(f"  pick: {knobs(tuned[name])}")
            print(f"  in-sample MRR@10 {score.mrr:.3f}, nDCG@10 {score.ndcg:.3f}")
    return tuned


def held_out(
    tuned: dict[str, RankingWeights], engines: dict[str, SearchEngine], judged: dict[str, Judged]
) -> None:
    """Each corpus's pick measured on every other corpus, next to BM25 alone."""
    print("\n| tuned on | measured on | ranking | MRR@10 | nDCG@10 | top-1 |", end="")
    print(" RR above / below BM25 |\n| --- | --- | --- | --- | --- | --- | --- |")
    lines = []
    for source, target in itertools.product(tuned, engines):
        if source == target:
            continue
        bm25, _ = measure(engines[target], judged[target], BM25)
        score, _ = measure(engines[target], judged[target], tuned[source])
        for label, row in (("BM25 alone", bm25), ("tuned blend", score)):
            print(f"| {source} | {target} (held out) |" + row.row(label, bm25)[1:])
        lines.append(compared(f"tuned on {source}, on {target}", score, bm25))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
