"""The configuration tree: TOML, flags, and one clear error for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, load_config, parse_duration, read_config_file
from gossamer.config_check import RULES, check_config
from gossamer.errors import ConfigError


def test_defaults_are_polite() -> None:
    config = load_config(Path("s"), Path("o"), None, {})
    assert config.politeness.max_per_host == 1
    assert config.politeness.delay >= 1.0
    assert config.fetch.max_body == 10_000_000


def test_toml_then_flags_win(tmp_path: Path) -> None:
    toml = tmp_path / "g.toml"
    toml.write_text(
        'max_pages = 10\ntime_limit = "2h"\n'
        '[politeness]\ndelay = 0.25\n[fetch]\nuser_agent = "X/1"\n'
    )
    config = load_config(Path("s"), Path("o"), toml, {"max_pages": 20, "politeness.delay": None})
    assert config.max_pages == 20
    assert config.time_limit == 7200.0
    assert config.politeness.delay == 0.25
    assert config.fetch.user_agent == "X/1"


@pytest.mark.parametrize(
    "text",
    [
        "max_pages = -1\n",
        "max_pages = 'many'\n",
        "unknown = 1\n",
        "[politeness]\ndelay = 'slow'\n",
        "[politeness]\nnope = 1\n",
        "concurrency = 0\n",
        "this is not toml\n",
        "politeness = 3\n",
        "crawl = 5\n",
        "[crawl]\nmax_pages = 0\n",
        "time_limit = nan\n",
        "time_limit = inf\n",
        "time_limit = 0\n",
        "time_limit = '999999999999999999999999h'\n",
        "report_interval = 0\n",
        "warc_max_bytes = 0\n",
        "concurrency = 100000000\n",
        "workers = 1000\n",
        "resolve = ['nonsense']\n",
        "resolve = 'a.test:127.0.0.1'\n",
        "max_pages = 1.5\n",
        "max_pages = true\n",
        "[politeness]\nrobots_wait = nan\n",
        "[politeness]\nrobots_wait = -1\n",
        "[politeness]\nmax_per_ip = 0\n",
        "[politeness]\nrespect_nofollow = 'yes'\n",
        '[fetch]\nuser_agent = "bot\\r\\nX-Evil: 1"\n',
        "[fetch]\nuser_agent = ''\n",
        '[fetch]\nuser_agent = "\\u001b[2Jbot"\n',
        '[fetch]\nuser_agent = "bot\\u0000"\n',
        "[fetch]\nuser_agent = 'b\u00f6t/1'\n",
        "[fetch]\nca_file = '/no/such/file.pem'\n",
        "[fetch]\nkeep_types = []\n",
        "[fetch]\nread_timeout = 0\n",
        "[scope]\nmax_depth = -1\n",
        "[scope]\nmax_url_length = 0\n",
        "[scope]\nmax_depth = {a = 1}\n",
    ],
)
def test_invalid_config_is_one_config_error(tmp_path: Path, text: str) -> None:
    toml = tmp_path / "bad.toml"
    toml.write_text(text)
    with pytest.raises(ConfigError):
        load_config(Path("s"), Path("o"), toml, {})


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(Path("s"), Path("o"), tmp_path / "none.toml", {})


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("90s", 90.0), ("15m", 900.0), ("2h", 7200.0), ("250ms", 0.25)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_bad_duration() -> None:
    with pytest.raises(ConfigError):
        parse_duration("soon")


def test_every_setting_has_a_rule() -> None:
    config = CrawlConfig(seeds=Path("s"), out=Path("o"))
    check_config(config, str)  # the defaults pass
    names = {f"{section}.{name}" for section in ("politeness", "fetch", "scope")
             for name in getattr(config, section).__slots__}  # fmt: skip
    assert names <= RULES.keys()


def test_messages_name_the_source_and_the_value(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("[scope]\nmax_depth = -1\n")
    with pytest.raises(ConfigError) as info:
        load_config(Path("s"), Path("o"), toml, {})
    assert str(info.value) == f"config {toml}: scope.max_depth must not be negative (got -1)"
    flags = {"scope.max_depth": "--max-depth"}
    with pytest.raises(ConfigError, match=r"^--max-depth must not be negative \(got -1\)$"):
        load_config(Path("s"), Path("o"), None, {"scope.max_depth": -1}, flags)


def test_control_characters_in_a_value_are_escaped_in_the_message() -> None:
    with pytest.raises(ConfigError) as info:
        load_config(Path("s"), Path("o"), None, {"fetch.user_agent": "a\x1b[2J\r\nb"})
    message = str(info.value)
    assert "control characters" in message
    assert message.isprintable()
    assert "\\x1b[2J\\r\\n" in message


def test_ca_file_must_exist_and_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pem = tmp_path / "ca.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.chdir(tmp_path)
    config = load_config(Path("s"), Path("o"), None, {"fetch.ca_file": "ca.pem"})
    assert config.fetch.ca_file == str(pem)
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(Path("s"), Path("o"), None, {"fetch.ca_file": str(tmp_path)})
    with pytest.raises(ConfigError, match="names no file"):
        load_config(Path("s"), Path("o"), None, {"fetch.ca_file": "none.pem"})


def test_new_settings_from_toml(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("[politeness]\nrobots_wait = '2m'\nmax-per-ip = 4\n")
    config = load_config(Path("s"), Path("o"), toml, {})
    assert config.politeness.robots_wait == 120.0
    assert config.politeness.max_per_ip == 4


def test_config_file_values_by_dotted_name(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("max_pages = 5\nseeds = 'x'\n[crawl]\ndelay_not_here = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'delay_not_here'"):
        read_config_file(toml)
    toml.write_text("max_pages = 5\nseeds = 'x'\n[crawl]\ntime_limit = 60\n[fetch]\nmax_body = 9\n")
    assert read_config_file(toml) == {"max_pages": 5, "time_limit": 60.0, "fetch.max_body": 9}


def test_a_folder_as_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a folder"):
        load_config(Path("s"), Path("o"), tmp_path, {})


@pytest.mark.parametrize("text", ["1" * 400, "99999999999999d"])
def test_durations_too_long(text: str) -> None:
    with pytest.raises(ConfigError, match="too long"):
        parse_duration(text)
