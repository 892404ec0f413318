"""Bad input on the command line: one ``gossamer: error:`` line, exit 2, nothing written."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.cli import build_parser
from gossamer.cli.crawl import crawl_plan

from .cli_helpers import one_error, run

SEEDS = "http://a.web.test:9/\nb.web.test:9\n"


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    path = tmp_path / "seeds.txt"
    path.write_text(SEEDS)
    return path


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("crawl = 5\n", "[crawl] must be a table of settings (got 5)"),
        ("max_pages = 0\n", "max_pages must be at least 1 (got 0)"),
        ("time_limit = nan\n", "time_limit must be a finite number (got nan)"),
        ("report_interval = 0\n", "report_interval must be at least 0.1 seconds (got 0.0)"),
        ("warc_max_bytes = 0\n", "warc_max_bytes must be at least 1 (got 0)"),
        ("[politeness]\nrobots_wait = inf\n", "politeness.robots_wait must be a finite number"),
        ("[politeness]\nmax_per_ip = 0\n", "politeness.max_per_ip must be at least 1 (got 0)"),
        ('[fetch]\nca_file = "/no/such.pem"\n', "fetch.ca_file names no file"),
        ('[fetch]\nuser_agent = "a\\r\\nb"\n', "fetch.user_agent must not contain control"),
    ],
)
def test_bad_config_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, seeds: Path, toml: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(toml)
    out = tmp_path / "out"
    error = one_error(*run(capsys, "crawl", seeds, "--out", out, "--config", config))
    assert error.startswith(f"config {config}: {message}")
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--concurrency", "100000000"], "--concurrency must be at most 10000"),
        (["--max-depth", "-1"], "--max-depth must not be negative (got -1)"),
        (["--user-agent", "bot\r\nX-Evil: 1"], "--user-agent must not contain control"),
        (["--user-agent", "\x1b[2Jbot"], "--user-agent must not contain control"),
        (["--ca-file", "/no/such.pem"], "--ca-file names no file"),
        (["--robots-wait", "nan"], "argument --robots-wait: invalid duration 'nan'"),
        (["--time", "0"], "--time must be more than 0 seconds"),
        (["--max-per-ip", "0"], "argument --max-per-ip: must be positive: '0'"),
        (["--resolve", "nonsense"], "--resolve entry 'nonsense' is not HOST:IP"),
        (["--max-pages", "x"], "argument --max-pages: not an integer: 'x'"),
        (["--bogus", "\x1b[31m"], "unrecognized arguments: --bogus \\x1b[31m"),
    ],
)
def test_bad_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, seeds: Path, flags: list[str], message: str
) -> None:
    out = tmp_path / "out"
    error = one_error(*run(capsys, "crawl", seeds, "--out", out, *flags))
    assert error.startswith(message)
    assert "\x1b" not in error and "\r" not in error
    assert not out.exists()


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert "required" in one_error(*run(capsys))
    assert "--out" in one_error(*run(capsys, "crawl", "seeds.txt"))
    assert "invalid choice" in one_error(*run(capsys, "nonsense"))


def test_seed_line_with_port_0(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("http://a.test:0/\n")
    error = one_error(*run(capsys, "crawl", path, "--out", tmp_path / "out"))
    assert "line 1: port 0 cannot be connected to" in error


def _plan(*argv: str | Path) -> object:
    return crawl_plan(build_parser().parse_args(["crawl", *map(str, argv)]))


def test_seed_problems_are_reported_by_line_and_made_safe(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "seeds.txt"
    huge = "http://a.test/" + "x" * 1_000_000
    path.write_bytes(
        b"a.test\n" + huge.encode() + b"\nhttp://caf\xe9.test/\nb.test/\x1b[2J\x00\n"
        b"http://user:secret@c.test/\nd.test\n"
    )
    with caplog.at_level(logging.WARNING, logger="gossamer"):
        plan = crawl_plan(build_parser().parse_args(["crawl", str(path), "--out", "o"]))
    assert [seed.line for seed in plan.seeds.seeds] == [1, 6]
    messages = [record.getMessage() for record in caplog.records]
    assert [m.split(" (")[0] for m in messages] == [f"seeds line {n} ignored" for n in (2, 3, 4, 5)]
    assert "too long: 1000014 characters" in messages[0] and len(messages[0]) < 400
    assert "not valid UTF-8" in messages[1] and "\\xe9" in messages[1]
    assert "contains control characters" in messages[2] and "\\x1b[2J\\x00" in messages[2]
    assert "credentials in URL are not supported): http://***@c.test/" in messages[3]
    assert all(m.isprintable() and "secret" not in m for m in messages)


def test_seeds_with_credentials_only(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_text("http://user:secret@a.test/\n")
    code, err = run(capsys, "crawl", path, "--out", tmp_path / "out")
    assert "line 1: credentials in URL are not supported" in one_error(code, err)
    assert "secret" not in err
    assert not (tmp_path / "out").exists()


def test_paths_with_escape_codes_are_echoed_safely(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "seeds\x1b]0;pwned\x07.txt"
    error = one_error(*run(capsys, "crawl", missing, "--out", tmp_path / "out"))
    assert error.endswith("seeds\\x1b]0;pwned\\x07.txt")


# --- nothing is written by a crawl that fails before it starts ----------------------------


@pytest.mark.parametrize(
    "flags",
    [["--resolve", "a.test:not-an-ip"], ["--ca-file", "/no/such.pem"], ["--max-depth", "-2"]],
)
def test_a_refused_crawl_leaves_no_crawl_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, seeds: Path, flags: list[str]
) -> None:
    out = tmp_path / "out"
    out.mkdir()  # an existing, empty folder stays empty
    one_error(*run(capsys, "crawl", seeds, "--out", out, *flags))
    assert list(out.iterdir()) == []


def test_a_bad_seeds_file_leaves_no_crawl_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "seeds.txt"
    bad.write_text("ftp://x.test/\n")
    out = tmp_path / "out"
    assert "bad seed" in one_error(*run(capsys, "crawl", bad, "--out", out))
    assert not out.exists()


def test_an_unwritable_folder_leaves_no_crawl_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, seeds: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    error = one_error(*run(capsys, "crawl", seeds, "--out", blocker / "out"))
    assert error.startswith("cannot write to output folder")


# --- gossamer testweb ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "70000"], "argument --port: not a port number (0-65535): '70000'"),
        (["--port", "-1"], "argument --port: not a port number"),
        (["--hosts", "0"], "argument --hosts: must be positive: '0'"),
        (["--pages", "0"], "argument --pages: must be positive: '0'"),
        (["--hosts", "100000000"], "a test web of 100000000 hosts x 50 pages is too large"),
        (["--hosts", "100", "--pages", "100000"], "a test web of 100 hosts x 100000 pages"),
        (["--bind", "not an address"], "argument --bind: not an address to listen on"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
        (["--hosts", "1", "--port", "0"], "invalid test web: "),
    ],
)
def test_testweb_flags(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    assert one_error(*run(capsys, "testweb", *flags)).startswith(message)


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


def test_testweb_port_in_use(capsys: pytest.CaptureFixture[str], busy_port: int) -> None:
    code, err = run(capsys, "testweb", "--port", str(busy_port), "--hosts", "4", "--pages", "1")
    error = one_error(code, err)
    assert error == f"cannot serve the test web on 127.0.0.1:{busy_port}: Address already in use"


def test_testweb_address_not_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    # 192.0.2.0/24 is TEST-NET-1: never assigned, so binding fails without any traffic.
    code, err = run(capsys, "testweb", "--bind", "192.0.2.1", "--port", "0", "--hosts", "4")
    assert "cannot serve the test web on 192.0.2.1:0: " in one_error(code, err)


def test_testweb_seeds_file_in_a_missing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "missing" / "seeds.txt"
    code, err = run(
        capsys, "testweb", "--port", "0", "--hosts", "4", "--pages", "1", "--seeds-file", target
    )
    assert one_error(code, err) == f"cannot write {target}: No such file or directory"
