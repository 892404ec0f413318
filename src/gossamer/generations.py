"""A bounded memory for values met again and again (links in navigation bars, their
canonical forms, their database ids): two generations of plain dicts.

Used on the crawl's hot path (``urls/canonical.py``, ``crawling/admission.py``,
``store/writes.py``), where an LRU's bookkeeping per lookup would cost more than it saves.
When the young generation is full it becomes the old one and a new young one starts; a key
found in the old generation moves back to the young, so keys in use stay and the rest age
out. At most ``2 * capacity`` keys are held.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Generations"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING = object()


class Generations(Generic[K, V]):
    """Keys to values, bounded by two generations of ``capacity`` keys each."""

    __slots__ = ("_capacity", "_old", "_young")

    def __init__(self, capacity: int) -> None:
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}
        self._capacity = max(1, capacity)

    def get(self, key: K) -> V | None:
        """The value kept for ``key``, or None."""
        found = self._young.get(key, _MISSING)
        if found is _MISSING:
            found = self._old.pop(key, _MISSING)
            if found is _MISSING:
                return None
            self.put(key, found)  # type: ignore[arg-type]
        return found  # type: ignore[return-value]

    def get_or(self, key: K, make: Callable[[K], V]) -> V:
        """The value kept for ``key``; else ``make(key)``, kept."""
        found = self._young.get(key, _MISSING)
        if found is _MISSING:
            found = self._old.pop(key, _MISSING)
            if found is _MISSING:
                found = make(key)
            self.put(key, found)  # type: ignore[arg-type]
        return found  # type: ignore[return-value]

    def put(self, key: K, value: V) -> None:
        if len(self._young) >= self._capacity:
            self._old, self._young = self._young, {}
        self._young[key] = value
