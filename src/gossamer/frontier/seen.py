"""The seen-URL set: has this canonical URL ever been queued?

It stores a 64-bit BLAKE2b fingerprint per URL in a sorted NumPy array (8 bytes per URL) plus
a small unsorted Python set of recent fingerprints that is merged into the array in batches.
At 10 million URLs that is about 80 MB for the array and a constant ~8 MB for the recent set:
under 9 bytes per URL, against ~120 bytes for a Python set of hash strings.

Fingerprints make the set probabilistic: a new URL is wrongly taken as seen only if its 64-bit
fingerprint equals one already stored, which for n stored URLs happens with probability about
n / 2**64 per lookup (5e-13 at 10 million URLs, far below 1e-6). The set is not persisted on
its own: on resume it is rebuilt from the ``urls`` table of the crawl database, which holds every
queued URL exactly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import numpy.typing as npt

MERGE_AT = 1 << 16  # recent fingerprints kept unsorted before a merge (~4 MB of Python ints)

_blake = hashlib.blake2b


def _trimmer() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``: each merge frees the previous array, and without a trim glibc
    keeps blocks under its (growing) mmap threshold in the heap, so RSS would creep upward."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    trim: Callable[[int], int] | None = getattr(ctypes.CDLL(name), "malloc_trim", None)
    return trim


_malloc_trim = _trimmer()


def fingerprint(url: str) -> int:
    return int.from_bytes(_blake(url.encode(), digest_size=8).digest(), "little")


class SeenSet:
    """Fingerprints of every URL ever added; ``add`` answers whether a URL is new."""

    def __init__(self, *, merge_at: int = MERGE_AT) -> None:
        self._sorted: npt.NDArray[np.uint64] = np.empty(0, dtype=np.uint64)
        self._recent: set[int] = set()
        self._merge_at = merge_at

    def __len__(self) -> int:
        return len(self._sorted) + len(self._recent)

    def __contains__(self, url: str) -> bool:
        return self._has(fingerprint(url))

    def _has(self, fp: int) -> bool:
        if fp in self._recent:
            return True
        array = self._sorted
        if not len(array):
            return False
        key = np.uint64(fp)
        index = int(np.searchsorted(array, key))
        return index < len(array) and array[index] == key

    def add(self, url: str) -> bool:
        """Add ``url``; True if it was not in the set before."""
        fp = fingerprint(url)
        if self._has(fp):
            return False
        self._recent.add(fp)
        if len(self._recent) >= self._merge_at:
            self._merge()
        return True

    def add_many(self, urls: Sequence[str]) -> list[bool]:
        """Vectorised ``add`` for the links of a page: one array search for all of them."""
        fps = [fingerprint(url) for url in urls]
        found = np.zeros(len(fps), dtype=bool)
        array = self._sorted
        if len(array) and fps:
            keys = np.array(fps, dtype=np.uint64)
            index = np.searchsorted(array, keys)
            inside = index < len(array)
            found[inside] = array[index[inside]] == keys[inside]
        answers: list[bool] = []
        recent = self._recent
        for fp, old in zip(fps, found.tolist(), strict=True):
            if old or fp in recent:
                answers.append(False)
            else:
                recent.add(fp)
                answers.append(True)
        if len(recent) >= self._merge_at:
            self._merge()
        return answers

    def extend(self, urls: Iterable[str]) -> None:
        """Bulk-load URLs known to be seen (resume); duplicates are harmless."""
        for url in urls:
            self._recent.add(fingerprint(url))
            if len(self._recent) >= self._merge_at:
                self._merge()

    def _merge(self) -> None:
        fresh = np.fromiter(self._recent, dtype=np.uint64, count=len(self._recent))
        fresh.sort()
        # Inserting a sorted batch costs one pass over the array, not a full re-sort.
        positions = np.searchsorted(self._sorted, fresh)
        self._sorted = np.insert(self._sorted, positions, fresh)
        self._recent.clear()
        if _malloc_trim is not None:
            _malloc_trim(0)

    @property
    def nbytes(self) -> int:
        """Bytes held by the sorted array (the part that grows with the crawl)."""
        return int(self._sorted.nbytes)
