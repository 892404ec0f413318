"""The seen-URL set on both sides of its merge: recent fingerprints and the sorted array.

A small ``merge_at`` puts most URLs in the sorted array after a few adds; one run at the real
threshold checks the same past 65,536 URLs, where a crawl first depends on the array.
"""

from __future__ import annotations

import ctypes.util

import pytest

import gossamer.frontier.seen as seen_module
from gossamer.frontier import SeenSet
from gossamer.frontier.seen import MERGE_AT, _trimmer, fingerprint


def urls(first: int, count: int, host: str = "a.test") -> list[str]:
    return [f"http://{host}/page/{n}" for n in range(first, first + count)]


def test_urls_are_seen_after_their_merge_into_the_array() -> None:
    seen = SeenSet(merge_at=4)
    added = urls(0, 10)
    assert [seen.add(url) for url in added] == [True] * 10
    assert len(seen) == 10
    assert seen.nbytes == 8 * 8  # two merges of four; the last two are still recent
    assert all(url in seen for url in added)
    assert not any(url in seen for url in urls(10, 50))
    assert [seen.add(url) for url in added] == [False] * 10  # from the array and the recent set
    assert len(seen) == 10


def test_every_array_position_is_found() -> None:
    # Fingerprints sort in no particular URL order, so some URLs sit at the array's ends: the
    # first and the last position must both answer.
    seen = SeenSet(merge_at=1)
    added = urls(0, 64)
    for url in added:
        seen.add(url)
    assert seen.nbytes == 64 * 8
    ordered = sorted(added, key=fingerprint)
    assert ordered[0] in seen and ordered[-1] in seen
    assert all(url in seen for url in added)
    # An unseen URL whose fingerprint sorts above every stored one: the search runs off the end.
    beyond = next(u for u in urls(64, 10_000) if fingerprint(u) > fingerprint(ordered[-1]))
    below = next(u for u in urls(64, 10_000) if fingerprint(u) < fingerprint(ordered[0]))
    assert beyond not in seen and below not in seen
    assert seen.add(beyond) and seen.add(below)


def test_add_many_answers_each_url_once_across_array_recent_and_batch() -> None:
    seen = SeenSet(merge_at=8)
    merged, recent = urls(0, 8), urls(8, 3)
    assert seen.add_many(merged) == [True] * 8  # reaches the threshold: merged
    assert seen.nbytes == 8 * 8
    assert seen.add_many(recent) == [True] * 3
    new = urls(100, 2)
    batch = [merged[0], recent[0], new[0], new[0], new[1], merged[7]]
    assert seen.add_many(batch) == [False, False, True, False, True, False]
    assert len(seen) == 13
    assert all(url in seen for url in merged + recent + new)
    assert seen.add_many([]) == []


def test_add_many_merges_when_the_batch_reaches_the_threshold() -> None:
    seen = SeenSet(merge_at=5)
    assert seen.add_many(urls(0, 4)) == [True] * 4
    assert seen.nbytes == 0  # four recent, below the threshold
    assert seen.add_many(urls(4, 1)) == [True]
    assert seen.nbytes == 5 * 8
    assert seen.add_many(urls(0, 5)) == [False] * 5


def test_extend_loads_urls_as_seen_and_merges_on_the_way() -> None:
    seen = SeenSet(merge_at=3)
    loaded = urls(0, 7)
    seen.extend(loaded)
    assert seen.nbytes == 6 * 8  # two merges of three, one recent
    assert all(url in seen for url in loaded)
    assert not any(seen.add(url) for url in loaded)
    assert urls(7, 1)[0] not in seen


def test_past_the_real_merge_threshold_every_url_is_found() -> None:
    count = MERGE_AT + 4_464  # 70,000: one merge into the array, then more recent URLs
    seen = SeenSet()
    added = urls(0, count, "big.test")
    firsts = [seen.add(url) for url in added[: MERGE_AT + 1_000]]
    firsts += seen.add_many(added[MERGE_AT + 1_000 :])
    assert firsts == [True] * count
    assert len(seen) == count
    assert seen.nbytes == MERGE_AT * 8
    assert all(url in seen for url in added)
    assert not any(url in seen for url in urls(count, count, "big.test"))
    assert seen.add_many(added[:1000]) == [False] * 1000
    assert not any(seen.add(url) for url in added[-1000:])


def test_add_many_with_urls_beyond_both_ends_of_the_array() -> None:
    seen = SeenSet(merge_at=1)
    added = urls(0, 64)
    seen.add_many(added)
    ordered = sorted(added, key=fingerprint)
    others = urls(64, 10_000)
    beyond = [u for u in others if fingerprint(u) > fingerprint(ordered[-1])][:3]
    below = [u for u in others if fingerprint(u) < fingerprint(ordered[0])][:3]
    batch = [*beyond, ordered[-1], *below, ordered[0]]
    assert seen.add_many(batch) == [True] * 3 + [False] + [True] * 3 + [False]


@pytest.mark.parametrize("top", [2**64, 2**63 - 1])
def test_fingerprints_are_kept_exactly(monkeypatch: pytest.MonkeyPatch, top: int) -> None:
    # Fingerprints 1 apart near 2**64 (or just under 2**63, where a batch would pass for
    # signed integers) round to one float: the set must compare them as the 64-bit unsigned
    # integers they are, in the array and in a batch lookup alike.
    monkeypatch.setattr(seen_module, "fingerprint", lambda url: top - int(url))
    seen = SeenSet(merge_at=3)
    assert seen.add("2") and seen.add("4") and seen.add("6")  # merged into the array
    assert seen.nbytes == 24
    assert not any(url in seen for url in ("1", "3", "5", "7"))
    assert all(url in seen for url in ("2", "4", "6"))
    assert seen.add_many(["4", "3", "6", "2", "5"]) == [False, True, False, False, True]


def test_each_merge_hands_freed_memory_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # A spy around glibc's malloc_trim (which still runs): one trim per merge.
    real = seen_module._malloc_trim
    assert real is not None
    trims: list[int] = []

    def spy(pad: int) -> int:
        trims.append(pad)
        return real(pad)

    monkeypatch.setattr(seen_module, "_malloc_trim", spy)
    seen = SeenSet(merge_at=3)
    seen.extend(urls(0, 7))
    assert trims == [0, 0]


def test_malloc_trim_is_found_in_the_c_library(monkeypatch: pytest.MonkeyPatch) -> None:
    trim = _trimmer()
    assert trim is not None and trim(0) in (0, 1)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert _trimmer() is None  # no C library found: merges simply do not trim
