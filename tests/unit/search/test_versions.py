"""Page versions (issue 31): a URL's captures from index.cdxj, newest first, and what each
one shows (a not-modified revisit: the capture it refers to)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gossamer.index import IndexingError, WarcReader
from gossamer.search import SearchEngine, page_info
from gossamer.search.versions import find_version, page_versions, read_version
from gossamer.store import CrawlRecords

from ..index.recrawl_folder import (
    CHANGE,
    GONE,
    HOME,
    KEEP,
    MOVED,
    TWIN,
    recrawled_site,
)
from ..index.recrawl_folder import FIRST_AT as FIRST
from ..index.recrawl_folder import SECOND_AT as SECOND


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return recrawled_site(tmp_path_factory.mktemp("versions"))


def _summary(folder: Path, url: str) -> list[tuple[str, int, str]]:
    return [(v.timestamp, v.status, v.kind) for v in page_versions(folder, url)]


def test_each_url_lists_its_captures_newest_first(folder: Path) -> None:
    assert _summary(folder, CHANGE) == [(SECOND, 200, "response"), (FIRST, 200, "response")]
    assert _summary(folder, KEEP) == [(SECOND, 304, "revisit"), (FIRST, 200, "response")]
    assert _summary(folder, GONE) == [(SECOND, 404, "gone"), (FIRST, 200, "response")]
    assert _summary(folder, MOVED) == [(SECOND, 301, "moved"), (FIRST, 200, "response")]
    assert _summary(folder, TWIN) == [(FIRST, 200, "response")]  # same key, other URL
    assert page_versions(folder, "http://a.test/never") == []
    assert page_versions(folder / "nowhere", KEEP) == []
    assert page_versions(folder, KEEP)[0].when == "2023-11-15 22:13:20 UTC"


def test_lines_not_sorted_yet_and_a_worker_s_index_are_read_too(tmp_path: Path) -> None:
    line = {"url": KEEP, "mime": "text/html", "status": "200", "digest": "sha1:X",
            "length": "10", "offset": "5", "filename": "w.warc.gz"}  # fmt: skip
    lines = [f"test,a)/keep {t} {json.dumps({**line, 'offset': t[:4]})}\n"
             for t in ("20240101000000", "20230101000000", "20250101000000")]  # fmt: skip
    (tmp_path / "index.cdxj").write_text(lines[0] + "com,zz)/ 20200101000000 {}\n" + lines[1])
    (tmp_path / "index-w1.cdxj").write_text(lines[2] + lines[0])  # a line replayed twice
    assert [v.timestamp for v in page_versions(tmp_path, KEEP)] == [
        "20250101000000", "20240101000000", "20230101000000",
    ]  # fmt: skip
    assert len(page_versions(tmp_path, KEEP, limit=2)) == 2


def test_a_not_modified_version_shows_the_capture_it_refers_to(folder: Path) -> None:
    with WarcReader(folder / "warc") as reader:
        for url in (KEEP, HOME):  # by the location it names, then by its date alone
            versions = page_versions(folder, url)
            shown = read_version(reader, versions[0], versions)
            assert shown.response.status == 200
            assert shown.refers_to == "2023-11-14T22:13:20.000000Z"
        changed = page_versions(folder, CHANGE)
        old = find_version(changed, FIRST)
        assert old is not None
        assert b"walrus" in read_version(reader, old, changed).response.content
        gone = page_versions(folder, GONE)
        assert read_version(reader, gone[0], gone).response.status == 404
        orphan = page_versions(folder, HOME)[:1]  # its original not among the versions
        with pytest.raises(IndexingError, match="no capture"):
            read_version(reader, orphan[0], orphan)


def test_page_info_lists_versions_and_the_current_one(folder: Path) -> None:
    with SearchEngine(folder) as engine, CrawlRecords(folder / "crawl.db") as records:
        keep = page_info(engine, records, KEEP)
        gone = page_info(engine, records, GONE)
    assert keep is not None and gone is not None
    assert [v.kind for v in keep.versions] == ["revisit", "response"]
    assert keep.current == keep.versions[1]  # not modified: the row keeps the first capture
    assert gone.current == gone.versions[0] and gone.doc is None
