"""``gossamer merge`` on crawl folders written by hand: WARC names that collide between the
sources, revisit records that must follow their originals to new names and offsets, and the
rules for rows two sources share. The integration test merges real crawls."""

from __future__ import annotations

import errno
import itertools
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gossamer.errors import StoreError
from gossamer.fetch.result import FetchResult
from gossamer.index.archive import WarcReader
from gossamer.store import CdxjWriter, MetadataDB, WarcStore, page_row
from gossamer.store.merge import combined_snapshot, merge_crawls
from gossamer.store.merge_warc import Placement, Relocation
from gossamer.store.revisits import PayloadIndex

START = 1_700_000_000.0
WARCIO = Path(sys.executable).parent / "warcio"
TWIN = b"<html><body>" + b"the same words on two pages " * 40 + b"</body></html>"


@dataclass(frozen=True, slots=True)
class Page:
    url: str
    body: bytes
    fetched_at: float = START
    links: tuple[str, ...] = ()


def html(name: str) -> bytes:
    return f"<html><body><p>{name} {'x' * 80}</p></body></html>".encode()


def write_crawl(folder: Path, sessions: list[list[Page]], *, created: float = START) -> Path:
    """A crawl folder: each session is one WarcStore (one file per exchange in the first,
    one file for all in the later ones) sharing one payload index, as one crawl resumed
    with its index of originals kept; the clock is fixed, so every source writes the same
    file names. Record ids are counted, so the bytes are the same on every run."""
    ids = (f"<urn:uuid:{folder.name}-{n}>" for n in itertools.count())
    originals = PayloadIndex()
    folder.mkdir(parents=True)
    with (
        CdxjWriter(folder / "index.cdxj") as cdxj,
        MetadataDB(folder / "crawl.db", clock=lambda: created) as db,
    ):
        for number, session in enumerate(sessions):
            size = 1 if number == 0 else 10**9
            with WarcStore(
                folder / "warc",
                clock=lambda: START,
                max_file_bytes=size,
                make_id=lambda: next(ids),
                originals=originals,
            ) as warc:
                for page in session:
                    result = fetched(page)
                    location = warc.write(result)
                    cdxj.add(result, location)
                    host = page.url.split("/")[2]
                    db.add_discovered([(page.url, host, 1, None)])
                    db.add_page(page_row(result, location, depth=1, referrer=None, host=host))
                    db.add_links(page.url, list(page.links))
                    db.end_exchange()
    return folder


def fetched(page: Page) -> FetchResult:
    return FetchResult(
        url=page.url,
        status=200,
        reason="OK",
        response_headers=(("Content-Type", "text/html"),),
        body=page.body,
        content=page.body,
        content_type="text/html",
        started_at=page.fetched_at,
        elapsed=0.01,
    )


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def fingerprint(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def sources(tmp_path: Path) -> list[Path]:
    a, b = "http://a.test", "http://b.test"
    first = write_crawl(
        tmp_path / "one",
        [
            [Page(f"{a}/twin-1", TWIN), Page(f"{a}/shared", html("old"), START + 1)],
            [
                Page(f"{a}/twin-2", TWIN, START + 2),  # revisit of a file before
                Page(f"{a}/big", html("big") * 8, START + 3, links=(f"{b}/",)),
                Page(f"{a}/big-again", html("big") * 8, START + 4),  # revisit, same file
                Page(f"{a}/after", html("after"), START + 5, links=(f"{a}/big",)),
                Page(f"{a}/twin-3", TWIN, START + 6),
            ],
        ],
        created=START - 10,
    )
    second = write_crawl(
        tmp_path / "two",
        [
            [Page(f"{b}/", html("b root"), START + 1, links=(f"{a}/big", f"{b}/more"))],
            [
                Page(f"{a}/shared", html("new"), START + 9),
                Page(f"{b}/more", TWIN, START + 10),
                Page(f"{b}/more-twin", TWIN, START + 11),
            ],
        ],
    )
    return [first, second]


def pages_of(db: Path) -> dict[str, tuple[str, int, int, float]]:
    found = rows(db, "SELECT url, warc_file, warc_offset, warc_length, fetched_at FROM pages")
    return {str(r[0]): (str(r[1]), int(str(r[2])), int(str(r[3])), float(str(r[4]))) for r in found}


def test_every_record_reads_back_from_its_new_place(sources: list[Path], tmp_path: Path) -> None:
    before = [fingerprint(folder) for folder in sources]
    summary = merge_crawls(tmp_path / "out", sources)
    out = tmp_path / "out"
    assert [fingerprint(folder) for folder in sources] == before
    assert summary.files.rebuilt == 2 and summary.files.repointed == 4
    names = sorted(path.name for path in (out / "warc").iterdir())
    assert len(names) == 5  # 00000 and 00001 were in both sources: no clash now
    assert {name.split("-")[1] for name in names} == {"w1", "w2"}
    merged = pages_of(out / "crawl.db")
    assert len(merged) == 10
    moved = 0
    with WarcReader(out / "warc") as reader:
        for url, (file, offset, length, _) in merged.items():
            response = reader.read(file, offset, length)  # revisits follow their pointers
            assert response.url == url
            assert response.content.startswith(b"<html>")
            source = (
                sources[1]
                if url.startswith("http://b.test") or url.endswith("/shared")
                else sources[0]
            )
            old = pages_of(source / "crawl.db")[url]
            moved += old[1:3] != (offset, length)
        assert reader.read(*merged["http://a.test/shared"][:3]).content == html("new")
    assert moved  # a repointed revisit moved the records after it
    checked = subprocess.run([WARCIO, "check", *(out / "warc").iterdir()], check=False)
    assert checked.returncode == 0  # the digests of the repointed revisit records hold


def test_index_lines_point_at_the_new_places(sources: list[Path], tmp_path: Path) -> None:
    merge_crawls(tmp_path / "out", sources)
    lines = (tmp_path / "out" / "index.cdxj").read_text().splitlines()
    assert lines == sorted(lines) and len(lines) == 11  # "shared" was fetched twice
    with WarcReader(tmp_path / "out" / "warc") as reader:
        for line in lines:
            fields = json.loads(line.split(" ", 2)[2])
            where = fields["filename"], int(fields["offset"]), int(fields["length"])
            assert reader.read(*where).url == fields["url"]


def test_shared_urls_get_one_id_and_links_join_the_sources(
    sources: list[Path], tmp_path: Path
) -> None:
    merge_crawls(tmp_path / "out", sources)
    db = tmp_path / "out" / "crawl.db"
    urls = [str(u) for (u,) in rows(db, "SELECT url FROM urls ORDER BY id")]
    assert len(urls) == len(set(urls)) == 10
    links = set(rows(db, "SELECT from_url, to_url FROM link_urls"))
    assert ("http://a.test/big", "http://b.test/") in links  # one -> two
    assert ("http://b.test/", "http://a.test/big") in links  # two -> one
    assert ("http://a.test/after", "http://a.test/big") in links
    assert rows(db, "SELECT count(*) FROM links") == [(4,)]
    [(shared,)] = rows(db, "SELECT fetched_at FROM pages WHERE url = 'http://a.test/shared'")
    assert shared == START + 9  # the later fetch wins
    meta = dict(rows(db, "SELECT key, value FROM meta"))
    assert float(str(meta["created_at"])) == START - 10  # the earliest source's
    assert json.loads(str(meta["merged_from"])) == [str(p.resolve()) for p in sources]


def test_robots_sitemaps_and_domains_are_deduplicated(tmp_path: Path) -> None:
    folders = []
    for name, fetched_at in (("one", START), ("two", START + 5)):
        folder = tmp_path / name
        with MetadataDB(folder / "crawl.db") as source:
            source.add_robots("http://a.test", 200, f"# {name}".encode(), fetched_at)
            source.add_sitemap("http://a.test/sitemap.xml", "a.test", 1 if name == "one" else 0)
            if name == "two":
                entries = [("http://a.test/x", "2024")]
                source.read_sitemap("http://a.test/sitemap.xml", None, entries)
        folders.append(folder)
    conn = sqlite3.connect(folders[0] / "crawl.db")
    conn.execute("INSERT INTO domains VALUES ('a.test', '', 3, '1:3', 1, 0.5, 100, 1, 'x', 1)")
    conn.commit()
    conn.close()
    conn = sqlite3.connect(folders[1] / "crawl.db")
    conn.execute("INSERT INTO domains VALUES ('a.test', 's', 2, '1:2', 0, 0.25, 50, 0, 'y', 2)")
    conn.commit()
    conn.close()
    merge_crawls(tmp_path / "out", folders)
    db = tmp_path / "out" / "crawl.db"
    assert rows(db, "SELECT origin, body FROM robots") == [("http://a.test", b"# two")]
    assert rows(db, "SELECT level, entries FROM sitemaps") == [(0, 1)]
    assert rows(db, "SELECT url, lastmod FROM sitemap_entries") == [("http://a.test/x", "2024")]
    assert rows(db, "SELECT pages, bytes, errors, in_visit, robots_status FROM domains") == [
        (5, 150, 1, 0, "y")
    ]


def test_files_are_copied_where_they_cannot_be_linked(
    sources: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cross_device(source: object, target: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr("gossamer.store.merge_warc.os.link", cross_device)
    summary = merge_crawls(tmp_path / "out", sources)
    assert (summary.files.linked, summary.files.copied, summary.files.rebuilt) == (0, 3, 2)
    for path in (tmp_path / "out" / "warc").iterdir():
        assert path.stat().st_nlink == 1


def test_a_failure_leaves_no_folder_behind(
    sources: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> Iterator[int]:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("gossamer.store.merge.merge_databases", broken)
    with pytest.raises(OSError, match="No space"):
        merge_crawls(tmp_path / "out", sources)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "two"]


def test_snapshots_add_up_and_the_longest_worker_is_the_duration() -> None:
    combined = combined_snapshot(
        [
            {"skipped_robots": 2, "duration_seconds": 5.0, "concurrency": 4,
             "errors": {"trap_calendar": 1}, "robots_status": {"a.test": "rules"}},
            {"skipped_robots": 3, "duration_seconds": 9.0, "concurrency": "junk",
             "errors": {"trap_calendar": 2}, "robots_status": {"b.test": "allow-all"}},
        ]
    )  # fmt: skip
    assert combined["skipped_robots"] == 5 and combined["concurrency"] == 4
    assert combined["duration_seconds"] == 9.0
    assert combined["errors"] == {"trap_calendar": 3}
    assert combined["robots_status"] == {"a.test": "rules", "b.test": "allow-all"}


def test_index_lines_of_other_writers_are_rewritten_through_their_fields() -> None:
    relocation = Relocation()
    place = relocation.places["old.warc.gz"] = Placement("gossamer-w1-x.warc.gz")
    place.moved(100, 50, 53)  # a member at 100 grew by 3 bytes: what follows moved
    ours = (
        'com,example)/ 20240101000000 {"url": "http://example.com/", "mime": "text/html",'
        ' "status": "200", "digest": "sha1:X", "length": "40", "offset": "150",'
        ' "filename": "old.warc.gz"}\n'
    )
    moved = ours.replace('"150"', '"153"').replace("old.warc.gz", "gossamer-w1-x.warc.gz")
    assert relocation.line(ours) == moved == relocation._parsed(ours)
    other = 'com,example)/ 20240101000000 {"offset": 100, "filename": "old.warc.gz", "length": 50}'
    assert json.loads(relocation.line(other).split(" ", 2)[2]) == {
        "offset": 100,
        "filename": "gossamer-w1-x.warc.gz",
        "length": 53,
    }
    assert relocation.line("not an index line") == "not an index line\n"
    elsewhere = ours.replace("old.warc.gz", "unknown.warc.gz")
    assert relocation.line(elsewhere) == elsewhere


def test_a_record_no_row_lists_refuses_its_source_but_a_replaced_one_does_not(
    tmp_path: Path,
) -> None:
    """A URL fetched twice: its row names the later record, and the earlier one is not a lost
    page. Without the row (a batch lost to kill -9) both are, and the merge names recover."""
    url = "http://a.test/again"
    folder = write_crawl(
        tmp_path / "one",
        [[Page(url, html("first"), START)], [Page(url, html("second"), START + 5)]],
    )
    assert rows(folder / "crawl.db", "SELECT count(*) FROM pages") == [(1,)]
    merge_crawls(tmp_path / "out", [folder])
    conn = sqlite3.connect(folder / "crawl.db")
    conn.execute("DELETE FROM pages")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"hold 2 archived record\(s\) .* 'gossamer recover "):
        merge_crawls(tmp_path / "again", [folder])
    assert not (tmp_path / "again").exists()


def test_unlisted_records_are_found_past_a_torn_tail(tmp_path: Path) -> None:
    """A kill mid-write also tears the last record: stepping over listed records cannot go
    on there, and the file is read record by record, as the replay reads it."""
    urls = [f"http://a.test/{n}" for n in range(3)]
    folder = write_crawl(
        tmp_path / "one", [[], [Page(url, html(url), START + n) for n, url in enumerate(urls)]]
    )
    warc = max((folder / "warc").glob("*.warc.gz"))  # the newest: the pages' file
    with warc.open("r+b") as stream:
        stream.truncate(warc.stat().st_size - 10)
    merge_crawls(tmp_path / "out", [folder])  # the torn tail alone hides no page
    conn = sqlite3.connect(folder / "crawl.db")
    conn.execute("DELETE FROM pages WHERE url = ?", (urls[1],))
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"hold 1 archived record\(s\)"):
        merge_crawls(tmp_path / "again", [folder])
