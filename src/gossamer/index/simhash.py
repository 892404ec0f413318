"""Index stage, near-duplicates: 64-bit simhash fingerprints of a page's main text.

Data flow: extract -> shingles -> **simhash** -> the document store
(``gossamer.store.docstore``), which owns the bands that find fingerprints within
``MAX_DISTANCE`` bits.

Charikar's simhash with 64 bits and a distance of 3 is what Manku, Jain and Das Sarma (WWW
2007) measured on 8 billion web pages. On short pages it misses most near-duplicates (a
changed 25-word advertisement moves it by far more than 3 bits), so since MinHash-LSH was
measured against it (``benchmarks/near_duplicates.py``, BENCHMARKS.md) it no longer decides
the groups of new pages: ``near`` uses it only to find the pages of an index written before
MinHash signatures were kept. It costs 8 bytes a page and the page-info view shows it.

Features are the word 3-shingles of ``shingles``, as for ``minhash``. Lookup uses the pigeonhole
principle: split the fingerprint into ``MAX_DISTANCE + 1`` bands of 16 bits; two
fingerprints within distance 3 agree exactly on at least one band (``bands``, ``hamming``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gossamer.index.shingles import MIN_WORDS, shingle_hashes
from gossamer.store.docstore import BANDS, MAX_DISTANCE, bands, hamming

__all__ = ["BANDS", "MAX_DISTANCE", "MIN_WORDS", "bands", "hamming", "simhash", "simhash_of"]


def simhash(text: str) -> int | None:
    """The fingerprint of ``text``, or None when it has fewer than ``MIN_WORDS`` words."""
    shingles = shingle_hashes(text)
    return None if shingles is None else simhash_of(shingles)


def simhash_of(shingles: npt.NDArray[np.uint64]) -> int:
    """The fingerprint of a text's shingle hashes: each bit by majority vote."""
    count = len(shingles)
    bits = np.unpackbits(shingles.astype("<u8").view(np.uint8), bitorder="little")
    votes = bits.reshape(count, 64).sum(axis=0, dtype=np.int64)
    fingerprint = np.packbits(votes * 2 > count, bitorder="little")
    return int.from_bytes(fingerprint.tobytes(), "little")
