"""``gossamer export-tree``: a real crawl of a small local web, filed as an Indexed URL Tree,
and the folders it refuses with one error line."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web
from gossamer.threads.urltree import audit_tree, data_line, url_file_name

from ...integration.conftest import crawl, query
from ..cli_helpers import one_error, run


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    spec = WebSpec(
        seed=3, hosts=2, pages_per_host=6, seed_hosts=2, special_hosts=False,
        crawl_delay_hosts=False,
    )  # fmt: skip
    with ThreadedTestWeb(build_web(spec)) as site:
        yield crawl(site, tmp_path_factory.mktemp("export-tree")).out


def pages(folder: Path) -> list[tuple[str, str | None, int, str | None, str | None, int | None]]:
    rows = query(
        folder / "crawl.db",
        "SELECT url, referrer, status, content_type, warc_file, warc_offset FROM pages"
        " WHERE purpose = 'page'",
    )
    return rows  # type: ignore[return-value]


def test_a_crawl_becomes_a_tree_of_its_pages(
    crawled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "tree"
    code, err = run(capsys, "export-tree", crawled, "--to", target)
    assert (code, err) == (0, "")
    rows = pages(crawled)
    assert len(rows) >= 10
    assert any(referrer for _, referrer, *_ in rows)  # links were followed
    audit = audit_tree(target)
    assert (audit.url_files, audit.data_lines, audit.duplicate_files) == (len(rows), len(rows), 0)
    for url, referrer, status, kind, warc, offset in rows:
        file = next(target.rglob(url_file_name(url)))
        assert file.parent.relative_to(target).parts[0] == "pr-http"
        place = "-" if warc is None else f"{warc}:{offset}"
        expected = data_line(url, referrer or "", f"{status} {kind or '-'} {place}")
        assert file.read_text(encoding="utf-8") == expected
    result = (target / "res.txt").read_text(encoding="utf-8").splitlines()
    assert sorted(line.split("\t")[0] for line in result) == sorted(row[0] for row in rows)


def test_the_default_tree_is_inside_the_crawl_folder(
    crawled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(capsys, "export-tree", crawled)
    try:
        assert code == 0
        assert audit_tree(crawled / "url-tree").url_files == len(pages(crawled))
        # A second export into the same folder is refused rather than merged.
        message = one_error(*run(capsys, "export-tree", crawled))
        assert message == (
            f"{crawled / 'url-tree'} already exists and is not an empty folder;"
            " remove it or choose another --to"
        )
    finally:
        for path in sorted((crawled / "url-tree").rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        (crawled / "url-tree").rmdir()


def test_an_empty_target_folder_is_used(
    crawled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert run(capsys, "export-tree", crawled, "--to", tmp_path / "empty")[0] == 0


def test_a_folder_without_a_crawl_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = one_error(*run(capsys, "export-tree", tmp_path))
    assert message == f"{tmp_path} is not a crawl folder (it has no crawl.db)"
    assert list(tmp_path.iterdir()) == []


def test_a_file_as_target_is_refused(
    crawled: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    message = one_error(*run(capsys, "export-tree", crawled, "--to", tmp_path / "file"))
    assert message.endswith(
        "already exists and is not an empty folder; remove it or choose another --to"
    )


def test_a_database_that_is_not_a_crawl_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(tmp_path / "crawl.db")
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    message = one_error(*run(capsys, "export-tree", tmp_path, "--to", tmp_path / "t"))
    assert message == f"{tmp_path / 'crawl.db'} is not a Gossamer crawl database"
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "crawl.db").write_bytes(b"not sqlite at all" * 100)
    message = one_error(*run(capsys, "export-tree", tmp_path / "junk"))
    assert "the file is corrupt or is not a SQLite database" in message
