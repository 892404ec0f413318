"""A rendered page's DOM: written right after its response as a ``urn:dom:`` resource record
(its screenshot, if any, as ``urn:view:`` after it) that warcio reads as valid WARC, and read
back by its response's place alone."""

from __future__ import annotations

from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from gossamer.fetch import FetchResult
from gossamer.store.dom import dom_after
from gossamer.store.records import MemberFiles
from gossamer.store.warc import WarcStore

DOM = "<html><body><h1>Built</h1><a href='/p/1.html'>ré</a></body></html>".encode()


PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16


def _page(url: str, rendered: bytes | None) -> FetchResult:
    body = b"<html><script src='/app.js'></script></html>"
    return FetchResult(
        url=url, status=200, body=body, content=body, content_type="text/html",
        response_headers=(("Content-Type", "text/html"),), started_at=1_700_000_000.0,
        render="rendered" if rendered else "", rendered=rendered,
        screenshot=PNG if rendered else None,
    )  # fmt: skip


def test_the_dom_is_read_back_from_the_response_s_place(tmp_path: Path) -> None:
    with WarcStore(tmp_path) as store:
        shell = store.write(_page("http://a.test/", DOM), {"gossamer-purpose": "page"})
        plain = store.write(_page("http://a.test/plain", None), {"gossamer-purpose": "page"})
    files = MemberFiles(tmp_path)
    try:
        read = dom_after(files, shell.filename, shell.offset, shell.length, "http://a.test/")
        assert read == DOM
        # not another page's: the member after a page without one is its request record
        assert (
            dom_after(files, plain.filename, plain.offset, plain.length, "http://a.test/plain")
            is None
        )
    finally:
        files.close()
    (warc,) = tmp_path.glob("*.warc.gz")
    with warc.open("rb") as stream:
        records = [
            (r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
            for r in ArchiveIterator(stream, check_digests=True)
        ]
    assert ("resource", "urn:dom:http://a.test/", DOM) in records
    assert ("resource", "urn:view:http://a.test/", PNG) in records  # its screenshot
    assert [kind for kind, _, _ in records].count("resource") == 2
