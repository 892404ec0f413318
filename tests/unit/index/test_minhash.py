"""MinHash signatures: similarity estimates Jaccard, close pages share an LSH band key."""

from __future__ import annotations

import random

import numpy as np

from gossamer.index.minhash import LSH_BANDS, PERMUTATIONS, lsh_keys, minhash, similarity
from gossamer.index.shingles import MIN_WORDS, shingle_hashes

WORDS = [f"w{i}" for i in range(3000)]


def _words(seed: int, count: int = 400) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(WORDS) for _ in range(count)]


def _jaccard(a: str, b: str) -> float:
    x, y = shingle_hashes(a), shingle_hashes(b)
    assert x is not None and y is not None
    sx, sy = set(x.tolist()), set(y.tolist())
    return len(sx & sy) / len(sx | sy)


def test_similarity_estimates_the_jaccard_similarity_of_shingles() -> None:
    words = _words(1)
    text = " ".join(words)
    edited = " ".join(words[:150] + _words(9, 60) + words[150:])  # a paragraph added
    a, b = minhash(text), minhash(edited)
    assert a is not None and b is not None
    assert a.dtype == np.uint32 and len(a) == PERMUTATIONS
    assert abs(similarity(a, b) - _jaccard(text, edited)) < 0.15
    assert set(lsh_keys(a)) & set(lsh_keys(b))


def test_unrelated_texts_share_nothing_and_repeats_do_not_count() -> None:
    a, b = minhash(" ".join(_words(1))), minhash(" ".join(_words(2)))
    assert a is not None and b is not None
    assert similarity(a, b) < 0.05
    assert not set(lsh_keys(a)) & set(lsh_keys(b))
    once = " ".join(_words(3))
    again = minhash(once + " " + once)
    assert again is not None and similarity(minhash(once), again) > 0.95  # type: ignore[arg-type]


def test_signatures_are_deterministic_and_short_texts_have_none() -> None:
    text = " ".join(_words(4))
    a, b = minhash(text), minhash(text.upper())
    assert a is not None and b is not None and (a == b).all()
    assert len(lsh_keys(a)) == LSH_BANDS
    assert minhash(" ".join(WORDS[: MIN_WORDS - 1])) is None
