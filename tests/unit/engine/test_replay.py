"""Bringing crawl.db level with the WARC files: last record wins, gone records requeued."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gossamer.config import CrawlConfig
from gossamer.engine.recover import recover
from gossamer.engine.resume import catch_up, holds_crawl, repair_tails
from gossamer.fetch import FetchResult
from gossamer.store import CdxjWriter, MetadataDB, WarcStore, page_row
from gossamer.store.warcscan import Member, scan

START = 1_700_000_000.0
RESPONSES = frozenset({"response", "revisit"})
HTML = b"<html><title>t</title><a href='/next'>n</a></html>"


def result(url: str, status: int, at: float, page: bytes = HTML) -> FetchResult:
    body = page if status == 200 else b"busy"
    return FetchResult(
        url=url,
        status=status,
        response_headers=(("Content-Type", "text/html"), ("Content-Length", str(len(body)))),
        body=body,
        content=body,
        content_type="text/html",
        started_at=at,
        elapsed=0.01,
    )


class Folder:
    """A crawl folder written the way the live pipeline writes it: WARC, then CDXJ, then row."""

    def __init__(self, root: Path, max_file_bytes: int = 1_000_000_000) -> None:
        self.out = root
        self.config = CrawlConfig(seeds=root / "seeds.txt", out=root)
        self.db = MetadataDB(root / "crawl.db")
        self.cdxj = CdxjWriter(root / "index.cdxj")
        self.warc = WarcStore(root / "warc", max_file_bytes=max_file_bytes)

    def fetch(
        self, url: str, status: int, at: float, *, row: bool = True, body: bytes = HTML
    ) -> None:
        fetched = result(url, status, at, body)
        fields = {"gossamer-purpose": "page", "gossamer-host": "a.test", "gossamer-depth": "1"}
        location = self.warc.write(fetched, fields)
        self.cdxj.add(fetched, location)
        self.db.add_discovered([(url, "a.test", 1, None)])
        if row:
            self.db.add_page(page_row(fetched, location, depth=1, referrer=None, host="a.test"))
        self.db.flush()

    def resume(self) -> int:
        """What the crawler does on resume; the number of records replayed."""
        self.warc.close()
        self.db.flush()
        repair_tails(self.out, self.db)
        return catch_up(self.config, self.db, self.cdxj).replayed

    def rows(self) -> dict[str, tuple[int, str, int]]:
        return {
            url: (status, name, offset)
            for url, status, name, offset in self.query(
                "SELECT url, status, warc_file, warc_offset FROM pages"
            )
        }

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        self.db.flush()
        conn = sqlite3.connect(self.out / "crawl.db")
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()

    def responses(self) -> list[Member]:
        return [
            item
            for path in sorted((self.out / "warc").glob("*.warc.gz"))
            for item in scan(path)
            if isinstance(item, Member) and item.headers.get("warc-type") in RESPONSES
        ]


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


def test_a_retried_429_never_overwrites_its_200(folder: Folder) -> None:
    url = "http://a.test/busy"
    folder.fetch(url, 429, START)
    folder.fetch(url, 200, START + 2)
    # The crash lost the row of the 429, never the later 200: replay must not apply the 429.
    folder.resume()
    status, name, offset = folder.rows()[url]
    assert status == 200
    last = folder.responses()[-1]
    assert (name, offset) == (folder.warc.files[-1].name, last.offset)


def test_when_both_rows_were_lost_the_last_record_wins(folder: Folder) -> None:
    url = "http://a.test/busy"
    folder.fetch(url, 429, START, row=False)
    folder.fetch(url, 200, START + 2, row=False)
    folder.resume()
    status, _, offset = folder.rows()[url]
    assert (status, offset) == (200, folder.responses()[-1].offset)


def test_a_row_pointing_at_the_older_record_moves_to_the_newer(folder: Folder) -> None:
    url = "http://a.test/busy"
    folder.fetch(url, 429, START)
    folder.fetch(url, 200, START + 2, row=False)
    assert folder.rows()[url][0] == 429
    folder.resume()
    assert folder.rows()[url][0] == 200


def test_rows_of_a_deleted_file_are_removed_and_their_urls_queued(tmp_path: Path) -> None:
    folder = Folder(tmp_path, max_file_bytes=1)  # one exchange per file
    for n in range(4):
        folder.fetch(f"http://a.test/{n}", 200, START + n)
    folder.warc.close()
    gone = folder.warc.files[1]
    gone.unlink()
    folder.resume()
    assert set(folder.rows()) == {"http://a.test/0", "http://a.test/2", "http://a.test/3"}
    assert list(folder.db.uncrawled_urls()) == ["http://a.test/1"]
    index = (tmp_path / "index.cdxj").read_text()
    assert gone.name not in index and index.count("\n") == 3


def test_junk_in_a_record_requeues_its_url_and_leaves_the_file_alone(
    folder: Folder, caplog: pytest.LogCaptureFixture
) -> None:
    for n in range(3):
        folder.fetch(f"http://a.test/{n}", 200, START + n)
    folder.warc.close()
    path = folder.warc.files[0]
    victim = folder.responses()[1]
    data = bytearray(path.read_bytes())
    middle = victim.offset + victim.length // 2
    data[middle : middle + 8] = b"JUNKJUNK"
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        folder.resume()
    assert path.read_bytes() == bytes(data)
    assert set(folder.rows()) == {"http://a.test/0", "http://a.test/2"}
    assert list(folder.db.uncrawled_urls()) == ["http://a.test/1"]
    assert f"{path.name} at offset {victim.offset}: {victim.length} bytes corrupt" in caplog.text
    assert "http://a.test/1" not in (folder.out / "index.cdxj").read_text()


def test_bytes_inserted_between_records_move_the_rows_with_them(folder: Folder) -> None:
    for n in range(3):
        folder.fetch(f"http://a.test/{n}", 200, START + n)
    folder.warc.close()
    path = folder.warc.files[0]
    first = folder.responses()[0]
    data = path.read_bytes()
    path.write_bytes(data[: first.offset] + b"\0" * 8 + data[first.offset :])
    folder.resume()
    offsets = sorted(offset for _, _, offset in folder.rows().values())
    assert offsets == [member.offset for member in folder.responses()]
    assert set(folder.rows()) == {f"http://a.test/{n}" for n in range(3)}


def test_a_foreign_warc_file_is_neither_read_nor_changed(
    folder: Folder, caplog: pytest.LogCaptureFixture
) -> None:
    folder.fetch("http://a.test/0", 200, START)
    other = WarcStore(folder.out / "warc", prefix="elsewhere")
    other.write(result("http://b.test/", 200, START), {"gossamer-purpose": "page"})
    other.close()
    before = other.files[0].read_bytes()
    with caplog.at_level(logging.WARNING):
        folder.resume()
    assert set(folder.rows()) == {"http://a.test/0"}
    assert other.files[0].read_bytes() == before
    assert "not written by this crawl" in caplog.text and other.files[0].name in caplog.text


def test_only_foreign_files_do_not_make_a_crawl_to_resume(tmp_path: Path) -> None:
    other = WarcStore(tmp_path / "warc", prefix="elsewhere")
    other.close()
    with MetadataDB(tmp_path / "crawl.db") as db:
        assert not holds_crawl(tmp_path, db)


# Long enough to be archived once and then as revisit records.
MIRRORED = b"<html><title>m</title><a href='/next'>n</a>" + b"<p>same words</p>" * 40 + b"</html>"


def test_a_revisit_is_replayed_as_the_page_it_stands_for(folder: Folder) -> None:
    folder.fetch("http://a.test/one", 200, START, body=MIRRORED)
    # The kill came before the duplicate's row (and its links) reached crawl.db.
    folder.fetch("http://a.test/two", 200, START + 1, body=MIRRORED, row=False)
    kinds = [member.headers["warc-type"] for member in folder.responses()]
    assert kinds == ["response", "revisit"]
    assert folder.resume() == 1
    pages = {
        url: (status, doc)
        for url, status, doc in folder.query("SELECT url, status, doc_id FROM pages")
    }
    assert pages["http://a.test/two"] == pages["http://a.test/one"]
    assert pages["http://a.test/two"][1] is not None
    # The body came from the original, so the duplicate's links were admitted as live.
    links = folder.query("SELECT from_url, to_url FROM link_urls")
    assert ("http://a.test/two", "http://a.test/next") in links
    folder.cdxj.flush()
    index = (folder.out / "index.cdxj").read_text()
    assert '"url": "http://a.test/two", "mime": "warc/revisit"' in index


def test_recover_rebuilds_the_rows_of_revisits(tmp_path: Path) -> None:
    folder = Folder(tmp_path)
    folder.fetch("http://a.test/one", 200, START, body=MIRRORED)
    folder.fetch("http://a.test/two", 200, START + 1, body=MIRRORED)
    expected = folder.query("SELECT url, status, doc_id, warc_offset FROM pages ORDER BY url")
    folder.warc.close()
    folder.cdxj.close()
    folder.db.close()
    (tmp_path / "crawl.db").unlink()
    recovery = recover(tmp_path)
    assert recovery.damage == ()
    with sqlite3.connect(tmp_path / "crawl.db") as conn:
        rebuilt = conn.execute(
            "SELECT url, status, doc_id, warc_offset FROM pages ORDER BY url"
        ).fetchall()
    assert rebuilt == expected
    assert '"mime": "warc/revisit"' in (tmp_path / "index.cdxj").read_text()


def test_a_revisit_whose_original_is_damaged_is_requeued(folder: Folder) -> None:
    folder.fetch("http://a.test/one", 200, START, body=MIRRORED)
    folder.fetch("http://a.test/two", 200, START + 1, body=MIRRORED, row=False)
    original = folder.responses()[0]
    path = folder.warc.files[0]
    data = bytearray(path.read_bytes())
    data[original.offset + 20] ^= 0xFF
    path.write_bytes(bytes(data))
    folder.resume()
    assert "http://a.test/two" not in folder.rows()
    assert "http://a.test/one" not in folder.rows()
