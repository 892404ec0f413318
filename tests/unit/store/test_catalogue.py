"""A catalogue of crawl folders (``store/catalogue_build.py``): several workers' folders read
as one crawl, their WARC files linked where they are, revisit records included."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gossamer.crawling.folder import CrawlLock
from gossamer.engine.recover import recover
from gossamer.errors import StoreError
from gossamer.index import build_index
from gossamer.index.archive import WarcReader
from gossamer.search.engine import SearchEngine
from gossamer.search.ranking import RANKINGS
from gossamer.store.catalogue import catalogue_of
from gossamer.store.catalogue_build import build_catalogue
from gossamer.store.merge import merge_crawls

from ..index.fake_crawl import FakePage, html, make_crawl

# One payload at two URLs of each folder: the second is archived as a revisit record.
_SAME = " ".join(["shared boilerplate text that is long enough to be deduplicated"] * 12)


def _folder(root: Path, name: str, word: str) -> Path:
    host = f"{name}.test"
    return make_crawl(
        root / name,
        [
            FakePage(f"http://{host}/", html(f"{name} home", f"the {word} page of {name}")),
            FakePage(f"http://{host}/a", html("copy", _SAME)),
            FakePage(f"http://{host}/b", html("copy", _SAME)),
        ],
    )


def _rows(folder: Path) -> list[tuple[str, str, int, int]]:
    with sqlite3.connect(folder / "crawl.db") as db:
        return db.execute(
            "SELECT url, warc_file, warc_offset, warc_length FROM pages ORDER BY url"
        ).fetchall()


def _urls(folder: Path, query: str) -> set[str]:
    with SearchEngine(folder, RANKINGS["blend"]) as engine:
        return {hit.url for hit in engine.search(query).hits}


def test_workers_folders_read_as_one_crawl_without_a_copy(tmp_path: Path) -> None:
    first, second = _folder(tmp_path, "w1", "zebra"), _folder(tmp_path, "w2", "quokka")
    out = tmp_path / "out"
    summary = build_catalogue(out, [first, second])
    assert (summary.sources, summary.pages) == (2, 6)
    assert catalogue_of(out) == [str(first.resolve()), str(second.resolve())]
    links = sorted((out / "warc").iterdir())
    assert links and all(link.is_symlink() for link in links)  # no WARC byte copied
    rows = _rows(out)
    assert len(rows) == 6
    with WarcReader(out / "warc") as reader:
        bodies = {
            url: reader.read(file, offset, length).content for url, file, offset, length in rows
        }
    # Each folder's revisit is read through its own folder's original, as in that folder.
    assert bodies["http://w1.test/b"] == bodies["http://w1.test/a"] == html("copy", _SAME)
    assert bodies["http://w2.test/b"] == html("copy", _SAME)
    report = build_index(out)
    assert report.indexed == 6  # the revisits too (one duplicate group, shown once)
    assert _urls(out, "zebra") == {"http://w1.test/"}
    assert _urls(out, "quokka") == {"http://w2.test/"}
    assert len(_urls(out, "boilerplate")) == 1


def test_a_catalogue_made_again_keeps_its_index_and_adds_the_new_pages(tmp_path: Path) -> None:
    first, second = _folder(tmp_path, "w1", "zebra"), _folder(tmp_path, "w2", "quokka")
    out = tmp_path / "out"
    build_catalogue(out, [first, second])
    build_index(out)
    # The second worker's crawl goes on: a page more.
    make_crawl(second, [FakePage("http://w2.test/new", html("new", "a wombat arrived"))])
    build_catalogue(out, [first, second])
    report = build_index(out)
    assert report.indexed == 1  # only the new page: the index went on
    assert _urls(out, "wombat") == {"http://w2.test/new"}
    assert _urls(out, "zebra") == {"http://w1.test/"}
    assert not list(out.glob(".catalogue-*"))


def test_a_catalogue_is_no_crawl(tmp_path: Path) -> None:
    first, second = _folder(tmp_path, "w1", "zebra"), _folder(tmp_path, "w2", "quokka")
    out = tmp_path / "out"
    build_catalogue(out, [first, second])
    with pytest.raises(StoreError, match="catalogue of 2 crawl folders"), CrawlLock(out):
        pass
    with CrawlLock(out / "elsewhere"):  # the lock was let go: nothing holds a folder
        pass
    with pytest.raises(StoreError, match="catalogue"):
        merge_crawls(tmp_path / "merged", [out])
    with pytest.raises(StoreError, match="recover each of them"):
        recover(out)
    with pytest.raises(StoreError, match="give the folders it reads instead"):
        build_catalogue(tmp_path / "again", [out, first])
    # Nor is a crawl folder, or a file, a place for a catalogue; a folder that is no crawl is
    # refused before OUT is made.
    with pytest.raises(StoreError, match="a folder of its own"):
        build_catalogue(first, [second])
    assert catalogue_of(first) is None
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is not a folder"):
        build_catalogue(tmp_path / "file", [first])
    with pytest.raises(StoreError, match="crawl database"):
        build_catalogue(tmp_path / "never", [first, tmp_path / "empty"])
    assert not (tmp_path / "never").exists() and not (tmp_path / "again").exists()
