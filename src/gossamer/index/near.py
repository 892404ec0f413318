"""Index stage, near-duplicates: which duplicate group a new page joins.

Data flow: shingles -> simhash + minhash -> **near** -> the document store. A page joins
the group of an indexed page with the same content (same ``doc_id``: an exact duplicate);
failing that, the oldest group holding a near-duplicate, found by the methods in ``use``:

* ``simhash``: fingerprints within ``MAX_DISTANCE`` (3) bits, found through 16-bit bands;
* ``minhash``: an estimated Jaccard similarity of the word 3-shingle sets of at least
  ``MIN_SIMILARITY``, the candidates found through the signature's LSH band keys.

``USE`` is what ``gossamer index`` runs: MinHash-LSH alone. On the labelled pairs of
``benchmarks/near_duplicates.py`` (BENCHMARKS.md) both methods make no false match, and
MinHash groups 95% of the near-duplicate pairs where simhash at 3 bits groups 22%; adding
simhash to MinHash found no pair more. Simhash is still computed and stored (8 bytes and four
band rows a page): the page-info view shows it, and it is how a new page finds the pages of
an index written before MinHash signatures were kept, which have none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from gossamer.index.minhash import MIN_SIMILARITY, lsh_keys, signature_of
from gossamer.index.shingles import shingle_hashes
from gossamer.index.simhash import MAX_DISTANCE, hamming, simhash_of
from gossamer.store.docstore import DocStore, NearKeys

__all__ = ["METHODS", "USE", "Grouping", "NearKeys", "choose_group", "near_keys"]

METHODS = frozenset({"simhash", "minhash"})
USE = frozenset({"minhash"})


@dataclass(frozen=True, slots=True)
class Grouping:
    """The group a page joins (None: one of its own) and why: "exact", "near" or ""."""

    group: int | None
    how: str = ""


def near_keys(text: str) -> NearKeys:
    """Everything a page is looked up by; empty when the text is too short to say much."""
    shingles = shingle_hashes(text)
    if shingles is None:
        return NearKeys()
    signature = signature_of(shingles)
    return NearKeys(simhash_of(shingles), signature.astype("<u4").tobytes(), lsh_keys(signature))


def _similar(a: bytes, b: bytes) -> bool:
    x, y = np.frombuffer(a, dtype="<u4"), np.frombuffer(b, dtype="<u4")
    return len(x) == len(y) and int(np.count_nonzero(x == y)) >= MIN_SIMILARITY * len(x)


def _near_groups(store: DocStore, keys: NearKeys, use: Iterable[str]) -> set[int]:
    groups: set[int] = set()
    if keys.simhash is not None:
        # Without simhash in ``use`` it still finds the pages of an older index, which have
        # no signature.
        fingerprint = keys.simhash
        unsigned = "simhash" not in use
        groups.update(
            group
            for group, other in store.simhash_neighbours(fingerprint, unsigned=unsigned)
            if hamming(other, fingerprint) <= MAX_DISTANCE
        )
    if "minhash" in use and keys.minhash is not None:
        signature = keys.minhash
        groups.update(
            group
            for group, other in store.minhash_neighbours(keys.lsh)
            if _similar(other, signature)
        )
    return groups


def choose_group(
    store: DocStore, doc_id: str | None, keys: NearKeys, *, use: Iterable[str] = USE
) -> Grouping:
    """The group a page with content ``doc_id`` and ``keys`` joins among the indexed ones."""
    exact = store.exact_group(doc_id)
    if exact is not None:
        return Grouping(exact, "exact")
    groups = _near_groups(store, keys, frozenset(use))
    # The oldest group wins, so the answer does not depend on the order of the lookups.
    return Grouping(min(groups), "near") if groups else Grouping(None)
