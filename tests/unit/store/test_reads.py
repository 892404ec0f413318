"""CrawlRecords: the read API of crawl.db for every reader outside the crawl."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gossamer.errors import StoreError
from gossamer.store import CrawlRecords, MetadataDB, recorded_files
from gossamer.store.schema import SCHEMA_VERSION

from .test_metadata import row


@pytest.fixture
def crawl_db(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.db"
    with MetadataDB(path) as db:
        db.add_discovered([("http://a.test/", "a.test", 0, None)])
        db.add_discovered([("http://a.test/x", "a.test", 1, "http://a.test/")], spilled=True)
        db.add_page(row("http://a.test/", warc_file="gossamer-1.warc.gz"))
        db.add_page(row("http://b.test/", warc_file=None, warc_offset=None, host="b.test"))
        db.add_links("http://a.test/", ["http://a.test/x", "http://b.test/", "http://a.test/"])
        db.add_links("http://b.test/", ["http://a.test/"])
    return path


def test_a_page_row_and_its_links_both_ways(crawl_db: Path) -> None:
    with CrawlRecords(crawl_db) as records:
        page = records.page("http://a.test/")
        assert page == row("http://a.test/", warc_file="gossamer-1.warc.gz")
        assert page is not None and (page.warc_offset, page.warc_length) == (339, 812)
        assert records.page("http://a.test/x") is None  # discovered, never fetched
        assert records.links_out("http://a.test/", 2) == (["http://a.test/", "http://a.test/x"], 3)
        assert records.links_in("http://a.test/", 10) == (["http://a.test/", "http://b.test/"], 2)
        assert records.links_in("http://nowhere.test/", 10) == ([], 0)


def test_the_link_graph_as_id_arrays(crawl_db: Path) -> None:
    with CrawlRecords(crawl_db) as records:
        ids, urls = records.url_nodes()
        edges = records.link_edges()
    assert ids.dtype == np.int64 and list(ids) == sorted(ids)
    node = dict(zip(urls, ids.tolist(), strict=True))
    pairs = {(int(s), int(d)) for s, d in edges}
    assert edges.shape == (3, 2)  # the self-link is left out
    assert pairs == {
        (node["http://a.test/"], node["http://a.test/x"]),
        (node["http://a.test/"], node["http://b.test/"]),
        (node["http://b.test/"], node["http://a.test/"]),
    }


def test_lists_and_counts_for_reports_and_resume(crawl_db: Path) -> None:
    with CrawlRecords(crawl_db) as records, records.consistent():
        assert list(records.uncrawled_urls()) == ["http://a.test/x"]
        assert [url for url, _, _ in records.page_statuses()] == [
            "http://a.test/",
            "http://b.test/",
        ]
        assert records.backlog_counts() == {"a.test": 1}
        assert records.recorded_files() == {"gossamer-1.warc.gz"}
        assert {facts[0] for facts in records.page_facts()} == {"a.test", "b.test"}
        assert records.get_meta("schema_version") == str(SCHEMA_VERSION)


def test_a_reader_sees_what_a_live_writer_committed(crawl_db: Path) -> None:
    with MetadataDB(crawl_db) as db, CrawlRecords(crawl_db) as records:
        db.start_writer()
        db.add_page(row("http://c.test/", host="c.test"))
        ticket = db.cut()
        db.wait(ticket)
        assert records.page_count() == 3


def test_a_missing_or_foreign_file_is_one_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"has no crawl\.db"):
        CrawlRecords(tmp_path / "crawl.db")
    (tmp_path / "crawl.db").write_bytes(b"not a database " * 100)
    with (
        CrawlRecords(tmp_path / "crawl.db") as records,
        pytest.raises(StoreError, match="corrupt or is not a SQLite database"),
    ):
        records.page("http://a.test/")
    assert recorded_files(tmp_path / "crawl.db") == set()
    assert recorded_files(tmp_path / "missing.db") == set()
