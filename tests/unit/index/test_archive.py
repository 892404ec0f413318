"""Reading response records back from the WARC files by (file, offset, length)."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest

from gossamer.fetch.result import FetchResult
from gossamer.index import IndexingError, WarcReader
from gossamer.store import WarcStore
from gossamer.store.warcscan import Member, scan

from .fake_crawl import FakePage, html, make_crawl


def _locations(folder: Path) -> dict[str, tuple[str, int, int]]:
    conn = sqlite3.connect(folder / "crawl.db")
    try:
        rows = conn.execute("SELECT url, warc_file, warc_offset, warc_length FROM pages")
        return {url: (name, offset, length) for url, name, offset, length in rows}
    finally:
        conn.close()


def test_records_come_back_decoded(tmp_path: Path) -> None:
    plain = html("Plain", "plain text")
    packed = html("Packed", "gzip text " * 50)
    folder = make_crawl(
        tmp_path,
        [
            FakePage("http://a.test/plain", plain),
            FakePage("http://a.test/packed", packed, gzip=True),
        ],
    )
    where = _locations(folder)
    with WarcReader(folder / "warc") as reader:
        first = reader.read(*where["http://a.test/plain"])
        second = reader.read(*where["http://a.test/packed"])
    assert first.url == "http://a.test/plain"
    assert first.content == plain
    assert first.status == 200
    assert first.content_type == "text/html; charset=utf-8"
    assert first.crawled_at.year == 2023
    assert second.content == packed
    assert second.header("content-encoding") == "gzip"


def test_corrupt_coding_is_reported_not_raised(tmp_path: Path) -> None:
    with WarcStore(tmp_path) as store:
        location = store.write(
            FetchResult(
                url="http://a.test/lie",
                status=200,
                response_headers=(("Content-Encoding", "gzip"),),
                body=b"definitely not gzip",
            )
        )
    with WarcReader(tmp_path) as reader:
        response = reader.read(location.filename, location.offset, location.length)
    assert response.decode_error == "bad_encoding"
    assert response.content == b""


def test_bad_locations_raise_indexing_errors(tmp_path: Path) -> None:
    folder = make_crawl(tmp_path, [FakePage("http://a.test/", html("T", "x"))])
    name, offset, length = _locations(folder)["http://a.test/"]
    with WarcReader(folder / "warc") as reader:
        with pytest.raises(IndexingError, match="bad WARC file name"):
            reader.read("../crawl.db", 0, 10)
        with pytest.raises(IndexingError, match="cannot open"):
            reader.read("missing.warc.gz", 0, 10)
        with pytest.raises(IndexingError, match=r"corrupt WARC record|no response record"):
            reader.read(name, offset + 1, length)


def test_a_record_that_is_not_a_response_is_named_so(tmp_path: Path) -> None:
    with WarcStore(tmp_path) as store:
        location = store.write(FetchResult(url="http://a.test/", status=200, body=b"x"))
    [request] = [
        item
        for item in scan(tmp_path / location.filename)
        if isinstance(item, Member) and item.headers.get("warc-type") == "request"
    ]
    with WarcReader(tmp_path) as reader, pytest.raises(IndexingError, match="no response record"):
        reader.read(location.filename, request.offset, request.length)


def test_the_decoded_size_is_capped_as_the_crawl_capped_it(tmp_path: Path) -> None:
    packed = gzip.compress(b"a" * 5000)
    with WarcStore(tmp_path) as store:
        location = store.write(
            FetchResult(
                url="http://a.test/big",
                status=200,
                response_headers=(("Content-Encoding", "gzip"),),
                body=packed,
            )
        )
    where = (location.filename, location.offset, location.length)
    with WarcReader(tmp_path, max_decoded=4000) as reader:
        assert reader.read(*where).decode_error == "decompression_bomb"
    with WarcReader(tmp_path) as reader:
        assert reader.read(*where).content == b"a" * 5000
