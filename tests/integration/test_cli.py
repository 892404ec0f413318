"""The command line on bad input: one clear error line, a non-zero exit, nothing lost."""

from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from gossamer.index import build_index
from gossamer.testweb import ThreadedTestWeb, WebSpec, build_web

from ..unit.index.fake_crawl import make_crawl, search_corpus
from .conftest import RESOLVE, signal_after_fetches

BIN = Path(sys.executable).parent
WARCIO = BIN / "warcio"


def gossamer(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gossamer", *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def error_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("gossamer: error:")]


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadedTestWeb]:
    web = build_web(WebSpec(seed=5, hosts=12, pages_per_host=40, latency=0.003))
    with ThreadedTestWeb(web) as running:
        yield running


def write_seeds(site: ThreadedTestWeb, path: Path) -> Path:
    path.write_text("\n".join(site.seeds()) + "\n")
    return path


def test_missing_seeds_file(tmp_path: Path) -> None:
    result = gossamer("crawl", tmp_path / "nope.txt", "--out", tmp_path / "out")
    assert result.returncode == 2
    assert len(error_lines(result)) == 1
    assert "seeds file not found" in result.stderr


def test_seeds_without_a_valid_line(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("# only junk\nftp://x.org/\nnot a url at all\n")
    result = gossamer("crawl", seeds, "--out", tmp_path / "out")
    assert result.returncode == 2
    assert "bad seed" in error_lines(result)[0]
    assert "line 2" in result.stderr and "line 3" in result.stderr


def test_every_seed_failing_is_a_bad_seed(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds.txt"
    # Nothing listens on port 9 of loopback: every seed is refused.
    seeds.write_text("http://a.web.test:9/\nhttp://b.web.test:9/\n")
    result = gossamer("crawl", seeds, "--out", tmp_path / "out", "--resolve", RESOLVE)
    assert result.returncode == 2
    assert "bad seed" in error_lines(result)[0]
    # The attempt itself is still recorded.
    assert (tmp_path / "out" / "reports" / "stats.txt").exists()


def test_output_folder_that_cannot_be_written(site: ThreadedTestWeb, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    seeds = write_seeds(site, tmp_path / "seeds.txt")
    result = gossamer("crawl", seeds, "--out", blocker / "out", "--resolve", RESOLVE)
    assert result.returncode == 2
    assert "cannot write to output folder" in error_lines(result)[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("max_pages = 'lots'\n", "max_pages must be an integer"),
        ("[politeness]\ndelay = -1\n", "delay must not be negative"),
        ("nonsense = 1\n", "unknown key"),
        ("this is = = not toml\n", "invalid TOML"),
    ],
)
def test_invalid_config(site: ThreadedTestWeb, tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    seeds = write_seeds(site, tmp_path / "seeds.txt")
    result = gossamer("crawl", seeds, "--out", tmp_path / "out", "--config", config)
    assert result.returncode == 2
    assert len(error_lines(result)) == 1
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_bad_flag_values_are_rejected(tmp_path: Path) -> None:
    result = gossamer("crawl", "s.txt", "--out", tmp_path, "--max-pages", "-3")
    assert result.returncode == 2
    assert "must be positive" in result.stderr
    result = gossamer("crawl", "s.txt", "--out", tmp_path, "--resolve", "nonsense")
    assert result.returncode == 2


def test_full_disk_stops_cleanly_and_keeps_what_was_written(
    site: ThreadedTestWeb, small_disk: Path, tmp_path: Path
) -> None:
    seeds = write_seeds(site, tmp_path / "seeds.txt")
    config = tmp_path / "c.toml"
    config.write_text("[politeness]\ndelay = 0.0\n")
    result = gossamer(
        "crawl", seeds, "--out", small_disk / "out", "--resolve", RESOLVE, "--config", config
    )
    assert result.returncode == 2, result.stderr
    errors = error_lines(result)
    assert len(errors) == 1
    assert "disk is full" in errors[0] or "No space left on device" in errors[0]
    warcs = sorted((small_disk / "out" / "warc").glob("*.warc.gz"))
    responses = 0
    for path in warcs:
        check = subprocess.run([WARCIO, "check", str(path)], capture_output=True, check=False)
        assert check.returncode == 0, check.stdout
        with path.open("rb") as stream:
            responses += sum(1 for r in ArchiveIterator(stream) if r.rec_type == "response")
    assert responses > 0
    conn = sqlite3.connect(small_disk / "out" / "crawl.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def test_sigterm_stops_gracefully_with_everything_flushed(
    site: ThreadedTestWeb, tmp_path: Path
) -> None:
    seeds = write_seeds(site, tmp_path / "seeds.txt")
    config = tmp_path / "c.toml"
    config.write_text("[politeness]\ndelay = 0.05\n")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gossamer",
            "-vv",
            "crawl",
            str(seeds),
            "--out",
            str(out),
            "--resolve",
            RESOLVE,
            "--config",
            str(config),
            "--concurrency",
            "4",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    signal_after_fetches(proc, 30, signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 3  # stopped before its end: --resume continues it
    assert "stopped: signal" in stdout
    db = sqlite3.connect(out / "crawl.db")
    try:
        rows = db.execute("SELECT count(*) FROM pages").fetchone()[0]
    finally:
        db.close()
    assert rows >= 30
    crawled = (out / "reports" / "crawled.txt").read_text().splitlines()
    assert len(crawled) == rows
    for path in (out / "warc").glob("*.warc.gz"):
        assert subprocess.run([WARCIO, "check", str(path)], check=False).returncode == 0
    assert (out / "index.cdxj").stat().st_size > 0


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file's size and modification time, the lock file aside."""
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != ".gossamer.lock"
    }


@pytest.fixture
def finished_crawl(site: ThreadedTestWeb, tmp_path: Path) -> Path:
    seeds = write_seeds(site, tmp_path / "seeds.txt")
    out = tmp_path / "out"
    result = gossamer(
        "crawl", seeds, "--out", out, "--resolve", RESOLVE, "--max-pages", "20", "--delay", "0"
    )
    assert result.returncode == 0, result.stderr
    return out


def test_corrupt_database_is_refused_and_nothing_is_touched(finished_crawl: Path) -> None:
    database = finished_crawl / "crawl.db"
    database.write_bytes(b"this is not a database at all" * 100)
    before = _snapshot(finished_crawl)
    result = gossamer("crawl", "--resume", finished_crawl)
    assert result.returncode == 2
    errors = error_lines(result)
    assert len(errors) == 1 and "corrupt" in errors[0]
    assert _snapshot(finished_crawl) == before


def test_database_from_another_version_is_refused(finished_crawl: Path) -> None:
    conn = sqlite3.connect(finished_crawl / "crawl.db")
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    before = _snapshot(finished_crawl)
    result = gossamer("crawl", "--resume", finished_crawl)
    assert result.returncode == 2
    assert "schema version 99" in error_lines(result)[0]
    assert _snapshot(finished_crawl) == before


def test_folder_in_use_by_another_crawl_is_refused(finished_crawl: Path) -> None:
    before = _snapshot(finished_crawl)
    with (finished_crawl / ".gossamer.lock").open("a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = gossamer("crawl", "--resume", finished_crawl)
    assert result.returncode == 2
    assert "in use by another crawl" in error_lines(result)[0]
    assert _snapshot(finished_crawl) == before


def test_page_target_and_statistics_carry_over_a_resume(
    site: ThreadedTestWeb, finished_crawl: Path
) -> None:
    conn = sqlite3.connect(finished_crawl / "crawl.db")
    first_run = {u for (u,) in conn.execute("SELECT url FROM pages WHERE purpose = 'page'")}
    conn.close()
    already = len(site.audit.fetched())
    result = gossamer("crawl", "--resume", finished_crawl, "--max-pages", "50")
    assert result.returncode == 0, result.stderr
    assert "resuming the crawl" in result.stdout
    assert "Crawled 50 in" in result.stdout
    # crawl.json records the new target, so the next resume keeps it.
    saved = json.loads((finished_crawl / "crawl.json").read_text())
    assert saved["config"]["max_pages"] == 50
    # The pages of the first run are not fetched again.
    assert not set(site.audit.fetched()[already:]) & first_run


@pytest.mark.parametrize("workers", ["1", "2"])
def test_bare_domain_seed_falls_back_from_https_to_http(
    site: ThreadedTestWeb, tmp_path: Path, workers: str
) -> None:
    # The test web speaks plain HTTP only, so https://... fails its TLS handshake. With two
    # workers, one owns the seed's host and the page target follows it there.
    bare = site.seeds()[0].removeprefix("http://").rstrip("/")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# a bare host:port, as a user would type it\n{bare}\n")
    result = gossamer(
        "crawl", seeds, "--out", tmp_path / "out", "--resolve", RESOLVE, "--max-pages", "5",
        "--delay", "0", "--workers", workers,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Crawled 5 in" in result.stdout
    conn = sqlite3.connect(tmp_path / "out" / "crawl.db")
    schemes = {u.split(":")[0] for (u,) in conn.execute("SELECT url FROM pages")}
    conn.close()
    assert schemes == {"https", "http"}


def test_a_crawl_folder_belongs_to_one_crawl(
    site: ThreadedTestWeb, finished_crawl: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_text(site.seeds()[0] + "\n")
    before = _snapshot(finished_crawl)
    flags = ["--resolve", RESOLVE, "--max-pages", "20", "--delay", "0"]
    result = gossamer("crawl", other, "--out", finished_crawl, *flags)
    assert result.returncode == 2
    (error,) = error_lines(result)
    assert "holds a crawl started with other seeds" in error
    assert f"'gossamer crawl --resume {finished_crawl}'" in error
    result = gossamer("crawl", tmp_path / "seeds.txt", "--out", finished_crawl, *flags[:2])
    assert result.returncode == 2
    assert "--max-pages (20 there, no limit here)" in error_lines(result)[0]
    assert _snapshot(finished_crawl) == before
    # The same command again continues the crawl (here: its target is already reached).
    result = gossamer("crawl", tmp_path / "seeds.txt", "--out", finished_crawl, *flags)
    assert result.returncode == 0, result.stderr
    assert "resuming the crawl" in result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["crawl", "seeds.txt", "--out", "out", "--concurrency", "100000000"],
        ["crawl", "seeds.txt", "--out", "out", "--user-agent", "bot\r\nX-Evil: 1"],
        ["crawl", "seeds.txt", "--out", "out", "--bogus", "\x1b[2J"],
        ["testweb", "--port", "70000"],
        ["testweb", "--hosts", "0"],
        ["search", "no-such-folder", "query"],
    ],
)
def test_bad_input_from_the_real_entry_point(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "seeds.txt").write_text("http://a.web.test/\n")
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("gossamer: error: ")
    assert result.stderr.rstrip("\n").isprintable()
    assert "\x1b" not in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small indexed crawl folder, made without a crawl: enough for ``gossamer search``."""
    folder = make_crawl(tmp_path_factory.mktemp("cli-search") / "crawl", search_corpus())
    build_index(folder)
    return folder


def test_search_output_into_a_pipe_closed_early_stops_quietly(indexed: Path) -> None:
    # The pipe's reading end is closed before gossamer starts, as `head` closes it once it
    # has its lines: the very first write meets a broken pipe, every time.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "gossamer", "search", str(indexed), "write"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert result.stderr == ""  # no traceback, no "Exception ignored ... BrokenPipeError"
    assert result.returncode == 128 + signal.SIGPIPE


def test_search_into_head_prints_the_first_lines(indexed: Path) -> None:
    search = subprocess.Popen(
        [sys.executable, "-m", "gossamer", "search", str(indexed), "write"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert search.stdout is not None and search.stderr is not None
    head = subprocess.run(
        ["head", "-n", "1"], stdin=search.stdout, capture_output=True, check=True, timeout=120
    )
    search.stdout.close()  # only head reads it now; once head exits, nobody does
    assert search.wait(timeout=120) in {0, 128 + signal.SIGPIPE}
    assert search.stderr.read() == b""
    search.stderr.close()
    assert re.match(r"\d+ matches, \d+ results after folding duplicates", head.stdout.decode())


def test_a_query_starting_with_a_dash_from_the_real_entry_point(indexed: Path) -> None:
    result = gossamer("search", indexed, "write", "-journal", "--json")
    assert result.returncode == 0, result.stderr
    urls = {hit["url"] for hit in json.loads(result.stdout)["hits"]}
    assert "http://a.test/wal" in urls
    assert "http://b.test/journal" not in urls


def test_a_json_search_error_is_json_on_stdout(tmp_path: Path) -> None:
    result = gossamer("search", tmp_path, "write", "--json")
    assert result.returncode == 2
    [line] = error_lines(result)
    assert json.loads(result.stdout) == {"error": line.removeprefix("gossamer: error: ")}
    assert "holds no crawl" in result.stdout  # crawl first, then index: the line says both


def test_a_query_that_is_not_utf8_is_one_error_line(indexed: Path) -> None:
    # What a Latin-1 terminal sends for "café": the byte 0xE9, not valid UTF-8.
    result = subprocess.run(
        [sys.executable, "-m", "gossamer", "search", str(indexed).encode(), b"caf\xe9"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "gossamer: error: the query is not UTF-8 text; check the terminal's encoding (LANG, LC_ALL)"
    ]
