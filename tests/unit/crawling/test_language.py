"""Language at crawl time (issue 30) and redirects judged by scope, through the recorder every
engine shares: a page in another language is stored (or, with --skip-other-languages, not)
and its links are not followed; a redirect out of scope is recorded, not followed."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import ScopeConfig
from gossamer.crawling.admission import Admitter
from gossamer.crawling.exchange import store_page
from gossamer.crawling.recorder import Recorder
from gossamer.crawling.scope import scope_of, seed_surts
from gossamer.extras import installed
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore, write_reports

from .test_admission import Queue

needs_model = pytest.mark.skipif(
    not installed("search"), reason="language detection needs the search extra (py3langid)"
)

ENGLISH = (
    "The harbour was quiet in the early morning, and the fishermen were already mending"
    " their nets beside the old stone wall while the gulls circled over the water."
)
GERMAN = (
    "Der Hafen war am frühen Morgen still, und die Fischer flickten schon ihre Netze neben"
    " der alten Steinmauer, während die Möwen über dem Wasser kreisten."
)


def _page(url: str, text: str, lang: str) -> FetchResult:
    html = (
        f"<html lang={lang}><head><title>Page</title></head><body><p>{text}</p>"
        f'<a href="/next-{lang}">next</a></body></html>'
    ).encode()
    return FetchResult(
        url=url, status=200, body=html, content=html, content_type="text/html; charset=utf-8"
    )


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    with MetadataDB(tmp_path / "crawl.db") as opened:
        yield opened


def _recorder(scope: ScopeConfig, db: MetadataDB) -> tuple[Recorder, Queue, CrawlStats]:
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(scope, frontier=queue, stats=stats, db=db)
    return Recorder(admitter=admitter, stats=stats, db=db, sitemaps=False), queue, stats


@needs_model
def test_links_of_pages_in_other_languages_are_not_followed(db: MetadataDB) -> None:
    recorder, queue, stats = _recorder(ScopeConfig(languages=("en",)), db)
    for url, text, lang in (
        ("http://a.test/en", ENGLISH, "en"),
        ("http://a.test/de", GERMAN, "de"),
    ):
        job = Job(url=url, host="a.test", depth=0)
        result = _page(url, text, lang)
        assert recorder.screened(job, result) is result  # stored either way
        assert recorder.record_page(job, result, None)
    assert [job.url for job in queue.added] == ["http://a.test/next-en"]
    assert stats.other_languages == {"de": 1}
    assert stats.pages == 2


@needs_model
def test_a_skipped_language_is_not_archived(db: MetadataDB, tmp_path: Path) -> None:
    """Through the exchange every engine stores with: no WARC record, a row without one."""
    scope = ScopeConfig(languages=("en",), skip_other_languages=True)
    recorder, _, stats = _recorder(scope, db)
    with WarcStore(tmp_path / "warc") as warc, CdxjWriter(tmp_path / "index.cdxj") as cdxj:
        for url, text, lang in (
            ("http://a.test/de", GERMAN, "de"),
            ("http://a.test/en", ENGLISH, "en"),
        ):
            job = Job(url=url, host="a.test", depth=0)
            store_page(recorder, warc, cdxj, job, _page(url, text, lang), stats=stats, db=db)
    db.flush()
    assert stats.pages == 1 and stats.other_languages == {"de": 1}
    assert [
        line.split(" ", 2)[0] for line in (tmp_path / "index.cdxj").read_text().splitlines()
    ] == ["test,a)/en"]


@needs_model
def test_skip_other_languages_keeps_them_out_of_the_store(db: MetadataDB) -> None:
    scope = ScopeConfig(languages=("en",), skip_other_languages=True)
    recorder, queue, stats = _recorder(scope, db)
    job = Job(url="http://a.test/de", host="a.test", depth=0)
    screened = recorder.screened(job, _page(job.url, GERMAN, "de"))
    assert screened.skipped_body  # so no WARC record is written for it
    assert not recorder.record_page(job, screened, None)
    assert (stats.pages, stats.other_languages, queue.added) == (0, {"de": 1}, [])
    english = _page("http://a.test/en", ENGLISH, "en")
    assert recorder.screened(Job(url=english.url, host="a.test", depth=0), english) is english


def test_a_redirect_out_of_scope_is_recorded_not_followed(db: MetadataDB, tmp_path: Path) -> None:
    scope = ScopeConfig(mode="host", seed_area=seed_surts("host", ["http://a.test/"]))
    recorder, queue, stats = _recorder(scope, db)
    job = Job(url="http://a.test/old", host="a.test", depth=1)
    moved = FetchResult(
        url=job.url, status=301, response_headers=(("Location", "http://b.test/new"),)
    )
    assert not recorder.record_page(job, moved, None)
    assert queue.added == []
    assert stats.redirects == 1 and stats.skipped_scope == {"host": 1}
    db.flush()
    conn = sqlite3.connect(db.path)
    try:
        links = conn.execute("SELECT from_url, to_url FROM link_urls").fetchall()
    finally:
        conn.close()
    assert links == [(job.url, "http://b.test/new")]
    # The reports list it with its rule, among the URLs discovered and not crawled.
    write_reports(tmp_path, stats, db, scope=scope_of(scope))
    listed = (tmp_path / "reports" / "discovered-not-crawled.txt").read_text()
    assert listed == "http://b.test/new\tout of scope: host\n"
    assert "skipped by scope: host 1" in (tmp_path / "reports" / "stats.txt").read_text()
