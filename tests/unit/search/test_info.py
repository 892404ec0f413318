"""page_info: what the page-info view shows about one URL, from crawl.db, the index and ranks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.search import SearchEngine, SearchError, page_info
from gossamer.search import info as info_module
from gossamer.store import CrawlRecords

from ..index.fake_crawl import FakePage, html, make_crawl


@pytest.fixture
def records(corpus: Path) -> Iterator[CrawlRecords]:
    with CrawlRecords(corpus / "crawl.db") as opened:
        yield opened


def test_a_crawled_page_with_its_fetch_row_ranks_and_copies(
    engine: SearchEngine, records: CrawlRecords
) -> None:
    info = page_info(engine, records, "http://b.test/checkpoint")
    assert info is not None
    assert info.host == "b.test"
    assert info.fetch is not None and info.fetch.url == "http://b.test/checkpoint"
    assert info.fetch.warc_file is not None and info.fetch.status == 200
    assert info.doc is not None and info.doc.indexed
    assert [d.url for d in info.same_content] == ["http://c.test/checkpoint-copy"]
    assert info.near_duplicates == ()
    assert info.pagerank > 0 and info.pagerank_relative > 0 and info.host_rank > 0
    assert info.scores is None and info.query == ""  # no query, no scores


def test_scores_come_with_the_query_the_user_came_from(
    engine: SearchEngine, records: CrawlRecords
) -> None:
    info = page_info(engine, records, "http://a.test/wal", "write ahead")
    assert info is not None and info.scores is not None and info.scores.tier == 0
    assert info.query == "write ahead"


def test_a_url_known_only_as_a_link_target(
    engine: SearchEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    never = "http://z.test/never"
    pages = [FakePage(f"http://z.test/{i}", html(f"Z{i}", "zed"), links=(never,)) for i in range(3)]
    folder = make_crawl(tmp_path / "crawl", pages)
    with CrawlRecords(folder / "crawl.db") as records:
        info = page_info(engine, records, never)
        assert info is not None and info.fetch is None and info.doc is None
        assert info.links_in == tuple(f"http://z.test/{i}" for i in range(3))
        assert info.links_in_count == 3 and info.links_out_count == 0
        monkeypatch.setattr(info_module, "LINK_LIMIT", 1)  # lists are cut, counts stay exact
        capped = page_info(engine, records, never)
        assert capped is not None and capped.links_in == ("http://z.test/0",)
        assert capped.links_in_count == 3


def test_a_url_the_crawl_never_met(engine: SearchEngine, records: CrawlRecords) -> None:
    assert page_info(engine, records, "http://nowhere.test/") is None


def test_an_unreadable_crawl_db_is_a_search_error(engine: SearchEngine, tmp_path: Path) -> None:
    broken = tmp_path / "crawl.db"
    broken.write_bytes(b"not a database " * 100)
    with CrawlRecords(broken) as records, pytest.raises(SearchError, match="corrupt"):
        page_info(engine, records, "http://a.test/")
