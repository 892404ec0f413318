"""page_row: the doc_id is the SHA-1 of the decoded content, however it was worked out."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from gossamer.fetch.result import FetchResult
from gossamer.store.rows import page_row
from gossamer.store.warc import WarcStore


def test_doc_id_is_the_content_s_sha1_with_or_without_a_content_coding(tmp_path: Path) -> None:
    html = b"<html><p>same words</p></html>" * 40
    plain = FetchResult(url="http://a.test/", status=200, body=html, content=html)
    zipped = FetchResult(
        url="http://a.test/z",
        status=200,
        response_headers=(("Content-Encoding", "gzip"),),
        body=gzip.compress(html, mtime=0),
        content=html,
    )
    with WarcStore(tmp_path) as store:
        for result in (plain, zipped):
            location = store.write(result)
            assert location.sha1 == hashlib.sha1(result.body).digest()
            for where in (location, None):
                row = page_row(result, where, depth=0, referrer=None, host="a.test")
                assert row.doc_id == hashlib.sha1(html).hexdigest()
    empty = FetchResult(url="http://a.test/e", status=204)
    assert page_row(empty, None, depth=0, referrer=None, host="a.test").doc_id is None
