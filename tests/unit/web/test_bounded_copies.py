"""A cached copy's cost is bounded: its size, the links rewritten, and the UI's wait for it."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from selectolax.lexbor import LexborHTMLParser

from gossamer.index import WarcReader
from gossamer.parse.bounded import BoundedTree, parse_bounded
from gossamer.store import CrawlRecords
from gossamer.web import make_app
from gossamer.web.cached import MAX_SHOWN, load_cached
from gossamer.web.links import MAX_REWRITTEN, relink

from ..index.fake_crawl import FakePage, make_crawl
from .served import Client, serve_and_check

DEEP_URL = "http://d.test/deep"
BIG_URL = "http://d.test/big"
LEAF_URL = "http://d.test/leaf"
DEEP = (
    "<title>Deep</title><a href='/leaf'>before</a>"
    + "<div>" * 50_000
    + "bottom <a href='http://elsewhere.test/'>inside</a>"
).encode()
BIG = b"<title>Big</title><p>" + b"word " * (MAX_SHOWN // 5 + 1000)


class NoneStored:
    def stored_pages(self, urls: object) -> set[str]:
        return set()


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = [
        FakePage(DEEP_URL, DEEP),
        FakePage(BIG_URL, BIG),
        FakePage(LEAF_URL, b"<title>Leaf</title>"),
    ]
    return make_crawl(tmp_path_factory.mktemp("bounded") / "crawl", pages)


def test_a_deep_copy_has_its_links_rewritten() -> None:
    tree = LexborHTMLParser(relink(DEEP.decode(), DEEP_URL, NoneStored()))
    hrefs = [(node.text(), node.attrs.get("href")) for node in tree.css("a")]
    assert hrefs == [("before", LEAF_URL), ("inside", "http://elsewhere.test/")]


def test_links_past_the_cap_are_left_as_text() -> None:
    page = "".join(f"<a href='/p{n}'>link {n}</a> " for n in range(MAX_REWRITTEN + 3))
    tree = LexborHTMLParser(relink(page, "http://d.test/", NoneStored()))
    anchors = tree.css("a")
    assert len(anchors) == MAX_REWRITTEN + 3
    assert anchors[MAX_REWRITTEN - 1].attrs.get("href") == f"http://d.test/p{MAX_REWRITTEN - 1}"
    assert [node.attrs.get("href") for node in anchors[MAX_REWRITTEN:]] == [None] * 3
    assert anchors[-1].text() == f"link {MAX_REWRITTEN + 2}"


def test_a_copy_shows_at_most_max_shown_bytes(crawl: Path) -> None:
    with (
        CrawlRecords(crawl / "crawl.db") as records,
        WarcReader(crawl / "warc") as reader,
    ):
        copy = load_cached(records, reader, BIG_URL)
        small = load_cached(records, reader, LEAF_URL)
    assert copy is not None and small is not None
    assert copy.cut == len(BIG) - MAX_SHOWN
    assert len(copy.body) <= MAX_SHOWN
    assert small.cut == 0

    frames: list[str] = []

    async def check(client: Client) -> None:
        response = await client.get("/cached", params={"url": BIG_URL})
        frames.append(await response.text())

    serve_and_check(crawl, check)
    assert f"first {MAX_SHOWN:,} bytes of {len(BIG):,}" in frames[0]


def test_the_ui_answers_while_a_copy_is_prepared(
    crawl: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The deep copy's parse starts, then waits until another request has been answered.
    # Prepared on the event loop, it would hold that answer back until its wait timed out.
    started, answered = threading.Event(), threading.Event()
    events: list[str] = []

    def held_parse(html: str, *, events: bool = False) -> BoundedTree:
        started.set()
        released = answered.wait(timeout=60)
        log.append("copy parsed" if released else "copy parsed, nothing answered")
        return parse_bounded(html, events=events)

    log = events
    monkeypatch.setattr("gossamer.web.links.parse_bounded", held_parse)

    async def check(client: Client) -> None:
        copy = asyncio.ensure_future(client.get("/cached/raw", params={"url": DEEP_URL}))
        await asyncio.to_thread(started.wait, 60)
        style = await client.get("/style.css")
        assert style.status == 200
        events.append("style answered")
        answered.set()
        response = await copy
        assert response.status == 200
        assert "bottom" in await response.text()
        events.append("copy answered")

    serve_and_check(make_app(crawl), check)
    assert events == ["style answered", "copy parsed", "copy answered"]
