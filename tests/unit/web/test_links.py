"""Links inside a cached copy lead to another cached copy or to the live page in a new tab."""

from __future__ import annotations

from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

from gossamer.store import CrawlRecords
from gossamer.web import CACHED_POLICY
from gossamer.web.cached import CachedCopy
from gossamer.web.links import relink, relinked

from .rough_crawl import ABOUT_URL, BASE_URL, GONE_URL, LINKS_URL
from .served import Client, serve_and_check

CACHED_ABOUT = "/cached?url=http%3A%2F%2Fr.test%2Fabout"
Attrs = dict[str, str | None]


def links_of(html: str) -> dict[str, Attrs]:
    """Each link's text (or area alt) -> its attributes."""
    tree = LexborHTMLParser(html)
    return {
        node.text() or node.attrs.get("alt") or "": dict(node.attrs) for node in tree.css("a, area")
    }


def served_copy(folder: Path, url: str) -> str:
    pages: list[str] = []

    async def check(client: Client) -> None:
        response = await client.get("/cached/raw", params={"url": url})
        assert response.status == 200
        assert response.headers["Content-Security-Policy"] == CACHED_POLICY
        pages.append(await response.text())

    serve_and_check(folder, check)
    return pages[0]


def test_links_to_stored_pages_open_their_cached_copy(rough: Path) -> None:
    links = links_of(served_copy(rough, LINKS_URL))
    for text in ("relative, crawled", "absolute with a fragment, crawled", "map area"):
        attrs = links[text]
        assert (attrs["href"], attrs["target"]) == (CACHED_ABOUT, "_top")
        assert "rel" not in attrs


def test_other_links_open_the_live_page_in_a_new_tab(rough: Path) -> None:
    links = links_of(served_copy(rough, LINKS_URL))
    live = {"target": "_blank", "rel": "noopener noreferrer"}
    assert links["relative, never crawled"] == {"href": "http://r.test/elsewhere?x=1"} | live
    # The page's own target and rel are replaced, not kept beside ours.
    assert links["live"] == {"href": "https://live.test/x?a=1&b=2"} | live
    # Crawled, but its copy is a 404 page: the live URL is the better guess.
    assert links["crawled, but a 404"] == {"href": GONE_URL} | live


def test_in_page_and_unusable_links(rough: Path) -> None:
    links = links_of(served_copy(rough, LINKS_URL))
    assert links["a place on this page"] == {"href": "#part"}
    assert links["script"] == {}
    assert links["mail"] == {}
    assert links["unparseable"] == {}


def test_relative_links_follow_the_base_element(rough: Path) -> None:
    links = links_of(served_copy(rough, BASE_URL))
    assert links["up to about"] == {"href": CACHED_ABOUT, "target": "_top"}
    assert links["beside"]["href"] == "http://r.test/sub/dir/page"


def test_the_rest_of_the_page_is_kept(rough: Path) -> None:
    html = served_copy(rough, LINKS_URL)
    assert html.startswith("<!DOCTYPE html>")
    assert "<h1>Link collection</h1><p>links everywhere</p>" in html
    assert '<h2 id="part">Part</h2>' in html


def test_which_pages_were_stored_is_asked_in_batches(rough: Path) -> None:
    asked = [f"http://nowhere.test/{n}" for n in range(1200)]
    asked[700:700] = [ABOUT_URL, GONE_URL, LINKS_URL, ABOUT_URL]
    with CrawlRecords(rough / "crawl.db") as records:
        assert records.stored_pages(asked) == {ABOUT_URL, LINKS_URL}
        assert records.stored_pages([]) == set()


def test_a_page_without_links_and_other_types_are_left_as_they_are(rough: Path) -> None:
    with CrawlRecords(rough / "crawl.db") as records:
        plain = "<!DOCTYPE html><p>no links <b>here</b>"
        assert relink(plain, ABOUT_URL, records) == plain
        text = CachedCopy(ABOUT_URL, "", b'<a href="/about">x</a>', "text/plain; charset=utf-8")
        assert relinked(text, records) is text
