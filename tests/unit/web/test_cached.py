"""Cached copies: an archived response read back and made safe to serve, type by type."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.index import IndexReport, WarcReader, build_index
from gossamer.rank import rank_crawl
from gossamer.store import CrawlRecords
from gossamer.testweb.pdf import make_pdf
from gossamer.web.cached import CachedCopy, load_cached

from ..index.fake_crawl import FakePage, html, make_crawl
from .served import Client, serve_and_check

HTML_UTF8 = "text/html; charset=utf-8"
DECODED_CAP = 10_000  # the reader's decoded-size cap in these tests
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
PAGES = {
    "latin": FakePage(
        "http://a.test/latin",
        "<!DOCTYPE html><title>Caf\xe9</title><p>cr\xe8me br\xfbl\xe9e</p>".encode("latin-1"),
        "text/html; charset=iso-8859-1",
    ),
    "meta": FakePage(
        "http://a.test/meta",
        b'<!DOCTYPE html><meta charset="windows-1252"><p>\x93quoted\x94</p>',
        "text/html",
    ),
    "gzip": FakePage("http://a.test/gzip", html("Zipped", "inflated again"), gzip=True),
    "bomb": FakePage("http://a.test/bomb", b"<p>" + b" " * (DECODED_CAP * 10), gzip=True),
    "pdf": FakePage(
        "http://a.test/manual.pdf",
        make_pdf("Backup <b>manual</b>", ["restore with <script>alert(1)</script>"]),
        "application/pdf",
    ),
    "text": FakePage(
        "http://a.test/notes.txt",
        "na\xefve <b>notes</b>".encode("latin-1"),
        "text/plain; charset=latin-1",
    ),
    "png": FakePage("http://a.test/logo.png", PNG, "image/PNG; name=logo"),
    "svg": FakePage("http://a.test/logo.svg", b"<svg onload=alert(1)></svg>", "image/svg+xml"),
    "binary": FakePage("http://a.test/app.bin", b"\0" * 1234, "application/octet-stream"),
    "untyped": FakePage("http://a.test/untyped", b"\0" * 7, ""),
}
Load = Callable[[str], CachedCopy | None]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_crawl(tmp_path_factory.mktemp("cached") / "crawl", PAGES.values())


@contextmanager
def loader(folder: Path) -> Iterator[Load]:
    with (
        CrawlRecords(folder / "crawl.db") as records,
        WarcReader(folder / "warc", max_decoded=DECODED_CAP) as reader,
    ):
        yield lambda url: load_cached(records, reader, url)


@pytest.fixture
def load(crawl: Path) -> Iterator[Load]:
    with loader(crawl) as loading:
        yield loading


def copy_of(load: Load, name: str) -> CachedCopy:
    copy = load(PAGES[name].url)
    assert copy is not None
    assert copy.url == PAGES[name].url
    return copy


def test_a_url_never_archived_has_no_copy(load: Load) -> None:
    assert load("http://a.test/never-fetched") is None


@pytest.mark.parametrize(
    ("name", "text"),
    [("latin", "<p>cr\xe8me br\xfbl\xe9e</p>"), ("meta", "<p>\u201cquoted\u201d</p>")],
)
def test_html_is_served_as_utf8_whatever_it_was(load: Load, name: str, text: str) -> None:
    copy = copy_of(load, name)
    assert copy.content_type == HTML_UTF8
    assert text in copy.body.decode("utf-8")
    assert copy.crawled.startswith("2023-11-14T22:13:20")  # the WARC-Date of the response


def test_a_content_encoding_is_removed(load: Load) -> None:
    copy = copy_of(load, "gzip")
    assert copy.content_type == HTML_UTF8
    assert b"inflated again" in copy.body


def test_a_body_that_decodes_past_the_cap_is_described(load: Load) -> None:
    copy = copy_of(load, "bomb")
    assert copy.content_type == HTML_UTF8
    assert b"The archived body is corrupt (decompression_bomb)." in copy.body
    assert len(copy.body) < 200


def test_a_pdf_becomes_its_text_escaped(load: Load) -> None:
    copy = copy_of(load, "pdf")
    assert copy.content_type == HTML_UTF8
    body = copy.body.decode("utf-8")
    assert "<title>Backup &lt;b&gt;manual&lt;/b&gt;</title>" in body
    assert "restore with &lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>" not in body


def test_text_is_served_as_utf8_plain_text(load: Load) -> None:
    copy = copy_of(load, "text")
    assert copy.content_type == "text/plain; charset=utf-8"
    assert copy.body == "na\xefve <b>notes</b>".encode()


def test_common_images_are_served_as_they_are(load: Load) -> None:
    copy = copy_of(load, "png")
    assert (copy.body, copy.content_type) == (PNG, "image/png")


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("svg", "27 bytes of image/svg+xml, not shown."),
        ("binary", "1234 bytes of application/octet-stream, not shown."),
        ("untyped", "7 bytes of unknown type, not shown."),
    ],
)
def test_other_types_are_described_not_shown(load: Load, name: str, note: str) -> None:
    copy = copy_of(load, name)
    assert copy.content_type == HTML_UTF8
    assert copy.body == f"<!DOCTYPE html><meta charset=utf-8><p>{note}</p>".encode()


def damaged(crawl: Path, tmp_path: Path, sql: str) -> Path:
    """A copy of ``crawl`` whose row for the gzip page is changed by ``sql``."""
    folder = tmp_path / "damaged"
    shutil.copytree(crawl, folder)
    conn = sqlite3.connect(folder / "crawl.db")
    with conn:
        conn.execute(sql, (PAGES["gzip"].url,))
    conn.close()
    return folder


def test_a_row_without_a_record_has_no_copy(crawl: Path, tmp_path: Path) -> None:
    folder = damaged(crawl, tmp_path, "UPDATE pages SET warc_file = NULL WHERE url = ?")
    with loader(folder) as load:
        assert load(PAGES["gzip"].url) is None


def test_a_record_that_cannot_be_read_is_described(crawl: Path, tmp_path: Path) -> None:
    sql = "UPDATE pages SET warc_offset = warc_offset + 3 WHERE url = ?"
    with loader(damaged(crawl, tmp_path, sql)) as load:
        copy = load(PAGES["gzip"].url)
    assert copy is not None
    assert (copy.crawled, copy.content_type) == ("", HTML_UTF8)
    assert copy.body.startswith(b"<!DOCTYPE html><meta charset=utf-8><p>")
    assert b"The archived copy cannot be read: " in copy.body


ORIGINAL = "http://a.test/mirror/original"
DUPLICATE = "http://b.test/mirror/copy"
MIRRORED = html("Mirrored handbook", "Every mirror of this handbook says the same thing. " * 20)


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, IndexReport]:
    """Two pages with one body: the second is archived as a revisit record."""
    folder = tmp_path_factory.mktemp("mirrored") / "crawl"
    make_crawl(folder, [FakePage(ORIGINAL, MIRRORED), FakePage(DUPLICATE, MIRRORED)])
    report = build_index(folder)
    rank_crawl(folder)
    return folder, report


def test_the_duplicate_is_archived_as_a_revisit_and_indexed(
    mirrored: tuple[Path, IndexReport],
) -> None:
    folder, report = mirrored
    kinds = []
    for path in sorted((folder / "warc").glob("*.warc.gz")):
        with path.open("rb") as stream:
            kinds += [record.rec_type for record in ArchiveIterator(stream)]
    assert kinds.count("revisit") == 1
    assert report.indexed == 2
    assert report.exact_duplicates == 1
    with sqlite3.connect(folder / "crawl.db") as conn:
        doc_ids = {url: doc for url, doc in conn.execute("SELECT url, doc_id FROM pages")}
    assert doc_ids[ORIGINAL] == doc_ids[DUPLICATE] is not None


def test_the_cached_copy_of_a_duplicate_shows_the_original_body(
    mirrored: tuple[Path, IndexReport],
) -> None:
    folder, _ = mirrored

    async def check(client: Client) -> None:
        raw = await client.get("/cached/raw", params={"url": DUPLICATE})
        assert raw.status == 200
        assert await raw.read() == MIRRORED
        framed = await (await client.get("/cached", params={"url": DUPLICATE})).text()
        assert "/cached/raw?url=http%3A%2F%2Fb.test%2Fmirror%2Fcopy" in framed
        results = await (await client.get("/search", params={"q": "mirrored handbook"})).text()
        assert "1 other page with the same content" in results

    serve_and_check(folder, check)
