"""A crawl folder and its recrawl, made by hand as the crawl side leaves them (issue 31).

A first crawl is ``make_crawl(..., cdxj=True)``; ``recrawl`` then changes the folder the way
``gossamer crawl --resume DIR --recrawl`` does (recrawl-contract.md): a changed, gone (404)
or moved (301) page gets a new record, a new ``pages`` row and loses its old out-links; a
page not modified gets a ``revisit`` record with the server-not-modified profile pointing
at its original, and its row stays as it was; a row may also vanish. No network, no
``schedule`` table: the index side must not need one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from io import BytesIO
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from gossamer.fetch.result import FetchResult
from gossamer.index import build_index
from gossamer.store import CrawlRecords
from gossamer.store.cdxj import CdxjWriter
from gossamer.store.revisits import LOCATION_FIELD
from gossamer.store.warc import WarcLocation, warc_date
from gossamer.store.warcscan import read_member

from .fake_crawl import START, FakePage, html, make_crawl

__all__ = ["NOT_MODIFIED", "SECOND", "recrawl", "recrawled_site"]

SECOND = START + 86_400.0  # the recrawl, a day after the first crawl
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
REVISITS_FILE = "recrawl-revisits.warc.gz"  # beside the WarcStore's own files


def recrawl(
    folder: Path,
    *,
    changed: Sequence[FakePage] = (),
    not_modified: Sequence[str] = (),
    dropped: Sequence[str] = (),
    at: float = SECOND,
    located: bool = True,
) -> None:
    """Change ``folder`` as a recrawl at ``at`` would (see the module docstring).
    ``located`` False: the revisits name their original by URL and date only, without
    ``Gossamer-Refers-To-Location``."""
    with closing(sqlite3.connect(folder / "crawl.db")) as conn, conn:
        for page in changed:  # the old version's out-links go; the new one's come
            conn.execute(
                "DELETE FROM links WHERE src = (SELECT id FROM urls WHERE url = ?)", (page.url,)
            )
        for url in dropped:
            conn.execute("DELETE FROM pages WHERE url = ?", (url,))
    make_crawl(folder, [replace(page, fetched_at=at) for page in changed], cdxj=True)
    for url in not_modified:
        _not_modified(folder, url, at, located)


HOME, KEEP, CHANGE, GONE, MOVED = (
    f"http://a.test/{p}" for p in ("", "keep", "change", "gone", "moved")
)
TWIN = "http://www.a.test/keep"  # another URL with the same SURT key as KEEP
HOSTILE = '"><script>alert(1)</script>'
FIRST_AT, SECOND_AT = "20231114221320", "20231115221320"  # the two crawls' CDXJ timestamps


def recrawled_site(folder: Path) -> Path:
    """A small site crawled, indexed, recrawled and indexed again: KEEP and HOME not
    modified (HOME's revisit without a location), CHANGE changed, GONE now 404, MOVED now a
    301 to a hostile Location."""
    make_crawl(
        folder,
        [
            FakePage(HOME, html("Home", "the start page")),
            FakePage(KEEP, html("Keep", "otters stay the same")),
            FakePage(TWIN, html("Twin", "another page")),
            FakePage(CHANGE, html("Walrus", "the walrus version")),
            FakePage(GONE, html("Quokka", "the quokka version")),
            FakePage(MOVED, html("Capybara", "the capybara version")),
        ],
        cdxj=True,
    )
    build_index(folder)
    recrawl(
        folder,
        changed=[
            FakePage(CHANGE, html("Narwhal", "the narwhal version")),
            FakePage(GONE, html("Not found", "no such page"), status=404),
            FakePage(MOVED, b"", status=301, location=HOSTILE),
        ],
        not_modified=[KEEP],
    )
    recrawl(folder, not_modified=[HOME], located=False)
    build_index(folder)
    return folder


def _not_modified(folder: Path, url: str, at: float, located: bool) -> None:
    """A 304 archived as a revisit record of the row's response, with its CDXJ line."""
    with CrawlRecords(folder / "crawl.db") as records:
        row = records.page(url)
    assert row is not None and row.warc_file is not None
    offset, length = row.warc_offset or 0, row.warc_length or 0
    with (folder / "warc" / row.warc_file).open("rb") as warc:
        warc.seek(offset)
        _, original = read_member(warc.read(length))
    out = BytesIO()
    writer = WARCWriter(out, gzip=True, warc_version="1.1")
    headers = [("ETag", '"v1"'), ("Date", "Wed, 15 Nov 2023 22:13:20 GMT")]
    fields = {
        "WARC-Date": warc_date(at),
        "WARC-Profile": NOT_MODIFIED,
        "WARC-Refers-To": original["warc-record-id"],
        "WARC-Refers-To-Target-URI": url,
        "WARC-Refers-To-Date": original["warc-date"],
    }
    if located:
        fields[LOCATION_FIELD] = f"{row.warc_file} {offset} {length}"
    record = writer.create_warc_record(
        url,
        "revisit",
        http_headers=StatusAndHeaders("304 Not Modified", headers, protocol="HTTP/1.1"),
        warc_headers_dict=fields,
    )
    writer.write_record(record)
    path = folder / "warc" / REVISITS_FILE
    start = path.stat().st_size if path.exists() else 0
    with path.open("ab") as archive:
        archive.write(out.getvalue())
    result = FetchResult(url, 304, "Not Modified", response_headers=tuple(headers), started_at=at)
    location = WarcLocation(REVISITS_FILE, start, len(out.getvalue()), revisit=True)
    with CdxjWriter(folder / "index.cdxj") as index:
        index.add(result, location)
