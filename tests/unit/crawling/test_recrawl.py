"""Issue 31, the recrawl's rules: what a revisit's answer means, the adaptive schedule, the
pages a ``due`` recrawl asks (a sitemap's <lastmod> included), and a revisit job in Redis."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gossamer.config import RecrawlConfig
from gossamer.crawling.recrawl import (
    CHANGED,
    FAILED,
    GONE,
    NEW,
    NOT_MODIFIED,
    UNCHANGED,
    answer_of,
    conditions,
    next_schedule,
)
from gossamer.crawling.revisits import (
    Change,
    Revisits,
    begin_recrawl,
    lastmod_seconds,
    want_recrawl,
)
from gossamer.distributed.codec import decode_job, encode_job
from gossamer.distributed.errors import SharedFrontierError
from gossamer.fetch import FetchResult
from gossamer.frontier.hosts import Job, Revisit
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB, page_row
from gossamer.store.rows import Schedule

CONFIG = RecrawlConfig(initial_interval=100.0, min_interval=10.0, max_interval=1000.0)
HOUR = 3600.0


def _result(
    status: int, body: bytes = b"", headers: tuple[tuple[str, str], ...] = ()
) -> FetchResult:
    return FetchResult(
        url="http://a.test/p", status=status, started_at=50.0, body=body, content=body,
        content_type="text/html", response_headers=headers,
    )  # fmt: skip


def test_conditions_come_from_the_stored_validators() -> None:
    assert conditions('"v1"', "Tue, 01 Sep 2026 10:00:00 GMT") == (
        ("If-None-Match", '"v1"'),
        ("If-Modified-Since", "Tue, 01 Sep 2026 10:00:00 GMT"),
    )
    assert conditions(None, None) == ()


@pytest.mark.parametrize(
    ("status", "doc", "answer"),
    [
        (304, None, NOT_MODIFIED),
        (404, None, GONE),
        (410, None, GONE),
        (200, "same", UNCHANGED),
        (200, "other", CHANGED),
        (301, None, CHANGED),
        (500, None, FAILED),
        (0, None, FAILED),
    ],
)
def test_a_revisits_answer(status: int, doc: str | None, answer: str) -> None:
    assert answer_of(_result(status), "same", doc) == answer


def test_a_redirect_as_before_is_unchanged() -> None:
    assert answer_of(_result(301), None, None, 301) == UNCHANGED
    assert answer_of(_result(302), None, None, 301) == CHANGED
    assert answer_of(_result(301), None, None, 200) == CHANGED  # moved since


def _before(interval: float) -> Schedule:
    return Schedule("http://a.test/p", '"v1"', "old", 0.0, 0.0, interval, interval, NEW)


def test_the_interval_shrinks_on_change_and_grows_without_within_bounds() -> None:
    page = "http://a.test/p"
    first = next_schedule(page, _result(200, b"x"), NEW, None, CONFIG)
    assert (first.interval, first.due_at, first.received) == (100.0, 150.0, 1)
    assert next_schedule(page, _result(200), CHANGED, _before(100.0), CONFIG).interval == 50.0
    assert next_schedule(page, _result(200), CHANGED, _before(12.0), CONFIG).interval == 10.0
    assert next_schedule(page, _result(304), NOT_MODIFIED, _before(100.0), CONFIG).interval == 150
    assert next_schedule(page, _result(304), NOT_MODIFIED, _before(900.0), CONFIG).interval == 1000
    assert next_schedule(page, _result(404), GONE, _before(100.0), CONFIG).interval == 1000.0
    assert next_schedule(page, _result(500), FAILED, _before(70.0), CONFIG).interval == 70.0
    seeds = RecrawlConfig(initial_interval=100.0, min_interval=10.0, seed_interval=20.0)
    assert next_schedule(page, _result(200), NEW, None, seeds, seed=True).interval == 20.0


def test_validators_follow_the_content_the_row_holds() -> None:
    page = "http://a.test/p"
    sent = (("ETag", '"v2"'), ("Last-Modified", "new"))
    changed = next_schedule(page, _result(200, b"x", sent), CHANGED, _before(100.0), CONFIG)
    assert (changed.etag, changed.last_modified) == ('"v2"', "new")
    kept = next_schedule(page, _result(304), NOT_MODIFIED, _before(100.0), CONFIG)
    assert (kept.etag, kept.last_modified, kept.changed_at) == ('"v1"', "old", 0.0)
    renewed = next_schedule(page, _result(304, b"", (("ETag", '"v3"'),)), NOT_MODIFIED,
                            _before(100.0), CONFIG)  # fmt: skip
    assert (renewed.etag, renewed.last_modified) == ('"v3"', "old")
    gone = next_schedule(page, _result(404), GONE, _before(100.0), CONFIG)
    assert (gone.etag, gone.last_modified) == (None, None)
    odd = next_schedule(page, _result(200, b"x", (("ETag", "caf\u00e9"),)), NEW, None, CONFIG)
    assert odd.etag is None  # not a validator to send back


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2026", 1767225600.0),
        ("2026-03", 1772323200.0),
        ("2026-03-01", 1772323200.0),
        ("2026-03-01T10:00:00Z", 1772359200.0),
        ("2026-03-01T12:00:00+02:00", 1772359200.0),
        ("2026-03-01T10:00", 1772359200.0),
        ("yesterday", None),
    ],
)
def test_a_sitemap_lastmod(text: str, seconds: float | None) -> None:
    assert lastmod_seconds(text) == seconds


def test_a_due_recrawl_asks_the_due_pages_and_those_a_sitemap_dated_later(tmp_path: Path) -> None:
    dues = (("due", 10.0), ("later", 9e9), ("dated", 9e9), ("stale", 9e9))
    pages = {f"http://a.test/{name}": due for name, due in dues}
    with MetadataDB(tmp_path / "crawl.db") as db:
        db.add_discovered([(url, "a.test", 1, None) for url in pages])
        for url, due in pages.items():
            db.add_schedule(Schedule(url, None, None, 5.0, 5.0, due - 5.0, due, NEW))
        db.read_sitemap("http://a.test/sitemap.xml", None, [
            ("http://a.test/dated", "2026-03-01"),
            ("http://a.test/stale", "1970-01-01T00:00:01Z"),
        ])  # fmt: skip
        db.end_exchange()
        db.flush()
        begin_recrawl(db, "due", 100.0)
        assert want_recrawl(db) == 2
        assert want_recrawl(db) == 0  # once per recrawl
        wanted = {row[1] for row in db.backlog("a.test", 0, 10) if row[6]}
        assert wanted == {"http://a.test/due", "http://a.test/dated"}
        begin_recrawl(db, "all", 200.0)
        assert want_recrawl(db) == 2  # the two not wanted yet
        assert db.wanted_count() == 4


def test_a_revisit_job_goes_through_redis_and_a_bad_one_is_refused() -> None:
    revisit = Revisit(
        conditions=(("If-None-Match", '"v"'),), doc_id="ab", length=12_000_000,
        interval=HOUR, changed_at=5.5, refers=("<urn:uuid:x>", "http://a.test/p", "2026", "sha1:X"),
    )  # fmt: skip
    job = Job("http://a.test/p", "a.test", depth=3, revisit=revisit)
    assert decode_job(encode_job(job), "a.test") == job
    for bad in ('{"c":[["Cookie","x"]]}', '{"n":-1}', "[]", '{"o":["a"]}'):
        with pytest.raises(SharedFrontierError):
            decode_job('{"u":"http://a.test/p","v":' + bad + "}", "a.test")


def test_a_page_that_keeps_refusing_is_failed_once_its_retries_are_spent(tmp_path: Path) -> None:
    url = "http://a.test/p"
    with MetadataDB(tmp_path / "crawl.db") as db:
        db.add_schedule(Schedule(url, None, None, 5.0, 5.0, 100.0, 105.0, NEW, 0, 50.0))
        db.end_exchange()
        db.flush()
        revisits = Revisits(db, CrawlStats(), CONFIG, max_retries=2)
        busy = FetchResult(url=url, status=503, started_at=60.0)
        job = Job(url, "a.test", revisit=Revisit())
        row = page_row(busy, None, depth=0, referrer=None, host="a.test")
        assert revisits.judge(job, busy, row) == Change(None, True)  # asked again: nothing yet
        db.flush()
        assert db.wanted_count() == 1
        spent = Job(url, "a.test", retries=2, revisit=Revisit())
        assert revisits.judge(spent, busy, row) == Change(FAILED, True)
        db.flush()
        assert db.wanted_count() == 0  # due again at its interval, not asked in a loop
        after = db.schedule(url)
        assert after is not None and (after.answer, after.due_at) == (FAILED, 60.0 + 100.0)


def test_a_crawl_of_schema_four_can_be_recrawled(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    with MetadataDB(path) as db:
        for url, status in (("http://a.test/", 200), ("http://a.test/gone", 404)):
            result = FetchResult(url=url, status=status, started_at=7.0, body=b"x")
            db.add_page(page_row(result, None, depth=0, referrer=None, host="a.test"))
            db.add_discovered([(url, "a.test", 0, None)])
        db.end_exchange()
    conn = sqlite3.connect(path)
    with conn:  # as a crawl written before schedules left it
        conn.execute("DROP TABLE schedule")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    conn.close()
    with MetadataDB(path) as db:
        row = db.schedule("http://a.test/")
        assert row is not None and (row.checked_at, row.etag, row.answer) == (7.0, None, NEW)
        assert db.schedule("http://a.test/gone") is None  # no page to revisit
        begin_recrawl(db, "all", 100.0)
        assert want_recrawl(db) == 1
