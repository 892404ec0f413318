"""The crawl's settings as stored in Redis: written once at creation, read back by joiners.

Data flow: the creating ``gossamer crawl --frontier`` -> **settings** -> Redis -> **settings**
-> every joining worker. The first writer wins (``SET NX``), so two creators racing agree.
What is stored is plain JSON of every setting by dotted name; reading it back rebuilds the
typed tree and checks it with :func:`~gossamer.config_check.check_config`, exactly like a
config file, so nothing in Redis is run as code and an out-of-range value is refused with
one clear :class:`~gossamer.errors.ConfigError`.

A joiner keeps its own machine-local settings (concurrency, resolve entries, WARC size,
timeouts, progress, its proxy and cookie file: the route and the login are the machine's;
stored, they hold no secret, as a proxy URL never carries its password). The crawl-wide
ones (politeness, scope, limits, user agent, kept types) come from Redis: a joiner that
asks for a looser politeness value is refused, and one that asks for any other crawl-wide
value than the stored one is told the crawl fixes it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from gossamer.config import CrawlConfig, apply_overrides
from gossamer.config_check import RULES, check_config, settings_by_name
from gossamer.errors import ConfigError, shortened

__all__ = ["LOCAL", "from_json", "joined", "politeness_fields", "to_json"]

FORMAT = 1
# Settings each worker chooses for itself: they shape its own machine, not the load on a site.
LOCAL = frozenset(
    {
        "concurrency",
        "workers",
        "resolve",
        "warc_max_bytes",
        "report_interval",
        "progress",
        "fetch.connect_timeout",
        "fetch.read_timeout",
        "fetch.total_timeout",
        "fetch.allow_private",
        "fetch.ca_file",
        "fetch.proxy",
        "fetch.cookies_file",
        "render.pool",
        "render.browser",
        "render.memory_mb",
    }
)
_NONE_HIGH = math.inf  # an optional limit left out (None) is the loosest value
# Politeness settings and the direction that is stricter: +1 higher is stricter, -1 lower is.
_STRICTER: dict[str, int] = {
    "politeness.delay": 1,
    "politeness.max_per_host": -1,
    "politeness.crawl_delay_cap": 1,
    "politeness.robots_ttl": -1,
    "politeness.robots_retry_delay": 1,
    "politeness.max_per_ip": -1,
    "politeness.max_retries": -1,
    "politeness.max_backoff": 1,
    "politeness.respect_nofollow": 1,
}


def to_json(config: CrawlConfig) -> str:
    """Every setting by dotted name (lists for tuples), with the format number."""
    values = {
        k: list(v) if isinstance(v, tuple) else v for k, v in settings_by_name(config).items()
    }
    return json.dumps({"format": FORMAT, "settings": values}, sort_keys=True)


def _stored_values(text: str | bytes) -> dict[str, Any]:
    where = "the crawl settings stored in Redis"
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} are not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{where} are not in Gossamer's format {FORMAT}")
    values = data.get("settings")
    if not isinstance(values, dict):
        raise ConfigError(f"{where} hold no table of settings")
    unknown = sorted(set(values) - set(RULES))
    if unknown:
        raise ConfigError(f"{where}: unknown setting {shortened(unknown[0], 60)!r}")
    missing = sorted(set(RULES) - set(values))
    if missing:
        raise ConfigError(f"{where}: setting {missing[0]!r} is missing")
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def from_json(text: str | bytes, seeds: Path, out: Path) -> CrawlConfig:
    """The stored tree, checked like a config file; ConfigError names the setting at fault."""
    values = _stored_values(text)
    try:
        config = apply_overrides(CrawlConfig(seeds=seeds, out=out), values)
    except TypeError as exc:
        raise ConfigError(f"the crawl settings stored in Redis are unusable: {exc}") from exc
    return check_config(config, lambda name: f"the crawl setting {name} stored in Redis")


def _rank(value: Any) -> float:
    if value is None:
        return _NONE_HIGH
    return float(value)


def _looser(name: str, wanted: Any, stored: Any) -> bool:
    direction = _STRICTER[name]
    if name == "politeness.max_per_ip":  # None is no limit: the loosest
        return _rank(wanted) > _rank(stored)
    return (float(wanted) - float(stored)) * direction < 0


def joined(stored: CrawlConfig, overrides: dict[str, Any], labels: dict[str, str]) -> CrawlConfig:
    """A joining worker's tree: the crawl's stored settings, with the worker's own local ones.

    ``overrides`` maps dotted names to what the worker's command line asked for (None: not
    given); ``labels`` names the flag of each, for messages.
    """
    stored_values = settings_by_name(stored)
    local: dict[str, Any] = {}
    for name, value in overrides.items():
        if value is None:
            continue
        label = labels.get(name, name)
        if name in LOCAL:
            local[name] = value
        elif name in _STRICTER and _looser(name, value, stored_values[name]):
            raise ConfigError(
                f"{label} {value!r} is looser than the crawl's {name} "
                f"{stored_values[name]!r} stored in Redis: a worker cannot loosen politeness"
            )
        elif value != stored_values.get(name):
            raise ConfigError(
                f"{label} {shortened(repr(value), 60)} differs from the crawl's {name} "
                f"{shortened(repr(stored_values.get(name)), 60)}: the crawl fixes it at creation"
            )
    config = apply_overrides(stored, local)
    return check_config(config, lambda name: labels.get(name, name))


def politeness_fields(config: CrawlConfig) -> dict[str, str]:
    """The values the Lua scripts read from the ``politeness`` hash (0 = no per-host limit)."""
    polite = config.politeness
    per_host = config.scope.max_pages_per_host
    return {
        "delay": repr(polite.delay),
        "crawl_delay_cap": repr(polite.crawl_delay_cap),
        "max_backoff": repr(polite.max_backoff),
        "max_retries": str(polite.max_retries),
        "per_host": str(per_host or 0),
        "robots_wait": repr(polite.robots_wait),
    }
