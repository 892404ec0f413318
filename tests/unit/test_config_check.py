"""The allowed values of the settings, and concurrency against the open-file limit."""

from __future__ import annotations

import dataclasses
import resource
from pathlib import Path

import pytest

from gossamer import config_check
from gossamer.config import CrawlConfig, FetchConfig
from gossamer.config_check import (
    MAX_CONCURRENCY,
    OPEN_FILE_RESERVE,
    check_config,
    check_room,
    fit_open_files,
)
from gossamer.errors import ConfigError

BASE = CrawlConfig(seeds=Path("s"), out=Path("o"))


def _limits(monkeypatch: pytest.MonkeyPatch, soft: int, hard: int, *, raisable: bool) -> None:
    state = {"soft": soft}

    def getrlimit(kind: int) -> tuple[int, int]:
        assert kind == resource.RLIMIT_NOFILE
        return state["soft"], hard

    def setrlimit(kind: int, limits: tuple[int, int]) -> None:
        if not raisable:
            raise ValueError("not allowed")
        state["soft"] = limits[0]

    monkeypatch.setattr(config_check.resource, "getrlimit", getrlimit)
    monkeypatch.setattr(config_check.resource, "setrlimit", setrlimit)


def test_the_default_concurrency_is_lowered_to_fit_with_a_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _limits(monkeypatch, 100, 100, raisable=False)
    config, note = fit_open_files(BASE)
    assert config.concurrency == 100 - OPEN_FILE_RESERVE
    assert note is not None and "\n" not in note
    assert note.startswith("concurrency lowered from 64 to 36: the open-file limit is 100")


def test_the_soft_limit_is_raised_when_the_hard_limit_allows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _limits(monkeypatch, 100, 4096, raisable=True)
    config, note = fit_open_files(dataclasses.replace(BASE, concurrency=1000))
    assert (config.concurrency, note) == (1000, None)


def test_an_explicit_concurrency_above_the_limit_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _limits(monkeypatch, 1024, 1024, raisable=True)
    check_room(1024 - OPEN_FILE_RESERVE, "--concurrency")
    with pytest.raises(ConfigError, match=r"^--concurrency 2000 needs more open files"):
        check_room(2000, "--concurrency")


def test_a_limit_too_low_for_any_crawl(monkeypatch: pytest.MonkeyPatch) -> None:
    _limits(monkeypatch, 40, 40, raisable=False)
    with pytest.raises(ConfigError, match="too low for a crawl"):
        check_room(None, "")


def test_concurrency_has_an_absolute_cap() -> None:
    config = dataclasses.replace(BASE, concurrency=MAX_CONCURRENCY + 1)
    with pytest.raises(ConfigError, match=f"must be at most {MAX_CONCURRENCY}"):
        check_config(config, str)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"max_pages": 0}, "max_pages must be at least 1 (got 0)"),
        ({"time_limit": float("nan")}, "time_limit must be a finite number (got nan)"),
        ({"time_limit": float("inf")}, "time_limit must be a finite number (got inf)"),
        ({"time_limit": 0.0}, "time_limit must be more than 0 seconds (got 0.0)"),
        ({"report_interval": 0.0}, "report_interval must be at least 0.1 seconds"),
        ({"warc_max_bytes": 0}, "warc_max_bytes must be at least 1 (got 0)"),
        ({"workers": "2"}, "workers must be an integer (got '2')"),
        ({"progress": 1}, "progress must be true or false (got 1)"),
        ({"resolve": ("a.test:1.2.3.4", "x")}, "resolve entry 'x' is not HOST:IP"),
    ],
)
def test_top_level_values(changes: dict[str, object], message: str) -> None:
    config = dataclasses.replace(BASE, **changes)  # type: ignore[arg-type]
    with pytest.raises(ConfigError) as info:
        check_config(config, lambda name: f"crawl.json: {name}")
    assert str(info.value).startswith(f"crawl.json: {message}")


@pytest.mark.parametrize(
    "agent",
    ["bot\r\nX-Evil: 1", "bot\x00", "\x1b[2Jbot", "", "(+compatible)", "bötchen/1", "b" * 600],
)
def test_bad_user_agents(agent: str) -> None:
    config = dataclasses.replace(BASE, fetch=FetchConfig(user_agent=agent))
    with pytest.raises(ConfigError, match=r"^--user-agent must"):
        check_config(config, lambda name: "--user-agent")


def test_a_saved_tree_with_a_value_of_the_wrong_type(tmp_path: Path) -> None:
    fetch = FetchConfig(max_body="lots")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"fetch\.max_body must be an integer \(got 'lots'\)"):
        check_config(dataclasses.replace(BASE, fetch=fetch), str)
