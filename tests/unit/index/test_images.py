"""Images of crawled pages: what describes each one (alt, title, caption, file name, nearby
words), kept per page in the image store by ``gossamer index``."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from gossamer.index import build_index
from gossamer.index.images import MAX_IMAGES, PageImage, file_words, images_of
from gossamer.index.imagestore import IMAGES_FILE, ImageStore
from gossamer.index.schema import INDEX_DIR

from .fake_crawl import START, FakePage, html, make_crawl

GALLERY = (
    '<figure><picture><img src="/img/red_fox.jpg" alt="A red fox"></picture>'
    "<figcaption>Winter  wildlife</figcaption></figure>"
    '<p>By the river an <img src="otter.png" title="otter swimming"> was playing.</p>'
    '<a href="/photos/Mountain-Lake.webp">the lake, large</a>'
    '<img src="data:image/png;base64,AAAA" alt="inline"> <img src="/img/red_fox.jpg" alt="again">'
    '<a href="/page.html">not an image</a>'
)


def test_each_image_once_with_what_describes_it() -> None:
    tree = LexborHTMLParser(f"<html><body>{GALLERY}</body></html>")
    found = images_of(tree, "http://a.test/animals/")
    fox = PageImage(
        "http://a.test/img/red_fox.jpg", "A red fox", caption="Winter wildlife",
        near="Winter wildlife",
    )  # fmt: skip
    otter = PageImage(
        "http://a.test/animals/otter.png", title="otter swimming",
        near="By the river an was playing.",
    )  # fmt: skip
    lake = PageImage("http://a.test/photos/Mountain-Lake.webp", "the lake, large")
    assert found == (fox, otter, lake)
    assert file_words("http://a.test/img/Red_Fox-2%20b.JPG") == "Red Fox 2 b"
    many = "".join(f'<img src="/i{n}.png">' for n in range(MAX_IMAGES + 50))
    assert len(images_of(LexborHTMLParser(many), "http://a.test/")) == MAX_IMAGES


def test_the_index_keeps_a_pages_images_and_replaces_them_when_it_is_fetched_again(
    tmp_path: Path,
) -> None:
    page = FakePage("http://a.test/animals/", html("Animals", "a page", extra=GALLERY))
    hidden = FakePage(
        "http://b.test/private",
        html("Hidden", "x", head='<meta name="robots" content="noindex">', extra=GALLERY),
    )
    folder = make_crawl(tmp_path / "c", [page, hidden])
    build_index(folder)
    path = folder / INDEX_DIR / IMAGES_FILE
    with ImageStore(path, readonly=True) as store:
        assert store.count() == 3
        (fox,) = store.search('"foxes"', 10)  # stemmed: foxes finds fox
        assert (fox.page_url, fox.page_title, fox.caption) == (
            page.url,
            "Animals",
            "Winter wildlife",
        )
        assert store.search('"lake"', 10)[0].url.endswith("Mountain-Lake.webp")  # file name
        assert not store.search('"private"', 10)  # the noindex page's images are not kept
    newer = FakePage(
        page.url, html("Animals", "b", extra='<img src="/owl.gif" alt="owl">'), fetched_at=START + 9
    )
    make_crawl(folder, [newer])
    build_index(folder)
    with ImageStore(path, readonly=True) as store:
        assert store.count() == 1
        assert not store.search('"fox"', 10)
        assert [row.alt for row in store.search('"owl"', 10)] == ["owl"]


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from('<>a img src href="[]:/.?#png jpg figure alt=x'), max_size=120)
)
def test_any_markup_gives_images_and_never_raises(markup: str) -> None:
    for image in images_of(LexborHTMLParser(markup), "http://a.test/"):
        assert image.url.startswith("http")
        file_words(image.url)


def test_an_index_older_than_the_image_store_says_how_to_get_its_images(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    page = FakePage("http://a.test/animals/", html("Animals", "a page", extra=GALLERY))
    folder = make_crawl(tmp_path / "c", [page])
    build_index(folder)
    (folder / INDEX_DIR / IMAGES_FILE).unlink()  # as an index made before images were kept
    with caplog.at_level(logging.WARNING, logger="gossamer.index.indexer"):
        build_index(folder)
    assert f"'rm -r {folder / INDEX_DIR}' and index again" in caplog.text
