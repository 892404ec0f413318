"""``gossamer merge``: two real crawls of the test web (half the seeds each, as two workers
would share it) become one folder that ``index``, ``rank`` and ``search`` use as they would a
crawl of one process; and every input it cannot use is refused with one error line."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.cli import main
from gossamer.config import ScopeConfig
from gossamer.engine import Crawler
from gossamer.index.archive import WarcReader
from gossamer.lockfile import PidLock
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .conftest import RESOLVE, local_config, query

WARCIO = Path(sys.executable).parent / "warcio"
SPEC = WebSpec(seed=3, hosts=6, pages_per_host=8, seed_hosts=4, special_hosts=False,
               crawl_delay_hosts=False)  # fmt: skip
TITLE = re.compile(rb"<title>([^<]+)</title>")


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two crawl folders: the even and the odd seeds, one link away from them."""
    tmp = tmp_path_factory.mktemp("halves")
    folders = []
    with ThreadedTestWeb(build_web(SPEC)) as site:
        seeds = site.seeds()
        for name, part in (("one", seeds[::2]), ("two", seeds[1::2])):
            listed = tmp / f"{name}.txt"
            listed.write_text("\n".join(part) + "\n")
            config = local_config(
                listed, tmp / name, scope=ScopeConfig(max_depth=1), warc_max_bytes=20_000
            )
            asyncio.run(Crawler(config, parse_seeds(listed.read_text())).run())
            folders.append(tmp / name)
    return folders[0], folders[1]


def fingerprint(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def stored(folder: Path) -> dict[str, float]:
    found = query(
        folder / "crawl.db", "SELECT url, fetched_at FROM pages WHERE warc_file IS NOT NULL"
    )
    return {str(url): float(str(at)) for url, at in found}


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_merged_folder_is_indexed_ranked_and_searched_like_one_crawl(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = halves
    before = fingerprint(one), fingerprint(two)
    out = tmp_path / "merged"
    status, printed, err = run(capsys, "merge", out, one, two)
    assert status == 0, err
    assert "merged 2 crawl folders" in printed
    assert (fingerprint(one), fingerprint(two)) == before  # the sources are only read
    firsts, seconds, merged = stored(one), stored(two), stored(out)
    assert merged.keys() == firsts.keys() | seconds.keys()
    for url, fetched_at in merged.items():  # the later fetch of a URL both stored wins
        assert fetched_at == max(firsts.get(url, 0.0), seconds.get(url, 0.0))
    rows = query(out / "crawl.db", "SELECT url, warc_file, warc_offset, warc_length FROM pages"
                 " WHERE warc_file IS NOT NULL")  # fmt: skip
    titles: dict[str, str] = {}
    with WarcReader(out / "warc") as reader:
        for page, file, offset, length in rows:
            response = reader.read(str(file), int(str(offset)), int(str(length)))
            assert response.url == page
            found = TITLE.search(response.content)
            if found:
                titles[str(page)] = found[1].decode()
    warcs = sorted((out / "warc").iterdir())
    assert len(warcs) == len(list((one / "warc").iterdir()) + list((two / "warc").iterdir()))
    assert subprocess.run([WARCIO, "check", *warcs], check=False).returncode == 0
    # Links from the pages only the first crawl stored to pages only the second stored.
    links = query(out / "crawl.db", "SELECT from_url, to_url FROM link_urls")
    only_one, only_two = firsts.keys() - seconds.keys(), seconds.keys() - firsts.keys()
    assert any(src in only_one and dst in only_two for src, dst in links)
    assert any(src in only_two and dst in only_one for src, dst in links)
    stats = json.loads((out / "reports" / "stats.json").read_text())
    pages = query(out / "crawl.db", "SELECT count(*) FROM pages WHERE purpose = 'page'")
    assert stats["pages"] == pages[0][0]
    assert run(capsys, "index", out, "--workers", "1")[0] == 0
    assert run(capsys, "rank", out)[0] == 0
    for side in (only_one, only_two):
        url = next(u for u in sorted(side) if u in titles)
        status, printed, err = run(capsys, "search", out, "--json", f'"{titles[url]}"')
        assert status == 0, err
        assert url in {hit["url"] for hit in json.loads(printed)["hits"]}


def test_an_empty_folder_may_be_the_target(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    assert run(capsys, "merge", out, *halves)[0] == 0
    assert (out / "crawl.db").is_file() and (out / "index.cdxj").is_file()


def refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, *argv: str | Path) -> str:
    """The one error line of a merge that must not happen; nothing is left behind."""
    before = sorted(tmp_path.iterdir())
    status, printed, err = run(capsys, "merge", *argv)
    assert status == 2 and printed == ""
    [line] = err.splitlines()
    assert line.startswith("gossamer: error: ")
    assert sorted(tmp_path.iterdir()) == before  # no OUT, no OUT.partial-PID
    return line


def test_bad_targets_are_refused(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = halves
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "note").write_text("mine")
    assert "not an empty folder" in refused(capsys, tmp_path, tmp_path / "full", one, two)
    (tmp_path / "file").write_text("mine")
    assert "not an empty folder" in refused(capsys, tmp_path, tmp_path / "file", one)
    assert "inside" in refused(capsys, tmp_path, one / "merged", one, two)
    assert not (one / "merged").exists()
    assert "arguments are required" in refused(capsys, tmp_path, tmp_path / "out")


def test_bad_sources_are_refused(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = halves
    out = tmp_path / "out"
    assert "does not exist" in refused(capsys, tmp_path, out, one, tmp_path / "missing")
    (tmp_path / "file").write_text("mine")
    assert "not a folder" in refused(capsys, tmp_path, out, one, tmp_path / "file")
    (tmp_path / "empty").mkdir()
    assert "no crawl.db" in refused(capsys, tmp_path, out, one, tmp_path / "empty")
    assert "given twice" in refused(capsys, tmp_path, out, one, two, one)
    (tmp_path / "alias").symlink_to(one)
    assert "given twice" in refused(capsys, tmp_path, out, one, tmp_path / "alias")


def test_sources_that_are_not_finished_crawls_are_refused(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = halves
    copy = tmp_path / "copy"
    shutil.copytree(two, copy)
    out = tmp_path / "out"
    lock = PidLock(copy / ".gossamer.lock")
    assert lock.acquire() is None  # a crawl running in the folder
    try:
        assert "running crawl" in refused(capsys, tmp_path, out, one, copy)
    finally:
        lock.release()
    (copy / "crawl.db-wal").write_bytes(b"\0" * 32)  # what a killed crawl leaves
    assert "not closed cleanly" in refused(capsys, tmp_path, out, one, copy)
    (copy / "crawl.db-wal").unlink()
    conn = sqlite3.connect(copy / "crawl.db")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert "schema version 2" in refused(capsys, tmp_path, out, one, copy)
    (copy / "crawl.db").write_text("not a database")
    assert "corrupt" in refused(capsys, tmp_path, out, one, copy)


def archived(folder: Path) -> set[str]:
    """The URLs of the response and revisit records in a folder's WARC files."""
    urls = set()
    for path in sorted((folder / "warc").glob("*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type in ("response", "revisit"):
                    urls.add(record.rec_headers.get_header("WARC-Target-URI"))
    return urls


def assert_nothing_dropped(capsys: pytest.CaptureFixture[str], out: Path, *folders: Path) -> None:
    """Merge ``folders`` into ``out``: refused in one line naming 'gossamer recover' for a
    folder whose crawl.db misses archived pages, which the merge after it keeps every one of."""
    status, printed, err = run(capsys, "merge", out, *folders)
    if status != 0:
        assert status == 2 and printed == "", err
        [line] = err.splitlines()
        assert line.startswith("gossamer: error: ") and "run 'gossamer recover " in line
        damaged = next(f for f in folders if f"'gossamer recover {f}'" in line)
        assert run(capsys, "recover", damaged)[0] == 0
        status, printed, err = run(capsys, "merge", out, *folders)
        assert status == 0, err
    assert set(stored(out)) >= set().union(*(archived(folder) for folder in folders))


def test_pages_a_lost_batch_left_unlisted_are_refused_until_recovered(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What kill -9 leaves: the WARC files and CDXJ hold the last pages, crawl.db (whose
    last batch was never committed) does not."""
    one, two = halves
    killed = Path(shutil.copytree(two, tmp_path / "killed"))
    conn = sqlite3.connect(killed / "crawl.db")
    conn.execute("DELETE FROM pages WHERE url IN (SELECT url FROM pages WHERE purpose = 'page'"
                 " ORDER BY fetched_at DESC LIMIT 5)")  # fmt: skip
    conn.commit()
    conn.close()
    line = refused(capsys, tmp_path, tmp_path / "out", one, killed)
    assert line == (
        f"gossamer: error: {killed}'s WARC files hold 5 archived record(s) its crawl.db does not"
        f" list (its crawl was killed?): run 'gossamer recover {killed}' before merging it,"
        " which replays them"
    )
    assert_nothing_dropped(capsys, tmp_path / "out", one, killed)
    assert stored(tmp_path / "out").keys() == stored(one).keys() | stored(two).keys()


def test_a_crawl_killed_by_sigkill_loses_nothing_in_a_merge(
    halves: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kill -9 of a crawl's processes (the default, --workers), all at once, mid-crawl."""
    one, _ = halves
    seeds, killed = tmp_path / "seeds.txt", tmp_path / "killed"
    (tmp_path / "c.toml").write_text("[politeness]\ndelay = 0.0\n")
    with ThreadedTestWeb(build_web(SPEC)) as site:
        seeds.write_text("\n".join(site.seeds()[1::2]) + "\n")
        proc = subprocess.Popen(
            [sys.executable, "-m", "gossamer", "-vv", "crawl", seeds, "--out", killed,
             "--resolve", RESOLVE, "--config", tmp_path / "c.toml", "--concurrency", "4",
             "--workers", "2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        kill_group_after_fetches(proc, 12)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert archived(killed)
    assert_nothing_dropped(capsys, tmp_path / "out", one, killed)


def kill_group_after_fetches(proc: subprocess.Popen[str], count: int) -> None:
    """SIGKILL a crawl's coordinator and workers together once its log has told of ``count``
    fetches (the log lines are the event waited on)."""
    assert proc.stderr is not None
    fetched = 0
    for line in proc.stderr:
        fetched += "fetched url=" in line
        if fetched == count:
            os.killpg(proc.pid, signal.SIGKILL)
            return
