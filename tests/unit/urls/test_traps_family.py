"""URL families: the family key, and the rule that stops self-feeding chains (calendars).

The crawls here are breadth-first walks over link graphs given as functions, with the same
(url, depth, referrer) the crawler's admission hands to :class:`TrapFamilies`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gossamer.urls.traps import MAX_FAMILY, TrapFamilies, family_key

SITE = "http://a.test"
Links = Callable[[str], list[str]]


@dataclass
class Walk:
    admitted: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)


def walk(links: Links, families: TrapFamilies, seed: str = SITE + "/") -> Walk:
    """Breadth-first from ``seed``: each URL is offered once per page that links to it."""
    result = Walk()
    seen = {seed}
    queue = deque([(seed, 0)])
    while queue:
        url, depth = queue.popleft()
        result.admitted.append(url)
        for target in links(url):
            if target in seen:
                continue
            if families.verdict(target, depth + 1, url) is not None:
                result.refused.add(target)
                continue
            seen.add(target)
            queue.append((target, depth + 1))
    return result


def _number(url: str, name: str) -> int:
    return int(url.rpartition(name)[2])


# -- the family key -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("url", "family"),
    [
        ("http://a.test/cal/2026/11", "a.test/cal/#/#"),
        ("http://a.test/day/2026-11-23/", "a.test/day/#-#-#/"),
        ("http://a.test/d/20261123", "a.test/d/#"),
        ("http://a.test/events/11/23?view=week", "a.test/events/#/#?view=week"),
        ("http://a.test/list?page=17&sort=new", "a.test/list?page=#&sort=new"),
        ("http://a.test/post/12345", "a.test/post/#"),
        ("http://a.test/archive/2026/Nov/", "a.test/archive/#/#/"),
        ("http://a.test/archive/november-2026", "a.test/archive/#-#"),
        ("http://a.test/s?q=2026", "a.test/s?q=#"),
        ("http://a.test/s?2026-11", "a.test/s?#-#"),  # a query without a key
        ("http://a.test/v2/x1?k9=a", "a.test/v#/x#?k9=a"),  # keys stay as they are
        ("http://a.test/a%20b/7", "a.test/a%20b/#"),  # a percent-escape is not a number
        ("https://a.test:8443/cal/1999/01", "a.test/cal/#/#"),  # the host name, as politeness
        ("http://a.test/", None),
        ("http://a.test/about/team.html", None),
        ("http://a.test/a%20b?x=y", None),
        ("http://h1.test/about", None),  # numbers in the host name are not masked
        ("http://a.test/janitor/mayor", None),  # month names only as whole words
    ],
)
def test_family_key(url: str, family: str | None) -> None:
    assert family_key(url) == family


@given(st.integers(0, 99_999), st.integers(1, 12), st.integers(0, 10**12))
def test_members_differing_only_by_numbers_share_a_family(year: int, month: int, n: int) -> None:
    url = f"http://a.test/cal/{year}/{month:02d}?page={n}"
    assert family_key(url) == "a.test/cal/#/#?page=#"


# -- calendars ------------------------------------------------------------------------------
def calendar(url: str) -> list[str]:
    """The bundled test web's trap: home links January, each month only the month after."""
    if url.endswith("/"):
        return [SITE + "/cal/2020/01", SITE + "/about"]
    if "/cal/" not in url:
        return []
    _, year, month = url.rsplit("/", 2)
    y, m = (int(year) + 1, 1) if month == "12" else (int(year), int(month) + 1)
    return [f"{SITE}/cal/{y}/{m:02d}"]


@pytest.mark.parametrize("limit", [1, 10, MAX_FAMILY])
def test_a_calendar_chain_stops_at_the_limit(limit: int) -> None:
    result = walk(calendar, TrapFamilies(limit))
    months = [url for url in result.admitted if "/cal/" in url]
    assert len(months) == limit
    assert len(result.refused) == 1  # the next month, once: the chain is cut there
    assert SITE + "/about" in result.admitted


def test_the_default_stops_a_calendar_long_before_the_host_budget() -> None:
    result = walk(calendar, TrapFamilies())
    assert sum("/cal/" in url for url in result.admitted) == MAX_FAMILY


def test_a_calendar_with_days_and_spelt_months_is_one_family() -> None:
    names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    def days(url: str) -> list[str]:
        if url.endswith("/"):
            return [SITE + "/events/2020/jan/1"]
        _, year, month, day = url.rsplit("/", 3)
        index = names.index(month) * 28 + int(day)  # 28-day months are enough here
        y, index = int(year) + index // (12 * 28), index % (12 * 28)
        return [f"{SITE}/events/{y}/{names[index // 28]}/{index % 28 + 1}"]

    result = walk(days, TrapFamilies(50))
    assert len(result.admitted) == 1 + 50


# -- what it must leave alone ---------------------------------------------------------------
def blog(posts: int, per_index: int, *, chained_index: bool) -> Links:
    """Index pages listing ``per_index`` posts each; every post links its neighbours. The
    index pages hang off the home page, or (``chained_index``) each links only the next."""
    pages = -(-posts // per_index)

    def links(url: str) -> list[str]:
        if url.endswith("/"):
            first = range(1, 2) if chained_index else range(1, pages + 1)
            return [f"{SITE}/archive?page={k}" for k in first]
        if "/archive?" in url:
            k = _number(url, "=")
            listed = range((k - 1) * per_index + 1, min(k * per_index, posts) + 1)
            onward = [f"{SITE}/archive?page={k + 1}"] if chained_index and k < pages else []
            return [f"{SITE}/post/{n}" for n in listed] + onward
        n = _number(url, "/")
        return [f"{SITE}/post/{m}" for m in (n - 1, n + 1) if 1 <= m <= posts]

    return links


@pytest.mark.parametrize(("per_index", "chained"), [(100, False), (100, True), (500, True)])
def test_a_flat_listing_of_5000_posts_is_never_cut(per_index: int, chained: bool) -> None:
    result = walk(blog(5_000, per_index, chained_index=chained), TrapFamilies())
    assert not result.refused
    assert sum("/post/" in url for url in result.admitted) == 5_000


def test_related_items_fan_out_without_being_cut() -> None:
    # Every product links ten others: self-fed, but the family spreads instead of deepening.
    def shop(url: str) -> list[str]:
        if url.endswith("/"):
            return [SITE + "/product/1"]
        n = _number(url, "/")
        return [f"{SITE}/product/{(n * 7 + k) % 20_000 + 1}" for k in range(10)]

    result = walk(shop, TrapFamilies())
    assert not result.refused
    assert len(result.admitted) == 1 + 20_000


def pagination(pages: int, window: int) -> Links:
    """``/list?page=N`` linking the ``window`` pages either side (1: only prev and next) and,
    when ``window`` > 1, the first and last pages as most listings do."""

    def links(url: str) -> list[str]:
        if url.endswith("/"):
            return [SITE + "/list?page=1"]
        n = _number(url, "=")
        near = range(max(1, n - window), min(pages, n + window) + 1)
        ends = [1, pages] if window > 1 else []
        return [f"{SITE}/list?page={k}" for k in (*near, *ends) if k != n]

    return links


def test_pagination_with_page_numbers_is_crawled_whole() -> None:
    result = walk(pagination(300, window=5), TrapFamilies())
    assert not result.refused
    assert len(result.admitted) == 1 + 300


def test_pagination_with_only_next_links_is_cut_like_a_calendar() -> None:
    # A 300-page listing reachable only through "next" cannot be told from a calendar: its
    # first MAX_FAMILY pages are crawled (documented in TrapFamilies).
    result = walk(pagination(300, window=1), TrapFamilies())
    assert len(result.admitted) == 1 + MAX_FAMILY
    assert result.refused == {f"{SITE}/list?page={MAX_FAMILY + 1}"}


def test_a_member_found_outside_its_family_is_never_refused() -> None:
    families = TrapFamilies(3)
    for depth in range(1, 10):  # a chain, fed by itself
        families.verdict(f"{SITE}/cal/{depth + 1}", depth, f"{SITE}/cal/{depth}")
    assert families.verdict(f"{SITE}/cal/99", 40, f"{SITE}/index") is None
    assert families.verdict(f"{SITE}/cal/99", 40, f"{SITE}/cal/98") == "trap_family"


def test_a_shallower_member_lowers_the_family_and_families_are_per_host() -> None:
    families = TrapFamilies(5)
    assert families.verdict(f"{SITE}/p/2", 20, f"{SITE}/p/1") is None  # reaches depth 19
    assert families.verdict(f"{SITE}/p/3", 24, f"{SITE}/p/2") == "trap_family"
    assert families.verdict("http://b.test/p/3", 24, "http://b.test/p/2") is None
    assert families.verdict(f"{SITE}/p/9", 2, f"{SITE}/") is None  # now reaches depth 2
    assert families.verdict(f"{SITE}/p/4", 6, f"{SITE}/p/3") is None
    assert families.verdict(f"{SITE}/p/5", 7, f"{SITE}/p/4") == "trap_family"


# -- memory ---------------------------------------------------------------------------------
def test_memory_is_bounded_with_100000_families() -> None:
    families = TrapFamilies(capacity=1_000)
    for n in range(100_000):
        # A distinct self-feeding family each time (only the letters differ between them).
        family = "".join(chr(107 + int(d)) for d in str(n))
        families.verdict(f"http://h.test/{family}/2", 2, f"http://h.test/{family}/1")
        assert len(families) <= 1_000
    assert len(families) == 1_000


def test_families_that_never_feed_themselves_take_no_memory() -> None:
    families = TrapFamilies(capacity=10)
    for n in range(10_000):
        families.verdict(f"{SITE}/item-{n}-x/{n}", 1, f"{SITE}/")
    assert len(families) == 0


def test_a_running_chain_stays_remembered_while_others_pass_through() -> None:
    families = TrapFamilies(50, capacity=100)
    refused_at = None
    for step in range(1, 200):
        for n in range(30):  # other families, more of them than the table holds over time
            name = "".join(chr(107 + int(d)) for d in f"{step}{n:02d}")
            families.verdict(f"{SITE}/{name}/2", step, f"{SITE}/{name}/1")
        if families.verdict(f"{SITE}/cal/{step + 1}", step + 1, f"{SITE}/cal/{step}"):
            refused_at = step + 1
            break
    assert refused_at == 51  # 50 hops below cal/1, the shallowest member (depth 1)


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        TrapFamilies(0)
    with pytest.raises(ValueError):
        TrapFamilies(capacity=0)
