"""URL families kept beyond one process: what :class:`TrapFamilies` tells its owner to keep,
and a crawl restored from it (issue 27).

A walk here is the breadth-first crawl of ``test_traps_family``, stopped after some pages and
picked up by a new :class:`TrapFamilies` restored from what the stopped one asked to keep, as a
resumed crawl is restored from ``crawl.db``.
"""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from gossamer.urls.traps import TrapFamilies, family_host, family_key

SITE = "http://a.test"


def calendar(url: str) -> list[str]:
    """Every month links to the next one only; the root links to the first month and to an
    index, whose page links to one month of another year (a second entry into the family)."""
    if url == SITE + "/":
        return [SITE + "/cal/1", SITE + "/index"]
    if url == SITE + "/index":
        return [SITE + "/cal/5000"]
    return [f"{SITE}/cal/{int(url.rpartition('/')[2]) + 1}"]


class Kept:
    """What a crawl database does with the rows ``keep`` hands it: the smaller depth wins."""

    def __init__(self) -> None:
        self.rows: dict[str, int] = {}
        self.writes = 0

    def keep(self, family: str, depth: int) -> None:
        self.writes += 1
        self.rows[family] = min(depth, self.rows.get(family, depth))


def crawl(limit: int, stops: list[int], kept: Kept | None) -> list[str]:
    """URLs fetched by a walk stopped after each count of ``stops`` pages and resumed with its
    queue and seen-set (the frontier's part of a resume) and, unless ``kept`` is None, with
    the families kept so far; otherwise with none, as before issue 27."""
    store = Kept() if kept is None else kept
    families = TrapFamilies(limit, keep=store.keep)
    fetched: list[str] = []
    seen = {SITE + "/"}
    queue = deque([(SITE + "/", 0)])
    pending = sorted(stops)
    while queue:
        if pending and len(fetched) == pending[0]:
            pending.pop(0)
            families = TrapFamilies(limit, keep=store.keep)
            if kept is not None:
                families.restore(kept.rows.items())
        url, depth = queue.popleft()
        fetched.append(url)
        for target in calendar(url):
            if target in seen or families.verdict(target, depth + 1, url) is not None:
                continue
            seen.add(target)
            queue.append((target, depth + 1))
    return fetched


@given(
    limit=st.integers(min_value=1, max_value=40),
    stops=st.lists(st.integers(min_value=1, max_value=120), max_size=4),
)
def test_a_crawl_stopped_and_restored_fetches_what_one_run_fetches(
    limit: int, stops: list[int]
) -> None:
    whole = crawl(limit, [], Kept())
    assert crawl(limit, stops, Kept()) == whole


def test_without_the_kept_families_each_restart_gives_the_calendar_more() -> None:
    whole = crawl(20, [], Kept())
    restarted = crawl(20, [10], None)
    assert len(restarted) > len(whole)  # what issue 27 saw: 156 pages instead of 100


def test_keep_hears_a_family_once_and_again_only_when_it_gets_shallower() -> None:
    kept = Kept()
    families = TrapFamilies(100, keep=kept.keep)
    for step in range(10, 30):  # a chain from depth 10
        families.verdict(f"{SITE}/cal/{step + 1}", step + 1, f"{SITE}/cal/{step}")
    families.verdict(f"{SITE}/other/7", 3, f"{SITE}/")  # not self-fed: nothing to keep
    assert kept.writes == 1
    assert kept.rows == {"a.test/cal/#": 10}
    families.verdict(f"{SITE}/cal/90", 5, f"{SITE}/cal/89")  # a shallower member
    families.verdict(f"{SITE}/cal/91", 6, f"{SITE}/cal/90")
    assert kept.writes == 2
    assert kept.rows == {"a.test/cal/#": 4}


def test_a_replay_of_the_same_links_after_a_restore_keeps_nothing_new() -> None:
    offers = [(f"{SITE}/cal/{n + 1}", n + 1, f"{SITE}/cal/{n}") for n in range(1, 12)]
    kept = Kept()
    first = TrapFamilies(5, keep=kept.keep)
    verdicts = [first.verdict(*offer) for offer in offers]
    replayed = Kept()
    again = TrapFamilies(5, keep=replayed.keep)
    again.restore(kept.rows.items())
    assert [again.verdict(*offer) for offer in offers] == verdicts
    assert replayed.writes == 0
    assert verdicts.count("trap_family") == 7  # depths 6 to 12: 5 hops below cal/1


def test_restore_takes_the_smaller_depth_and_keeps_the_last_past_capacity() -> None:
    families = TrapFamilies(3, capacity=2)
    families.restore([("a.test/p/#", 9), ("a.test/p/#", 1), ("a.test/q/#", 1), ("a.test/r/#", 1)])
    assert len(families) == 2
    # p, pushed out, starts over at the depth it is met at; r is remembered at depth 1.
    assert families.verdict(f"{SITE}/p/2", 10, f"{SITE}/p/1") is None
    assert families.verdict(f"{SITE}/r/2", 4, f"{SITE}/r/1") == "trap_family"


def test_family_host_is_the_host_name_a_key_starts_with() -> None:
    for url in ("http://a.test:8080/cal/2026/01", "https://[::1]:8443/p/7?x=1"):
        family = family_key(url)
        assert family is not None
        assert family_host(family) == url.split("//")[1].rsplit(":", 1)[0]
