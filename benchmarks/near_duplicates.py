"""Near-duplicate detection: simhash vs MinHash-LSH on labelled pairs of web pages.

The pages are made reproducibly (``near_duplicate_pages.py``) from real English text that
every Python install carries: the docstrings of about a hundred standard-library modules,
each an "article" of 80 to 1,200 words, put in an HTML page of a made-up site whose template
is either dropped by the extractor (HTML5 ``header``, ``aside``, ``footer``) or leaks into
the main text (plain ``div`` elements, as on many real sites), with a date line and an
advertisement.

Near-duplicate pairs (positives): the page and a copy with one of these edits: the date
changed; the advertisement changed; the article on another site (another template); a
paragraph added; a paragraph removed; a few words changed (2% of them, typo fixes); and date,
advertisement and word edits together. Non-duplicate pairs (negatives): two articles on the
same site (same template, different content: the hard case, worst for short articles on
``div`` sites); two articles of the same module (same topic and vocabulary); two articles at
random. Negatives whose articles share more than 20% of their shingles are left out, so a
label never says "different" about text that is in fact shared.

Every page goes through the indexer's own text extraction (``extract_html``), then both
methods fingerprint the main text. Reported:

* pairwise: a pair is found when simhash fingerprints are within k bits (k = 3 is what
  ``gossamer index`` has used), or when MinHash-LSH makes the pair a candidate (one band of
  the signature equal) and the estimated Jaccard similarity is at least t;
* grouped: every page is added to a real document store (``DocStore``) in a fixed order, as
  ``gossamer index`` does, with each method alone and with both; a pair is found when both
  pages end in the same group. This is what a user sees as "N near-duplicates".

    python benchmarks/near_duplicates.py            # the figures in BENCHMARKS.md
    python benchmarks/near_duplicates.py --seed 7   # another draw of pages and pairs
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from near_duplicate_pages import NEGATIVE_KINDS, POSITIVE_EDITS, Corpus, Page, build_corpus, render

from gossamer.index.extract import extract_html
from gossamer.index.minhash import lsh_keys, signature_of, similarity
from gossamer.index.near import NearKeys, choose_group, near_keys
from gossamer.index.shingles import shingle_hashes
from gossamer.index.simhash import hamming, simhash_of
from gossamer.store.docstore import DocStore

SIMHASH_K = (0, 1, 2, 3, 4, 5, 6, 8, 10, 12)
MINHASH_T = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True, slots=True)
class Prints:
    """What each method keeps of one page."""

    body_words: int
    keys: NearKeys


def fingerprint_pages(pages: list[Page]) -> list[Prints]:
    prints = []
    for page in pages:
        body = extract_html(render(page)).body
        prints.append(Prints(len(body.split()), near_keys(body)))
    return prints


@dataclass(frozen=True, slots=True)
class Score:
    method: str
    found: int  # positives found
    positives: int
    false: int  # negatives found
    by_kind: dict[str, tuple[int, int]]  # edit or negative kind -> (found, of)

    @property
    def recall(self) -> float:
        return self.found / self.positives if self.positives else 0.0

    @property
    def precision(self) -> float:
        return self.found / (self.found + self.false) if self.found + self.false else 1.0


def score(method: str, corpus: Corpus, same: Callable[[int, int], bool]) -> Score:
    by_kind: dict[str, tuple[int, int]] = {}
    found = false = 0
    for pairs, positive in ((corpus.positives, True), (corpus.negatives, False)):
        for a, b, kind in pairs:
            hit = same(a, b)
            if positive:
                found += hit
            else:
                false += hit
            got, of = by_kind.get(kind, (0, 0))
            by_kind[kind] = (got + hit, of + 1)
    return Score(method, found, len(corpus.positives), false, by_kind)


def pairwise(corpus: Corpus, prints: list[Prints]) -> list[Score]:
    scores = []
    for k in SIMHASH_K:

        def near_simhash(a: int, b: int, k: int = k) -> bool:
            x, y = prints[a].keys.simhash, prints[b].keys.simhash
            return x is not None and y is not None and hamming(x, y) <= k

        scores.append(score(f"simhash, k <= {k} bits", corpus, near_simhash))
    for t in MINHASH_T:

        def near_minhash(a: int, b: int, t: float = t) -> bool:
            x, y = prints[a].keys, prints[b].keys
            if x.minhash is None or y.minhash is None:
                return False
            shared = any(i == j for i, j in zip(x.lsh, y.lsh, strict=True))
            signatures = np.frombuffer(x.minhash, "<u4"), np.frombuffer(y.minhash, "<u4")
            return shared and similarity(*signatures) >= t

        scores.append(score(f"MinHash-LSH, J >= {t:.1f}", corpus, near_minhash))
    return scores


def grouped(corpus: Corpus, prints: list[Prints], use: frozenset[str], seed: int) -> list[int]:
    """The group each page ends in when indexed in a shuffled order through ``DocStore``."""
    order = list(range(len(corpus.pages)))
    random.Random(seed).shuffle(order)
    groups = [0] * len(order)
    with tempfile.TemporaryDirectory() as tmp, DocStore(Path(tmp) / "docs.db") as store:
        store.begin()
        for n in order:
            keys = prints[n].keys
            group = choose_group(store, None, keys, use=use).group
            row = store.add(
                url_id=str(n), url=f"https://bench.test/{n}", host="bench.test", doc_id=None,
                fetched_at=0.0, kind="html", lang="en", title="", words=prints[n].body_words,
                keys=keys, group=group, indexed=True,
            )  # fmt: skip
            groups[n] = row.group_id
        store.commit()
    return groups


def _table(scores: list[Score]) -> list[str]:
    lines = [
        "| method | recall | precision | positives found | negatives found |",
        "|---|---|---|---|---|",
    ]
    for s in scores:
        negatives = sum(of for k, (_, of) in s.by_kind.items() if k in NEGATIVE_KINDS)
        lines.append(
            f"| {s.method} | {s.recall:.1%} | {s.precision:.1%} | {s.found} / {s.positives}"
            f" | {s.false} / {negatives} |"
        )
    return lines


def _by_kind(scores: list[Score]) -> list[str]:
    kinds = POSITIVE_EDITS + NEGATIVE_KINDS
    lines = ["| pairs | " + " | ".join(s.method for s in scores) + " |"]
    lines.append("|---" * (len(scores) + 1) + "|")
    for kind in kinds:
        cells = []
        for s in scores:
            got, of = s.by_kind.get(kind, (0, 0))
            cells.append(f"{got} / {of}")
        label = f"positive: {kind}" if kind in POSITIVE_EDITS else f"negative: {kind}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def _timing(pages: list[Page]) -> str:
    bodies = [extract_html(render(p)).body for p in pages]
    started = time.perf_counter()
    shingled = [shingle_hashes(b) for b in bodies]
    shingling = time.perf_counter() - started
    started = time.perf_counter()
    for s in shingled:
        if s is not None:
            simhash_of(s)
    simhashing = time.perf_counter() - started
    started = time.perf_counter()
    for s in shingled:
        if s is not None:
            lsh_keys(signature_of(s))
    minhashing = time.perf_counter() - started
    per = 1000 / len(pages)
    return (
        f"per page: shingles {shingling * per:.2f} ms, simhash {simhashing * per:.2f} ms,"
        f" MinHash signature + LSH keys {minhashing * per:.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    corpus = build_corpus(args.seed)
    prints = fingerprint_pages(corpus.pages)
    words = sorted(p.body_words for p in prints)
    print(
        f"python {sys.version.split()[0]}, seed {args.seed}: {len(corpus.pages)} pages"
        f" (main text {words[0]}..{words[-1]} words, median {words[len(words) // 2]}),"
        f" {len(corpus.positives)} near-duplicate pairs, {len(corpus.negatives)} other pairs"
    )
    print("\nPairwise decisions:\n")
    print("\n".join(_table(pairwise(corpus, prints))))
    grouped_scores = []
    for name, use in (
        ("simhash (k <= 3)", frozenset({"simhash"})),
        ("MinHash-LSH", frozenset({"minhash"})),
        ("both", frozenset({"simhash", "minhash"})),
    ):
        groups = grouped(corpus, prints, use, args.seed)

        def same_group(a: int, b: int, groups: list[int] = groups) -> bool:
            return groups[a] == groups[b]

        grouped_scores.append(score(name, corpus, same_group))
    print("\nGroups built by DocStore, as `gossamer index` does:\n")
    print("\n".join(_table(grouped_scores)))
    print()
    print("\n".join(_by_kind(grouped_scores)))
    print("\n" + _timing(corpus.pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
