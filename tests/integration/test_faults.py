"""Fault injection: whatever happens to a crawl folder, Gossamer never damages its archive.

One small crawl of the test web is made once; each test copies it, does something bad to the
copy (junk in a WARC file, a truncated or deleted file, foreign files, a corrupt database, a
worker killed), then resumes, recovers and indexes it. After each: every command succeeds, no
byte Gossamer did not write has changed, only torn tails were cut (and kept), and every row of
``crawl.db`` points at its URL's last response record in the WARC files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.cli import main
from gossamer.engine.recover import recover
from gossamer.store.warcscan import CRAWL_NAME, Member, scan
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from .archive_checks import (
    assert_nothing_destroyed,
    assert_pages_match_warc,
    rows,
    snapshot,
)
from .conftest import RESOLVE

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance" / "warc"
CONFIG = (
    "warc_max_bytes = 20000\n"  # several files, so there is a middle one and a newest one
    "workers = 1\n"  # one process (the default is one per core): one series of WARC files
    "[politeness]\ndelay = 0.0\nrobots_retry_delay = 0.2\nrobots_retries = 1\n"
    "[scope]\nmax_depth = 25\n"
)
SPEC = WebSpec(seed=3, hosts=4, pages_per_host=10)


def gossamer(*args: str | Path) -> int:
    return main([str(arg) for arg in args])


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    with ThreadedTestWeb(build_web(SPEC)) as web:
        yield web


def start_crawl(site: ThreadedTestWeb, root: Path, *extra: str) -> list[str]:
    seeds = root / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n")
    config = root / "c.toml"
    config.write_text(CONFIG)
    return ["crawl", str(seeds), "--out", str(root / "crawl"), "--config", str(config),
            "--resolve", RESOLVE, "--no-progress", *extra]  # fmt: skip


@pytest.fixture(scope="module")
def template(site: ThreadedTestWeb, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template")
    assert gossamer(*start_crawl(site, root)) == 0
    return root / "crawl"


@pytest.fixture
def out(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "crawl"
    shutil.copytree(template, copy)
    return copy


def own_files(out: Path) -> list[Path]:
    files = [p for p in (out / "warc").glob("*.warc.gz") if CRAWL_NAME.match(p.name)]
    return sorted(files, key=lambda p: p.name)


def page_rows(out: Path, name: str) -> list[tuple[str, int, int]]:
    """(url, offset, length) of the 200 page rows pointing into one WARC file."""
    sql = (
        "SELECT url, warc_offset, warc_length FROM pages WHERE purpose = 'page'"
        f" AND status = 200 AND warc_file = '{name}' ORDER BY warc_offset"
    )
    return [(str(u), int(str(o)), int(str(n))) for u, o, n in rows(out, sql)]


def per_host(domains: Path) -> set[tuple[str, str, str]]:
    """(host, pages, robots status) per line of domains.tsv."""
    lines = domains.read_text().splitlines()[1:]
    return {(f[0], f[1], f[5]) for f in (line.split("\t") for line in lines)}


def resume_and_index(out: Path) -> None:
    """The end of every scenario: resume and index succeed, the database agrees with WARC."""
    assert gossamer("crawl", "--resume", out) == 0
    assert_pages_match_warc(out)
    assert gossamer("index", out, "--workers", "1") == 0


def test_junk_in_the_middle_of_a_warc_is_reported_skipped_and_kept(
    out: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    middle = own_files(out)[len(own_files(out)) // 2]
    url, offset, length = page_rows(out, middle.name)[0]
    data = bytearray(middle.read_bytes())
    data[offset + length // 2 : offset + length // 2 + 8] = b"JUNKJUNK"
    middle.write_bytes(bytes(data))
    before = snapshot(out)
    # The index skips the damaged record and says so; it does not fail.
    assert gossamer("index", out, "--workers", "1") == 0
    assert "unreadable_record 1" in capsys.readouterr().out
    assert gossamer("crawl", "--resume", out) == 0
    assert f"damaged WARC data in {middle.name} at offset {offset}" in caplog.text
    assert assert_nothing_destroyed(before, out) == []  # not one byte cut
    assert not list((out / "warc").glob("*.torn*"))
    # The damaged record's URL was fetched again; every other row is where it was.
    (new_file,) = rows(out, f"SELECT warc_file FROM pages WHERE url = '{url}'")
    assert new_file != (middle.name,)
    assert [r for r in page_rows(out, middle.name) if r[0] != url] == page_rows(out, middle.name)
    assert_pages_match_warc(out)
    assert gossamer("index", out, "--workers", "1") == 0
    assert "unreadable_record" not in capsys.readouterr().out


@pytest.mark.parametrize("where", ["response", "metadata"])
def test_a_truncated_last_warc_loses_exactly_the_torn_exchange(out: Path, where: str) -> None:
    newest = own_files(out)[-1]
    members = [item for item in scan(newest) if isinstance(item, Member)]
    kinds = [member.headers["warc-type"] for member in members]
    at = len(kinds) - 1 - kinds[::-1].index(where)
    victim = members[at]
    # The exchange the torn member belongs to starts at its response (one write() each).
    opening = ("response", "revisit")
    start = max(m.offset for m in members[: at + 1] if m.headers["warc-type"] in opening)
    size = victim.offset + victim.length // 2
    whole = newest.read_bytes()
    newest.write_bytes(whole[:size])
    before = snapshot(out)
    resume_and_index(out)
    assert assert_nothing_destroyed(before, out) == [newest.name]
    # Exactly the torn exchange went (its URL fetched again), kept beside the file.
    assert newest.read_bytes() == whole[:start]
    assert (out / "warc" / f"{newest.name}.torn").read_bytes() == whole[start:size]


def test_a_deleted_warc_file_has_its_pages_fetched_again(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = own_files(out)[1]
    lost = {url for url, _, _ in page_rows(out, gone.name)}
    assert lost
    gone.unlink()
    before = snapshot(out)
    # Indexed before the resume fixed the rows: the missing records are counted and skipped.
    assert gossamer("index", out, "--workers", "1") == 0
    skipped = re.search(r"unreadable_record (\d+)", capsys.readouterr().out)
    assert skipped is not None and 0 < int(skipped[1]) <= len(lost)
    resume_and_index(out)
    assert_nothing_destroyed(before, out)
    found = rows(out, "SELECT url, warc_file FROM pages WHERE purpose = 'page'")
    again = {str(url): str(name) for url, name in found if url in lost}
    assert set(again) == lost and gone.name not in again.values()


def test_foreign_warc_files_are_never_touched_nor_read(
    out: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if not CONFORMANCE.is_dir():
        pytest.skip(f"warcio's sample WARC files not found at {CONFORMANCE}")
    folder = out / "warc"
    for sample in CONFORMANCE.iterdir():
        # Damaged samples too, under names that look like WARC files.
        shutil.copy(sample, folder / sample.name.removesuffix(".bad"))
    # An uncompressed WARC under a .warc.gz name was once cut to 0 bytes as "torn".
    shutil.copy(CONFORMANCE / "example.warc", folder / "uncompressed.warc.gz")
    # Gossamer's naming alone does not make a file Gossamer's.
    shutil.copy(CONFORMANCE / "example.warc.gz", folder / "gossamer-20000101000000-00000.warc.gz")
    before = snapshot(out)
    foreign = set(before.digests) - before.own
    assert len(foreign) >= 10
    assert gossamer("crawl", "--resume", out) == 0
    assert caplog.text.count("not written by this crawl") == 1
    assert gossamer("recover", out) == 0
    assert gossamer("index", out, "--workers", "1") == 0
    assert assert_nothing_destroyed(before, out) == []
    assert_pages_match_warc(out)
    urls = {str(url) for (url,) in rows(out, "SELECT url FROM pages")}
    assert not [url for url in urls if "example.com" in url or "iana.org" in url]


def test_a_corrupt_database_is_refused_clearly_and_recover_rebuilds_it(
    out: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = {u for (u,) in rows(out, "SELECT url FROM pages WHERE warc_file IS NOT NULL")}
    before = snapshot(out)
    database = out / "crawl.db"
    data = bytearray(database.read_bytes())
    data[:100] = b"\xff" * 100
    database.write_bytes(bytes(data))
    assert gossamer("crawl", "--resume", out) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "corrupt or is not a SQLite database" in error[0], error
    result = recover(out)
    assert result.moved_aside is not None and result.moved_aside.read_bytes() == bytes(data)
    got = {u for (u,) in rows(out, "SELECT url FROM pages WHERE warc_file IS NOT NULL")}
    assert got == expected
    resume_and_index(out)
    assert assert_nothing_destroyed(before, out) == []


def test_recover_keeps_a_healthy_database_and_its_statistics(out: Path) -> None:
    reports = out / "reports"
    stats = json.loads((reports / "stats.json").read_text())
    domains = (reports / "domains.tsv").read_text()
    per_host_before = per_host(reports / "domains.tsv")
    pages = rows(out, "SELECT * FROM pages ORDER BY url")
    result = recover(out)
    assert result.moved_aside is None and not list(out.glob("crawl.db.damaged*"))
    assert rows(out, "SELECT * FROM pages ORDER BY url") == pages
    after = json.loads((reports / "stats.json").read_text())
    assert after["duration_seconds"] == pytest.approx(stats["duration_seconds"], abs=0.5)
    assert after["pages_per_second"] == pytest.approx(stats["pages_per_second"], rel=0.05)
    for key in ("pages", "skipped_robots", "skipped_other", "discovered"):
        assert after[key] == stats[key], key
    traps = {kind: n for kind, n in stats["errors"].items() if kind.startswith("trap_")}
    assert traps and traps.items() <= after["errors"].items()
    # Per host: pages and robots.txt status (bytes and errors count final answers only).
    assert per_host(reports / "domains.tsv") == per_host_before
    assert "unknown" not in domains
    before = snapshot(out)
    resume_and_index(out)
    assert assert_nothing_destroyed(before, out) == []


def test_recover_names_a_warc_file_turned_to_junk_and_carries_on(out: Path) -> None:
    victim = own_files(out)[2]
    lost = {url for url, _, _ in page_rows(out, victim.name)}
    junk = bytes(range(256)) * (victim.stat().st_size // 256 + 1)
    victim.write_bytes(junk[: victim.stat().st_size])
    before = snapshot(out)
    result = recover(out)
    assert [report.filename for report in result.damage] == [victim.name]
    assert result.requeued >= len(lost) > 0
    assert set(rows(out, "SELECT url FROM pages")).isdisjoint({(url,) for url in lost})
    resume_and_index(out)
    assert assert_nothing_destroyed(before, out) == []


def test_after_a_clean_stop_the_database_already_agrees_with_the_warc_files(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "gossamer", "-vv", *start_crawl(site, tmp_path)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    fetched = 0
    for line in proc.stderr:
        fetched += "fetched url=" in line
        if fetched == 40 and "fetched url=" in line:
            proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 3  # stopped before its end
    out = tmp_path / "crawl"
    assert_pages_match_warc(out)
    assert not list((out / "warc").glob("*.torn*"))
    resume_and_index(out)


def test_a_killed_worker_stops_the_crawl_with_one_error_and_it_resumes(tmp_path: Path) -> None:
    with ThreadedTestWeb(build_web(SPEC)) as site:
        args = start_crawl(site, tmp_path, "--workers", "2", "--concurrency", "4")
        command = [sys.executable, "-m", "gossamer", "-vv", *args]
        proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        fetched = 0
        errors = []
        # Only a guard: a coordinator left waiting for its dead worker would hang the test.
        guard = threading.Timer(120, proc.kill)
        guard.start()
        for line in proc.stderr:
            if " worker=1 " in line and "fetched url=" in line:
                fetched += 1
                if fetched == 15:
                    pid = int(line.split(" pid=", 1)[1].split()[0])
                    os.kill(pid, signal.SIGKILL)
            if line.startswith("gossamer: error:"):
                errors.append(line)
        guard.cancel()
        assert proc.wait(timeout=120) == 2
        assert len(errors) == 1 and "worker 1 was killed by SIGKILL" in errors[0], errors
        out = tmp_path / "crawl"
        # Before it stopped, the coordinator brought crawl.db level with every WARC record.
        assert_pages_match_warc(out)
        before = snapshot(out)
        result = subprocess.run(
            [sys.executable, "-m", "gossamer", "crawl", "--resume", str(out)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        report = site.report()
    assert report.missing == ()
    assert_nothing_destroyed(before, out)
    assert_pages_match_warc(out)
    assert gossamer("index", out, "--workers", "1") == 0
