"""Index stage, near-duplicates: the word 3-shingles of a page's main text, as 64-bit hashes.

Data flow: extract -> **shingles** -> simhash and minhash, which both fingerprint the same
features, so the two methods are compared on equal terms (``benchmarks/near_duplicates.py``).

A shingle is three consecutive words, lowercased, so word order counts and a changed word
touches only the three shingles that hold it. Each shingle's hash is built from cached word
hashes with rotations (``h(a) ^ rotl(h(b), 1) ^ rotl(h(c), 2)``), vectorised with numpy.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import numpy.typing as npt

__all__ = ["MIN_WORDS", "SHINGLE", "shingle_hashes"]

# Below this many words a fingerprint says little (error pages, stubs): exact matches only.
MIN_WORDS = 20
SHINGLE = 3
_WORD_RE = re.compile(r"\w+")
_MAX_WORDS = 10_000  # the start of a very long text decides its fingerprint
_CACHE_LIMIT = 500_000

# Word -> 64-bit hash. Memoised because web text repeats its words; the process's own
# cache, like re's, so no state is shared between callers.
_word_hashes: dict[str, int] = {}


def _word_hash(word: str) -> int:
    # Process-independent, unlike hash().
    return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")


def _hashes(words: list[str]) -> npt.NDArray[np.uint64]:
    cache = _word_hashes
    missing = set(words).difference(cache)
    if len(cache) + len(missing) > _CACHE_LIMIT:
        cache.clear()
        missing = set(words)
    cache.update((word, _word_hash(word)) for word in missing)
    return np.fromiter(map(cache.__getitem__, words), dtype=np.uint64, count=len(words))


def _rotl(values: npt.NDArray[np.uint64], bits: int) -> npt.NDArray[np.uint64]:
    left = np.left_shift(values, np.uint64(bits))
    right = np.right_shift(values, np.uint64(64 - bits))
    return np.bitwise_or(left, right)


def shingle_hashes(text: str) -> npt.NDArray[np.uint64] | None:
    """One hash per word 3-shingle of ``text``, in text order (repeats kept), or None when
    the text has fewer than ``MIN_WORDS`` words."""
    words = _WORD_RE.findall(text.lower())[:_MAX_WORDS]
    if len(words) < MIN_WORDS:
        return None
    hashes = _hashes(words)
    count = len(words) - SHINGLE + 1
    shingles = hashes[:count].copy()
    for i in range(1, SHINGLE):
        shingles ^= _rotl(hashes[i : i + count], i)
    return shingles
