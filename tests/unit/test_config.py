"""The configuration tree: TOML, flags, and one clear error for bad values."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.config import load_config, parse_duration
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
