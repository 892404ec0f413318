"""PageRank after a recrawl (issue 31): the graph is what crawl.db says now, and a gone page
casts no vote even when links of its old version are still listed."""

from __future__ import annotations

from pathlib import Path

from gossamer.rank import load_ranks, load_url_graph, rank_crawl

from ..index.fake_crawl import FakePage, html, make_crawl
from ..index.recrawl_folder import SECOND, recrawl

HOME, ONE, TWO, B = "http://a.test/", "http://a.test/1", "http://a.test/2", "http://b.test/"


def _first(folder: Path) -> Path:
    return make_crawl(
        folder,
        [
            FakePage(HOME, html("A", "home"), links=(ONE, B)),
            FakePage(ONE, html("One", "one"), links=(B,)),
            FakePage(B, html("B", "bee"), links=(HOME,)),
        ],
    )


def _edges(folder: Path) -> set[tuple[str, str]]:
    graph = load_url_graph(folder / "crawl.db")
    return {(graph.urls[s], graph.urls[d]) for s, d in zip(graph.src, graph.dst, strict=True)}


def test_changed_and_gone_pages_vote_as_crawl_db_says_now(tmp_path: Path) -> None:
    folder = _first(tmp_path)
    recrawl(
        folder,
        changed=[
            FakePage(HOME, html("A", "home again"), links=(TWO,)),
            FakePage(ONE, html("Not found", "none"), status=404),
        ],
    )
    assert _edges(folder) == {(HOME, TWO), (B, HOME)}
    rank_crawl(folder)
    ranks = load_ranks(folder)
    assert ranks is not None
    assert ranks.of_url(TWO) > ranks.of_url(ONE)  # ONE lost its only link in


def test_links_left_from_a_gone_page_are_not_counted(tmp_path: Path) -> None:
    folder = _first(tmp_path)
    # A 404 row over the page with its old links still listed, and a 429 (a passing fault,
    # whose old row a recrawl keeps anyway) whose links still count.
    make_crawl(
        folder,
        [
            FakePage(ONE, html("Not found", "none"), status=404, fetched_at=SECOND),
            FakePage(B, b"", status=429, fetched_at=SECOND),
        ],
    )
    assert _edges(folder) == {(HOME, ONE), (HOME, B), (B, HOME)}
