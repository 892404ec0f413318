"""Property: whatever the TOML file and flags, ``gossamer crawl`` starts or says why in one line.

Hypothesis writes TOML files (known and unknown keys; numbers, NaN, infinities, huge,
negative and zero values; strings, tables, arrays) and flag lists, and runs ``cli.main``
in-process. The crawler itself is replaced by a stub, so nothing touches the network: what
is tested is everything before the first request. Either the crawl starts (exit 0, no error
line) or exactly one ``gossamer: error:`` line is printed with exit 2. An exception that
escapes ``main`` fails the test.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gossamer import cli
from gossamer.config import CrawlConfig
from gossamer.config_check import RULES
from gossamer.engine import crawler, workers
from gossamer.engine.crawler import CrawlOutcome
from gossamer.seeds import SeedList
from gossamer.stats import CrawlStats

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_KEYS = [*sorted(RULES), "nonsense", "max-pages", "politeness.nope", "seeds", "crawl.x"]
_FLOATS = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [0.0, -0.0, -1.0, 1e308, 5e-324, 0.05]
)
_SCALARS = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([0, -1, 1, 2**63 - 1, 10**12]),
    _FLOATS,
    st.booleans(),
    st.text(max_size=12),
    st.sampled_from(["90s", "2h", "0", "-5m", "soon", "*.a.test:127.0.0.1", "text/html"]),
)
# Values a setting may well accept, so that clean starts are explored as much as refusals.
_PLAUSIBLE = st.one_of(
    st.integers(min_value=1, max_value=64),
    st.floats(min_value=0.1, max_value=1000),
    st.booleans(),
    st.sampled_from(["90s", "mybot/1.0", "text/html"]),
    st.just(["*.a.test:127.0.0.1"]),
)
_VALUES = _PLAUSIBLE | st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON escapes are TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    items = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
    return "{" + items + "}"


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    entries = draw(st.lists(st.tuples(st.sampled_from(_KEYS), _VALUES), max_size=6))
    top: list[str] = []
    tables: dict[str, list[str]] = {}
    for dotted, value in entries:
        section, _, name = dotted.rpartition(".")
        line = f"{_toml_key(name)} = {_toml_value(value)}"
        if section:
            tables.setdefault(section, []).append(line)
        else:
            top.append(line)
    if draw(st.booleans()):
        top.append(draw(st.sampled_from(["crawl = 5", "politeness = 3", "scope = []"])))
    parts = ["\n".join(dict.fromkeys(top))]
    for section, lines in tables.items():
        parts.append(f"[{section}]\n" + "\n".join(dict.fromkeys(lines)))
    if draw(st.integers(0, 9)) == 0:
        parts.append(draw(st.text(max_size=20)))  # sometimes not TOML at all
    return "\n".join(parts) + "\n"


_FLAG_VALUES = st.one_of(
    st.integers(min_value=1, max_value=64).map(str),
    st.sampled_from(["1", "8", "90s", "2h", "mybot/2", "*.a.test:127.0.0.1", "a.test:::1"]),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from(["0", "-1", "nan", "inf", "1e999", "", "x", "9" * 40, "a\r\nb", "\x1b[2J"]),
    st.text(max_size=16),
)
_VALUED = [
    "--max-pages", "--time", "--concurrency", "--workers", "--max-depth", "--user-agent",
    "--delay", "--max-per-host", "--max-per-ip", "--robots-wait", "--ca-file", "--resolve",
]  # fmt: skip
_SWITCHES = ["--nofollow", "--no-progress", "--bogus"]


@st.composite
def flag_lists(draw: st.DrawFn) -> list[str]:
    flags: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 3)) == 0:
            flags.append(draw(st.sampled_from(_SWITCHES)))
        else:
            flags += [draw(st.sampled_from(_VALUED)), draw(_FLAG_VALUES)]
    return flags


class _StubCrawler:
    """Stands in for the engine: writes the report ``main`` prints, fetches nothing."""

    def __init__(self, config: CrawlConfig, seeds: SeedList) -> None:
        self._config = config

    async def run(self) -> CrawlOutcome:
        reports = self._config.out / "reports"
        reports.mkdir(exist_ok=True)
        (reports / "stats.txt").write_text("stub\n")
        return CrawlOutcome(CrawlStats(concurrency=self._config.concurrency), "stub")


def _stub_workers(
    config: CrawlConfig, seeds: SeedList, count: int, early: object = ()
) -> CrawlOutcome:
    reports = config.out / "reports"
    reports.mkdir(exist_ok=True)
    (reports / "stats.txt").write_text("stub\n")
    return CrawlOutcome(CrawlStats(concurrency=config.concurrency), "stub")


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(crawler, "Crawler", _StubCrawler)  # what the crawl command runs
    monkeypatch.setattr(workers, "run_workers", _stub_workers)


_RUNS = itertools.count()


def _check_outcome(code: int, err: str) -> None:
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("gossamer: error:")]
    assert all(line.isprintable() for line in err.splitlines())
    if code == 0:
        assert errors == [], err
    else:
        assert code == 2, err
        assert len(errors) == 1, err


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(toml=st.none() | toml_documents(), flags=flag_lists())
def test_any_config_and_flags_start_cleanly_or_fail_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_engine: None,
    toml: str | None,
    flags: list[str],
) -> None:
    run = tmp_path / f"run{next(_RUNS)}"
    run.mkdir()
    seeds = run / "seeds.txt"
    seeds.write_text("http://a.test/\nb.test\n")
    argv = ["crawl", str(seeds), "--out", str(run / "out"), *flags]
    if toml is not None:
        (run / "c.toml").write_text(toml, encoding="utf-8", errors="surrogatepass")
        argv += ["--config", str(run / "c.toml")]
    code = cli.main(argv)
    _check_outcome(code, capsys.readouterr().err)
    if code != 0:
        assert not (run / "out" / "crawl.json").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-pages", "5", "--time", "1h", "--delay", "0", "--resolve", "*.a.test:127.0.0.1"],
        ["--workers", "2", "--concurrency", "4", "--user-agent", "mybot/1.0 (+https://x.test)"],
    ],
)
def test_a_valid_command_line_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_engine: None, argv: list[str]
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://a.test/\n")
    out = tmp_path / "out"
    assert cli.main(["crawl", str(seeds), "--out", str(out), *argv]) == 0
    assert (out / "crawl.json").is_file()
    assert "stopped: stub" in capsys.readouterr().out
    # The same command again continues the same crawl.
    assert cli.main(["crawl", str(seeds), "--out", str(out), *argv]) == 0
    assert "resuming the crawl" in capsys.readouterr().out
