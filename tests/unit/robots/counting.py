"""A path that counts the work done matching it, so tests bound the work, not the time."""

from __future__ import annotations

from typing import SupportsIndex


class CountingPath(str):
    """A path that records every search made in it: where each began and what it found."""

    searches: list[tuple[int, int]]

    def find(
        self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None
    ) -> int:
        found = super().find(sub, start, end)
        self.searches.append((0 if start is None else int(start), found))
        return found


def counting(path: str) -> CountingPath:
    counted = CountingPath(path)
    counted.searches = []
    return counted
