"""Index stage, near-duplicates: MinHash signatures of a page's main text and their LSH keys.

Data flow: extract -> shingles -> **minhash** -> the document store, which keeps each page's
signature and its band keys; ``near`` decides from them which group a new page joins.

A signature is the minimum, over the page's set of word 3-shingles, of each of ``PERMUTATIONS``
hash functions. Two pages agree on one position with probability equal to the Jaccard
similarity of their shingle sets, so the share of equal positions (``similarity``) estimates
it. The hash functions are a 64-bit mixer (the splitmix64 finaliser) applied to the shingle
hash xor a fixed per-position seed, all in numpy; the top 32 bits are kept, which halves the
bytes stored and makes a false equal position a 1-in-4-billion event.

Locality-sensitive hashing finds the candidates without comparing every pair: the signature
is cut into ``LSH_BANDS`` bands of ``LSH_ROWS`` positions, and two pages that agree on a whole
band share that band's key (``lsh_keys``). With 32 bands of 4 rows a pair of similarity
``s`` shares a key with probability ``1 - (1 - s**4)**32``: 0.96 at s = 0.6, 0.9998 at 0.8.
The candidates are then checked against ``MIN_SIMILARITY``. Why these numbers, and why
MinHash rather than simhash alone: ``benchmarks/near_duplicates.py`` and BENCHMARKS.md.
"""

from __future__ import annotations

import hashlib

import numpy as np
import numpy.typing as npt

from gossamer.index.shingles import shingle_hashes

__all__ = [
    "LSH_BANDS",
    "LSH_ROWS",
    "MIN_SIMILARITY",
    "PERMUTATIONS",
    "lsh_keys",
    "minhash",
    "signature_of",
    "similarity",
]

PERMUTATIONS = 128
LSH_BANDS = 32
LSH_ROWS = PERMUTATIONS // LSH_BANDS
MIN_SIMILARITY = 0.5  # estimated Jaccard similarity of shingle sets that makes a near-duplicate

Signature = npt.NDArray[np.uint32]

_SEEDS = np.frombuffer(
    hashlib.blake2b(b"gossamer minhash", digest_size=64).digest() * (PERMUTATIONS // 8),
    dtype="<u8",
).copy()
# Each position gets its own seed: the repeated block above, made distinct by its index.
_SEEDS ^= np.arange(PERMUTATIONS, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    # numpy wraps uint64 products modulo 2**64, which is what the mixer wants.
    values = (values ^ (values >> np.uint64(30))) * _M1
    values = (values ^ (values >> np.uint64(27))) * _M2
    return values ^ (values >> np.uint64(31))


def signature_of(shingles: npt.NDArray[np.uint64], permutations: int = PERMUTATIONS) -> Signature:
    """The MinHash signature of a set of shingle hashes (repeats do not count)."""
    unique = np.unique(shingles)
    seeds = _SEEDS[:permutations, np.newaxis]
    with np.errstate(over="ignore"):
        mins = _mix(unique[np.newaxis, :] ^ seeds).min(axis=1)
    signature: Signature = (mins >> np.uint64(32)).astype(np.uint32)
    return signature


def minhash(text: str) -> Signature | None:
    """The signature of ``text``, or None when it has too few words (as for simhash)."""
    shingles = shingle_hashes(text)
    return None if shingles is None else signature_of(shingles)


def similarity(a: Signature, b: Signature) -> float:
    """The estimated Jaccard similarity of the two pages' shingle sets, 0..1."""
    return float(np.count_nonzero(a == b)) / len(a)


def lsh_keys(signature: Signature, bands: int = LSH_BANDS) -> tuple[int, ...]:
    """One signed 64-bit key per band; pages sharing a key agree on that whole band."""
    rows = len(signature) // bands
    data = signature.astype("<u4").tobytes()
    step = rows * 4
    return tuple(
        int.from_bytes(
            hashlib.blake2b(data[i * step : (i + 1) * step], digest_size=8).digest(),
            "little",
            signed=True,
        )
        for i in range(bands)
    )
