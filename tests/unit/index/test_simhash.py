"""Simhash fingerprints: near texts are close, different texts are far, bands find them."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from gossamer.index.simhash import BANDS, MAX_DISTANCE, MIN_WORDS, bands, hamming, simhash

WORDS = [f"w{i}" for i in range(2000)]


def _text(seed: int, count: int = 300) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(count))


def test_a_small_edit_keeps_the_fingerprint_close() -> None:
    text = _text(1)
    edited = text.replace(text.split()[100], "changed", 1) + " updated 2024"
    a, b = simhash(text), simhash(edited)
    assert a is not None and b is not None
    assert hamming(a, b) <= MAX_DISTANCE


def test_unrelated_texts_are_far_apart() -> None:
    a, b = simhash(_text(1)), simhash(_text(2))
    assert a is not None and b is not None
    assert hamming(a, b) > 10


def test_same_text_same_fingerprint_and_case_ignored() -> None:
    assert simhash(_text(3)) == simhash(_text(3).upper())


def test_short_texts_have_no_fingerprint() -> None:
    assert simhash(" ".join(WORDS[: MIN_WORDS - 1])) is None
    assert simhash(" ".join(WORDS[:MIN_WORDS])) is not None


@given(st.integers(0, 2**64 - 1), st.sets(st.integers(0, 63), max_size=MAX_DISTANCE))
def test_close_fingerprints_share_a_band(value: int, flips: set[int]) -> None:
    other = value
    for bit in flips:
        other ^= 1 << bit
    assert hamming(value, other) == len(flips)
    assert len(bands(value)) == BANDS
    assert any(x == y for x, y in zip(bands(value), bands(other), strict=True))
