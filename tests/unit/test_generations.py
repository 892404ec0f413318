"""The two-generation memory behind the crawl's per-link caches."""

from __future__ import annotations

from gossamer.generations import Generations


def test_keys_in_use_stay_and_the_rest_age_out() -> None:
    kept: Generations[str, int] = Generations(2)
    kept.put("a", 1)
    kept.put("b", 2)
    kept.put("c", 3)  # the young generation was full: a and b are now the old one
    assert kept.get("a") == 1  # moved back to the young generation (c, a)
    kept.put("d", 4)  # full again: (c, a) old, b dropped
    assert kept.get("b") is None
    assert (kept.get("a"), kept.get("c"), kept.get("d")) == (1, 3, 4)


def test_get_or_makes_a_missing_value_once_and_keeps_none_too() -> None:
    made: list[str] = []
    kept: Generations[str, str | None] = Generations(4)

    def make(key: str) -> str | None:
        made.append(key)
        return None if key == "bad" else key.upper()

    assert [kept.get_or(k, make) for k in ("x", "bad", "x", "bad")] == ["X", None, "X", None]
    assert made == ["x", "bad"]  # a kept None is a value, not a miss
