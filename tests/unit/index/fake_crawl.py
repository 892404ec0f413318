"""Crawl folders made by hand: WARC records and crawl.db rows from FetchResults, no network.

The index, rank, search and web tests share this; the integration tests crawl for real.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gossamer.fetch.result import FetchResult
from gossamer.index import build_index
from gossamer.rank import rank_crawl
from gossamer.store import MetadataDB, WarcStore, page_row
from gossamer.store.cdxj import CdxjWriter
from gossamer.testweb.pdf import make_pdf

START = 1_700_000_000.0


@dataclass(frozen=True, slots=True)
class FakePage:
    url: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    links: tuple[str, ...] = ()
    gzip: bool = False
    fetched_at: float = START
    referrer: str | None = None  # the page (or redirect) that led the crawl here
    location: str | None = None  # a redirect's Location


def html(title: str, text: str, *, extra: str = "", head: str = "") -> bytes:
    return (
        f'<!DOCTYPE html><html lang="en"><head><title>{title}</title>{head}</head>'
        f"<body><h1>{title}</h1><p>{text}</p>{extra}</body></html>"
    ).encode()


def make_crawl(folder: Path, pages: Iterable[FakePage], *, cdxj: bool = False) -> Path:
    """Write ``pages`` as a crawl folder (``warc/`` + ``crawl.db``, and ``index.cdxj`` lines
    when ``cdxj``) and return the folder. Called again on the same folder, it adds to it as
    a resumed crawl would: a page met again gets a new record and its row is replaced."""
    ticks = iter(range(10**6))
    with (
        WarcStore(folder / "warc", clock=lambda: START) as warc,
        MetadataDB(folder / "crawl.db", clock=lambda: START + next(ticks)) as db,
        CdxjWriter(folder / "index.cdxj") if cdxj else nullcontext() as index,
    ):
        for page in pages:
            headers: list[tuple[str, str]] = [("Content-Type", page.content_type)]
            if page.location is not None:
                headers.append(("Location", page.location))
            body = page.body
            if page.gzip:
                body = gzip.compress(page.body, mtime=0)
                headers.append(("Content-Encoding", "gzip"))
            result = FetchResult(
                url=page.url,
                status=page.status,
                reason="OK" if page.status == 200 else "",
                response_headers=tuple(headers),
                body=body,
                content=page.body,
                content_type=page.content_type,
                started_at=page.fetched_at,
                elapsed=0.01,
            )
            location = warc.write(result)
            if index is not None:
                index.add(result, location)
            host = urlsplit(page.url).netloc
            db.add_discovered([(page.url, host, 0, page.referrer)])
            db.add_page(page_row(result, location, depth=0, referrer=page.referrer, host=host))
            if page.links:
                db.add_links(page.url, list(page.links))
    return folder


HOSTILE_TITLE = '<script>window.__pwned = 1</script>Hostile & "quoted" page'
HOSTILE_BODY = (
    "<p>Hostile text with <b>markup</b> and wal mentions.</p>"
    "<img src=x onerror=\"window.__pwned = 2; document.title = 'pwned'\">"
    "<script>window.__pwned = 3; document.body.dataset.pwned = 'yes'; alert('pwned')</script>"
    '<a href="javascript:window.__pwned = 4">click me</a>'
    '<svg onload="window.__pwned = 5"></svg>'
    '<iframe srcdoc="<script>parent.__pwned = 6</script>"></iframe>'
    '<form action="http://evil.test/">'
    '<input name=q value="&quot;><script>alert(7)</script>"></form>'
    "<p>Escaped text: &lt;script&gt;alert(8)&lt;/script&gt; stays text.</p>"
)


def hostile_page() -> FakePage:
    """A page whose every part tries to run script somewhere it is shown."""
    body = (
        "<!DOCTYPE html><html><head>"
        f"<title>{HOSTILE_TITLE}</title>"
        '<meta name="description" content="&quot;&gt;&lt;script&gt;alert(9)&lt;/script&gt;">'
        '<meta http-equiv="refresh" content="0; url=javascript:alert(10)">'
        "<style>body { background: rgb(1, 2, 3) }</style>"
        f"</head><body><h1>{HOSTILE_TITLE}</h1>{HOSTILE_BODY}</body></html>"
    )
    return FakePage("http://evil.test/hostile?x=%3Cscript%3E", body.encode())


def search_corpus() -> list[FakePage]:
    """A small web about databases, with duplicates, a German page and a hostile page."""
    wal = "The write-ahead log records every change before the database file is updated. "
    journal = "The rollback journal keeps original pages so a transaction can be undone. "
    checkpoint = "A checkpoint copies pages from the write-ahead log back into the database. "
    return [
        FakePage(
            "http://a.test/",
            html("SQLite documentation", "Start here. " + wal + journal),
            links=("http://a.test/wal", "http://b.test/journal", "http://b.test/checkpoint"),
        ),
        FakePage(
            "http://a.test/wal",
            html("Write-ahead logging", wal * 5 + "Readers do not block writers."),
            links=("http://a.test/",),
        ),
        FakePage(
            "http://b.test/journal",
            html("Rollback journal", journal * 5 + "Unlike the write ahead log, it is deleted."),
            links=("http://a.test/wal",),
        ),
        FakePage(
            "http://b.test/checkpoint",
            html("Checkpoint guide", checkpoint * 5),
            links=("http://a.test/wal",),
        ),
        FakePage("http://c.test/checkpoint-copy", html("Checkpoint guide", checkpoint * 5)),
        FakePage(
            "http://c.test/de",
            html(
                "Datenbank Handbuch",
                "Die Datenbank speichert alle Daten in Tabellen und schreibt jede Änderung "
                "zuerst in das Protokoll, bevor die Datei geändert wird. " * 3,
            ),
            links=("http://a.test/wal",),
        ),
        FakePage(
            "http://d.test/manual.pdf", make_pdf("Backup manual", [checkpoint]), "application/pdf"
        ),
        hostile_page(),
    ]


def searchable_crawl(folder: Path) -> Path:
    """``search_corpus`` crawled, indexed and ranked."""
    make_crawl(folder, search_corpus())
    build_index(folder)
    rank_crawl(folder)
    return folder
