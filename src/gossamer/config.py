"""The one typed configuration tree, loaded once from TOML, then flags (flags win).

Constructors elsewhere take the few specific values they need from this tree, never the tree
itself and never a string key. Validation happens here, at the edge; inside, values are trusted.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gossamer import __version__
from gossamer.errors import ConfigError

DEFAULT_USER_AGENT = f"Gossamer/{__version__} (+https://github.com/gossamer-crawler/gossamer)"


@dataclass(frozen=True, slots=True)
class PolitenessConfig:
    delay: float = 1.0  # minimum seconds between two requests to one host
    max_per_host: int = 1  # requests in flight per host
    crawl_delay_cap: float = 30.0  # a robots.txt Crawl-delay above this is clamped
    robots_ttl: float = 86_400.0  # seconds a fetched robots.txt stays valid
    robots_retry_delay: float = 60.0  # first wait after a 5xx/unreachable robots.txt
    robots_retries: int = 3  # further robots.txt attempts before the host is given up
    # When only hosts waiting to retry an unavailable robots.txt are left, the crawl waits at
    # most this long for them, then stops and leaves them deferred for --resume.
    robots_wait: float = 30.0
    max_per_ip: int | None = None  # requests in flight per server address (shared hosting)
    max_retries: int = 3  # retries of one URL after 429/503
    max_backoff: float = 3_600.0  # cap on any per-host backoff
    respect_nofollow: bool = False


@dataclass(frozen=True, slots=True)
class FetchConfig:
    user_agent: str = DEFAULT_USER_AGENT
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 60.0  # whole exchange, so a byte-by-byte trickle cannot hold a slot
    max_body: int = 10_000_000  # bytes on the wire
    max_decoded: int = 20_000_000  # bytes after removing Content-Encoding
    max_redirects: int = 10  # hops in one redirect chain (robots.txt itself: 5, per RFC 9309)
    keep_types: tuple[str, ...] = ("text/html", "application/xhtml+xml", "application/pdf")
    allow_private: bool = False  # fetch private/loopback addresses without --resolve entries
    ca_file: str | None = None  # extra PEM certificate authorities to trust (like curl --cacert)


@dataclass(frozen=True, slots=True)
class ScopeConfig:
    max_depth: int | None = None
    max_url_length: int = 2_048
    # URLs admitted per origin: the last stop for traps no pattern catches (endless calendars).
    max_pages_per_host: int | None = 10_000
    max_path_depth: int = 32  # path segments; deeper URLs are refused as traps
    max_path_repeats: int = 3  # times one path segment (or query key) may occur
    strip_session_ids: bool = True  # drop jsessionid, PHPSESSID, sid=... before dedup


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    seeds: Path
    out: Path
    max_pages: int | None = None
    time_limit: float | None = None  # seconds
    concurrency: int = 64  # requests in flight, per worker process
    workers: int = 1  # crawler processes; hosts are split between them by a hash
    resolve: tuple[str, ...] = ()  # "HOST:IP", "HOST:PORT:IP", "*.example:IP"
    warc_max_bytes: int = 1_000_000_000
    report_interval: float = 30.0
    progress: bool = True
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    scope: ScopeConfig = field(default_factory=ScopeConfig)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``"90"``, ``"90s"``, ``"15m"``, ``"2h"`` -> seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise ConfigError(f"invalid duration {text!r} (use e.g. 90s, 15m, 2h)")
    return float(match.group(1)) * _UNITS[match.group(2)]


_SECTIONS: dict[str, type[Any]] = {
    "politeness": PolitenessConfig,
    "fetch": FetchConfig,
    "scope": ScopeConfig,
}


def _coerce(name: str, value: Any, current: Any, annotation: str) -> Any:
    """Check a TOML value against the field's type (taken from its default and annotation)."""
    if "Path" in annotation:
        if not isinstance(value, str):
            raise ConfigError(f"config: {name} must be a string path")
        return Path(value)
    if "tuple" in annotation:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"config: {name} must be a list of strings")
        return tuple(value)
    if "float" in annotation:
        if isinstance(value, str) and name in {"time_limit"}:
            return parse_duration(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"config: {name} must be a number")
        if value < 0:
            raise ConfigError(f"config: {name} must not be negative")
        return float(value)
    if "bool" in annotation:
        if not isinstance(value, bool):
            raise ConfigError(f"config: {name} must be true or false")
        return value
    if "int" in annotation:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"config: {name} must be an integer")
        if value < 0 or (
            value == 0 and name in {"concurrency", "max_per_host", "workers", "max_per_ip"}
        ):
            raise ConfigError(f"config: {name} must be positive")
        return value
    if "str" in annotation:
        if not isinstance(value, str):
            raise ConfigError(f"config: {name} must be a string")
        return value
    del current
    return value


def _apply(target: Any, values: dict[str, Any], where: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(target)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in fields or name in _SECTIONS:
            raise ConfigError(f"config: unknown key {where}{key!r}")
        annotation = str(fields[name].type)
        changes[name] = _coerce(name, value, getattr(target, name), annotation)
    return dataclasses.replace(target, **changes)


def load_config(
    seeds: Path,
    out: Path,
    config_file: Path | None,
    overrides: dict[str, Any],
) -> CrawlConfig:
    """Build the tree: defaults, then the TOML file, then ``overrides`` from flags.

    ``overrides`` maps dotted names (``"max_pages"``, ``"politeness.delay"``) to values that
    the CLI has already parsed; ``None`` values mean "flag not given".
    """
    config = CrawlConfig(seeds=seeds, out=out)
    if config_file is not None:
        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError(f"config file not found: {config_file}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read config file {config_file}: {exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML in {config_file}: {exc}") from exc
        top = {k: v for k, v in data.items() if k not in _SECTIONS and k != "crawl"}
        top.update(data.get("crawl", {}))
        for key in ("seeds", "out"):
            top.pop(key, None)  # the command line names these
        config = _apply(config, top, "")
        for section in _SECTIONS:
            if section in data:
                if not isinstance(data[section], dict):
                    raise ConfigError(f"config: [{section}] must be a table")
                sub = _apply(getattr(config, section), data[section], f"{section}.")
                config = dataclasses.replace(config, **{section: sub})
    return apply_overrides(config, overrides)


def apply_overrides(config: CrawlConfig, overrides: dict[str, Any]) -> CrawlConfig:
    """Apply flag values (dotted names, ``None`` = not given) on top of a tree."""
    for dotted, value in overrides.items():
        if value is None:
            continue
        section, _, name = dotted.rpartition(".")
        if section:
            sub = dataclasses.replace(getattr(config, section), **{name: value})
            config = dataclasses.replace(config, **{section: sub})
        else:
            config = dataclasses.replace(config, **{name: value})
    return config


def config_to_json(config: CrawlConfig) -> dict[str, Any]:
    """The tree as plain JSON values, saved in the crawl folder so ``--resume`` can reuse it."""
    data = dataclasses.asdict(config)
    data["seeds"] = str(config.seeds)
    data["out"] = str(config.out)
    return data


def config_from_json(data: dict[str, Any], out: Path) -> CrawlConfig:
    """Rebuild a saved tree; ``out`` is where the crawl folder is now (it may have moved)."""
    try:
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v
            for k, v in data.items()
            if k not in _SECTIONS and k not in {"seeds", "out"}
        }
        for name, kind in _SECTIONS.items():
            values[name] = kind(
                **{k: tuple(v) if isinstance(v, list) else v for k, v in data[name].items()}
            )
        return CrawlConfig(seeds=Path(data["seeds"]), out=out, **values)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"the saved configuration in {out} is unreadable: {exc}") from exc
