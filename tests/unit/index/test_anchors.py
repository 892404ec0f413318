"""Anchor text: links' words read from the pages, weighed, and indexed for their targets."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import tantivy
from selectolax.lexbor import LexborHTMLParser

from gossamer.index import INDEX_DIR, Fields, IndexingError, build_index, open_index
from gossamer.index.anchors import (
    CROSS_HOST_CAP,
    CROSS_HOST_WEIGHT,
    SAME_HOST_CAP,
    AnchorStore,
    anchor_values,
)
from gossamer.index.links import Anchor, anchors_of
from gossamer.search import RankingWeights, SearchEngine

from .fake_crawl import FakePage, html, make_crawl


def test_links_are_read_with_their_words_resolved_as_the_crawl_resolves_them() -> None:
    tree = LexborHTMLParser(
        '<base href="http://a.test/docs/"><nav><a href="wal.html#top">Write-ahead  log</a></nav>'
        '<a href="/img"><img alt="Logo picture"></a><a href="x" title="Named by title"></a>'
        '<a href="http://a.test/docs/page">itself</a><a href="javascript:go()">script</a>'
        '<a href="wal.html">Write-ahead  log</a><a href="empty"></a>'
    )
    assert anchors_of(tree, "http://a.test/docs/page") == (
        Anchor("http://a.test/docs/wal.html", "Write-ahead log"),
        Anchor("http://a.test/img", "Logo picture"),
        Anchor("http://a.test/docs/x", "Named by title"),
    )


def test_repeated_wordings_are_capped_and_other_hosts_weigh_more() -> None:
    menu = [("a.test", "Home")] * 50  # a menu entry on every page of the site
    others = [(f"h{i}.test", "great guide") for i in range(10)] + [("h0.test", "Great  guide")]
    values = anchor_values("a.test", menu + others)
    assert values.count("Home") == SAME_HOST_CAP
    assert values.count("great guide") == CROSS_HOST_WEIGHT * CROSS_HOST_CAP
    assert anchor_values("a.test", []) == []


def _nav(href: str, words: str) -> str:
    return f'<nav><a href="{href}">{words}</a></nav>'


def _pages() -> list[FakePage]:
    # The target comes first, so it is written before the page that names it.
    return [
        FakePage("http://a.test/target", html("Plain page", "nothing special here")),
        FakePage(
            "http://b.test/linker",
            html("Linker", "some text", extra=_nav("http://a.test/target", "zebra handbook")),
            links=("http://a.test/target",),
        ),
    ]


def _found(folder: Path, word: str, weights: RankingWeights | None = None) -> list[str]:
    with SearchEngine(folder, weights) as engine:
        return [hit.url for hit in engine.search(word).hits]


def test_a_page_is_found_by_the_words_of_links_to_it(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "crawl", _pages())
    report = build_index(folder)
    assert report.relinked == 1  # written before its in-link was read, then again
    # Only the link names the target; the link sits in a menu, so not in the linker's text.
    assert _found(folder, "zebra") == ["http://a.test/target"]
    assert _found(folder, "zebra", RankingWeights(anchor_boost=0.0)) == []
    # An excluded word is looked for in every text field, the words of links to the page
    # included (issue 28: "forest -river" must not return what "forest river" finds by links).
    assert _found(folder, "plain -zebra") == []


def test_links_found_by_a_later_run_reach_pages_indexed_before(tmp_path: Path) -> None:
    pages = _pages()
    folder = make_crawl(tmp_path / "crawl", pages[:1])
    build_index(folder)
    assert _found(folder, "zebra") == []
    shutil.rmtree(folder / "warc")
    (folder / "crawl.db").unlink()
    make_crawl(folder, pages)  # the same page again, and now its linker
    build_index(folder)
    assert _found(folder, "zebra") == ["http://a.test/target"]


def test_an_index_from_before_anchor_text_is_refused_then_rebuilt(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path / "crawl", _pages())
    old = tantivy.SchemaBuilder()
    old.add_text_field(Fields.URL, stored=True, tokenizer_name="raw")
    path = folder / INDEX_DIR / "tantivy"
    path.mkdir(parents=True)
    tantivy.Index(old.build(), path=str(path))
    with pytest.raises(IndexingError, match="older Gossamer; run 'gossamer index"):
        open_index(folder, create=False)
    report = build_index(folder)
    assert report.indexed == 2
    assert _found(folder, "zebra") == ["http://a.test/target"]


def test_an_anchor_store_of_the_first_layout_is_moved_into_the_interned_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "anchors.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE anchors (target TEXT NOT NULL, source TEXT NOT NULL, host TEXT NOT NULL,"
        " text TEXT NOT NULL, PRIMARY KEY (target, source, text)) WITHOUT ROWID;"
        "CREATE TABLE dirty (target TEXT PRIMARY KEY) WITHOUT ROWID;"
        "INSERT INTO anchors VALUES ('http://a.test/t', 'id1', 'b.test', 'zebra guide'),"
        " ('http://a.test/t', 'id2', 'c.test', 'zebra guide'), ('http://a.test/u', 'id1',"
        " 'b.test', 'other');"
        "INSERT INTO dirty VALUES ('http://a.test/u');"
    )
    old.commit()
    old.close()
    with AnchorStore(path) as store:
        assert store.dirty() == ["http://a.test/u"]
        assert store.values_for("http://a.test/t", "a.test") == ["zebra guide"] * (
            CROSS_HOST_WEIGHT * 2
        )
        store.replace("id1", "b.test", [Anchor("http://a.test/t", "new words")])
        assert sorted(store.dirty()) == ["http://a.test/t", "http://a.test/u"]
        assert sorted(store.values_for("http://a.test/u", "a.test")) == []
    tables = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    assert "anchors" not in tables and "dirty" not in tables


def test_links_to_a_redirect_name_the_page_it_leads_to(tmp_path: Path) -> None:
    linker = FakePage(
        "http://b.test/linker",
        html("Linker", "some text", extra=_nav("http://a.test/old", "zebra handbook")),
        links=("http://a.test/old",),
    )
    moved = [
        FakePage("http://a.test/old", b"", status=301, location="/older"),
        FakePage(
            "http://a.test/older", b"", status=308, location="/new", referrer="http://a.test/old"
        ),
        FakePage(
            "http://a.test/new",
            html("Plain page", "nothing special"),
            referrer="http://a.test/older",
        ),
    ]
    # Read in two runs: the link first, the redirects later; then all at once.
    folder = make_crawl(tmp_path / "twice", [linker])
    build_index(folder)
    assert _found(folder, "zebra") == []
    both = make_crawl(tmp_path / "once", [linker, *moved])
    build_index(both)
    assert _found(both, "zebra") == ["http://a.test/new"]
    shutil.rmtree(folder)
    folder = make_crawl(tmp_path / "twice", [linker])
    build_index(folder)
    make_crawl(folder, moved)  # a later crawl run found the redirects
    build_index(folder)
    assert _found(folder, "zebra") == ["http://a.test/new"]


def test_equally_weighted_wordings_come_out_in_one_order_whatever_the_row_order() -> None:
    rows = [(f"h{i}.test", f"wording {i % 7}") for i in range(200)]
    first = anchor_values("a.test", rows)
    assert anchor_values("a.test", list(reversed(rows))) == first
    assert first == sorted(first)  # all weigh the same here: by their words
