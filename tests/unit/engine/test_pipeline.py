"""Small pure pieces of the pipeline."""

from __future__ import annotations

import email.utils
from pathlib import Path

from gossamer.config import CrawlConfig
from gossamer.engine.pipeline import (
    PARSE_LIMIT,
    Pipeline,
    build_frontier,
    retry_after,
)
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcStore


def test_retry_after_forms() -> None:
    assert retry_after("120", 0.0) == 120.0
    assert retry_after(None, 0.0) is None
    assert retry_after("soon", 0.0) is None
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    value = retry_after(date, now)
    assert value is not None and 29.0 <= value <= 31.0


def test_links_come_from_the_first_parse_limit_bytes_only(tmp_path: Path) -> None:
    config = CrawlConfig(seeds=tmp_path / "s", out=tmp_path)
    stats = CrawlStats()
    db = MetadataDB(tmp_path / "crawl.db")
    frontier = build_frontier(config.politeness, stats)
    cdxj = CdxjWriter(tmp_path / "index.cdxj")
    pipeline = Pipeline(
        config, frontier=frontier, stats=stats, warc=WarcStore(tmp_path), cdxj=cdxj, db=db
    )
    filler = b"<p>" + b"x" * PARSE_LIMIT + b"</p>"
    body = b'<html><a href="/early">e</a>' + filler + b'<a href="/late">l</a></html>'
    page = FetchResult(
        url="http://a.test/",
        status=200,
        response_headers=(("Content-Type", "text/html"),),
        body=body,
        content=body,
        content_type="text/html",
    )
    assert pipeline.record_page(Job(url=page.url, host="a.test"), page, None)
    assert frontier.seen("http://a.test/early")
    assert not frontier.seen("http://a.test/late")
    cdxj.close()
    db.close()
