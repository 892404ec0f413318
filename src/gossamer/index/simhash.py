"""Index stage, near-duplicates: 64-bit simhash fingerprints of a page's main text.

Data flow: extract -> **simhash** -> the document store (``gossamer.store.docstore``), which
groups pages whose fingerprints differ in at most ``MAX_DISTANCE`` bits and owns the bands
that find them.

Why simhash rather than MinHash-LSH: a page costs one 64-bit integer instead of a signature
of ~128 hashes, so fingerprints live in the SQLite document store beside each row and new
pages of a resumed crawl are grouped with one indexed lookup per band. Charikar's simhash
with 64 bits and a distance of 3 is what Manku, Jain and Das Sarma (WWW 2007) measured on
8 billion web pages for exactly this job. MinHash estimates Jaccard similarity more
faithfully for short or partly overlapping texts, which matters for plagiarism search but
not for "the same page under two URLs with a different date line".

Features are word 3-shingles, so word order counts; each shingle's hash is built from
cached word hashes with rotations, vectorised with numpy. Lookup uses the pigeonhole
principle: split the fingerprint into ``MAX_DISTANCE + 1`` bands of 16 bits; two
fingerprints within distance 3 agree exactly on at least one band (``bands``, ``hamming``).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import numpy.typing as npt

from gossamer.store.docstore import BANDS, MAX_DISTANCE, bands, hamming

__all__ = ["BANDS", "MAX_DISTANCE", "MIN_WORDS", "bands", "hamming", "simhash"]
# Below this many words a fingerprint says little (error pages, stubs): exact matches only.
MIN_WORDS = 20
_SHINGLE = 3
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


def simhash(text: str) -> int | None:
    """The fingerprint of ``text``, or None when it has fewer than ``MIN_WORDS`` words."""
    words = _WORD_RE.findall(text.lower())[:_MAX_WORDS]
    if len(words) < MIN_WORDS:
        return None
    hashes = _hashes(words)
    count = len(words) - _SHINGLE + 1
    shingles = hashes[:count].copy()
    for i in range(1, _SHINGLE):
        shingles ^= _rotl(hashes[i : i + count], i)
    bits = np.unpackbits(shingles.astype("<u8").view(np.uint8), bitorder="little")
    votes = bits.reshape(count, 64).sum(axis=0, dtype=np.int64)
    fingerprint = np.packbits(votes * 2 > count, bitorder="little")
    return int.from_bytes(fingerprint.tobytes(), "little")
