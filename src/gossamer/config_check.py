"""The allowed values of every crawl setting, checked once at the edge.

Data flow: TOML + flags (``config``) or a saved ``crawl.json`` -> **check** -> the crawl.
Whatever the source, a setting reaches the engine only after :func:`check_config` has
accepted it, so the engine can trust the tree: no NaN time limit, no zero page target, no
CR/LF in the User-Agent header, no concurrency beyond the open files the system allows.
A rejection is one :class:`~gossamer.errors.ConfigError` naming where the value came from.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import resource
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gossamer.errors import ConfigError, shortened
from gossamer.robots.parser import product_token

if TYPE_CHECKING:
    from gossamer.config import CrawlConfig

__all__ = [
    "MAX_CONCURRENCY",
    "MAX_SECONDS",
    "MAX_WORKERS",
    "RULES",
    "check_config",
    "concurrency_room",
    "fit_open_files",
    "settings_by_name",
]

MAX_SECONDS = 10 * 365 * 86_400.0  # ten years: beyond this a timer overflows some waits
MAX_CONCURRENCY = 10_000  # requests in flight per worker process
MAX_WORKERS = 64
# Open files a crawler process needs besides its connections: WARC, CDXJ, SQLite and its
# journal files, the folder lock, standard streams, the event loop, resolver threads.
OPEN_FILE_RESERVE = 64
_MAX_INT = 2**63 - 1  # what SQLite can store
_MAX_USER_AGENT = 512
_MEDIA_TYPE = re.compile(r"[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+", re.IGNORECASE)

Check = Callable[[Any], str | None]  # a value -> why it is not allowed, or None


@dataclass(frozen=True, slots=True)
class _Number:
    """A whole number or a number of seconds, with its allowed range."""

    seconds: bool  # float seconds; otherwise an integer count
    low: float
    above: bool = False  # ``low`` itself is not allowed
    optional: bool = False  # None ("no limit") is allowed
    high: float | None = None

    def __call__(self, value: Any) -> str | None:
        if value is None:
            return None if self.optional else "must be given"
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "must be a number of seconds" if self.seconds else "must be an integer"
        if not self.seconds and not isinstance(value, int):
            return "must be an integer"
        if not math.isfinite(value):
            return "must be a finite number"
        unit = " seconds" if self.seconds else ""
        if self.above and value <= self.low:
            return f"must be more than {self.low:g}{unit}"
        if value < self.low:
            return (
                "must not be negative" if self.low == 0 else f"must be at least {self.low:g}{unit}"
            )
        high = self.high if self.high is not None else MAX_SECONDS if self.seconds else _MAX_INT
        if value > high:
            return (
                "must be at most 10 years" if high == MAX_SECONDS else f"must be at most {high:g}"
            )
        return None


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _user_agent(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value):
        return "must not contain control characters (CR, LF, tab, NUL, escape codes)"
    if not value.isascii():
        return "must be plain ASCII (it is sent as an HTTP header)"
    if len(value) > _MAX_USER_AGENT:
        return f"must be at most {_MAX_USER_AGENT} characters"
    if not product_token(value):
        return "must start with a product name such as 'mybot/1.0' (robots.txt matches it)"
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(item, str) for item in value)


def _resolve(value: Any) -> str | None:
    # The fetch package (aiohttp) is imported only when a config names --resolve entries.
    from gossamer.fetch.resolver import parse_resolve  # noqa: PLC0415

    if not _strings(value):
        return "must be a list of HOST:IP strings"
    for entry in value:
        try:
            parse_resolve(entry)
        except ConfigError:
            return f"entry {shortened(entry, 80)!r} is not HOST:IP, HOST:PORT:IP or *.DOMAIN:IP"
    return None


def _executable(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or "\x00" in value:
        return "must be the path of a program"
    if not os.access(value, os.X_OK) or Path(value).is_dir():
        return "names no program this user may run"
    return None


def _globs(value: Any) -> str | None:
    from gossamer.sites import glob_problem  # noqa: PLC0415 (the one rule for a host glob)

    if not _strings(value):
        return "must be a list of host globs such as '*.example.org'"
    for glob in value:
        problem = glob_problem(glob)
        if problem is not None:
            return f"{shortened(glob, 60)!r} {problem}"
    return None


def _kinds(value: Any) -> str | None:
    from gossamer.render.choice import kinds_problem  # noqa: PLC0415

    return kinds_problem(value)


def _media_types(value: Any) -> str | None:
    if not _strings(value) or not value or not all(_MEDIA_TYPE.fullmatch(t) for t in value):
        return "must be a non-empty list of media types such as 'text/html'"
    return None


def _readable_file(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or "\x00" in value:
        return "must be the path of a PEM file"
    path = Path(value)
    try:
        with path.open("rb") as stream:
            stream.read(1)
    except FileNotFoundError:
        return "names no file"
    except IsADirectoryError:
        return "is a folder, not a PEM file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    return None


def _proxy(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        return "must be a proxy URL such as http://proxy.example:3128, or none"
    from gossamer.fetch.proxy import proxy_problem  # noqa: PLC0415 (the fetch package: aiohttp)

    return proxy_problem(value)


def _cookie_file(value: Any) -> str | None:
    if value is None:
        return None
    problem = _readable_file(value)
    if problem is not None:
        return problem.replace("a PEM file", "a cookie file")
    from gossamer.fetch.cookies import cookie_file_problem  # noqa: PLC0415

    return cookie_file_problem(value)


def _table_of(rule: Any) -> Any:
    """An extraction rule as its table (a rule may come as one already, from TOML or JSON)."""
    if dataclasses.is_dataclass(rule) and not isinstance(rule, type):
        return dataclasses.asdict(rule)
    return rule


_RULE_KEYS = frozenset({"field", "css", "regex", "attr", "url", "all"})


def _extract_rule(rule: Any) -> str | None:
    """Why one ``[[extract]]`` table is not a rule, or None."""
    table = _table_of(rule)
    if not isinstance(table, dict):
        return "must be a table with field and css or regex"
    unknown = sorted(set(table) - _RULE_KEYS)
    if unknown:
        return f"has an unknown key {shortened(str(unknown[0]), 40)!r}"
    name, css, regex = table.get("field"), table.get("css", ""), table.get("regex", "")
    if not isinstance(name, str) or not name.strip():
        return "needs a field name"
    texts = (css, regex, table.get("attr", ""), table.get("url", ""))
    if not all(isinstance(text, str) for text in texts) or not isinstance(
        table.get("all", False), bool
    ):
        return f"{name!r}: css, regex, attr and url are strings, all is true or false"
    if bool(css) == bool(regex):
        return f"{name!r} needs one of css or regex"
    for key in ("regex", "url"):
        try:
            re.compile(table.get(key, ""))
        except re.error as exc:
            return f"{name!r}: {key} is not a regular expression ({exc})"
    if css:
        from selectolax.lexbor import LexborHTMLParser  # noqa: PLC0415

        try:
            LexborHTMLParser("<p></p>").css(css)
        except Exception as exc:  # selectolax raises a bare Exception for a bad selector
            return f"{name!r}: css {shortened(css, 60)!r} is not a selector ({exc})"
    return None


def _extract_rules(value: Any) -> str | None:
    if not isinstance(value, tuple):
        return "must be a list of [[extract]] tables"
    for number, rule in enumerate(value, 1):
        problem = _extract_rule(rule)
        if problem is not None:
            return f"table {number} {problem}"
    return None


def _plugins(value: Any) -> str | None:
    """Each entry: a ``.py`` file that exists, or a ``gossamer.plugins`` entry point's name."""
    if not _strings(value):
        return "must be a list of plugin files (.py) or entry point names"
    from gossamer.plugins.loading import plugin_problem  # noqa: PLC0415

    for entry in value:
        problem = plugin_problem(entry)
        if problem is not None:
            return f"entry {shortened(entry, 80)!r} {problem}"
    return None


_DOMAIN = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_-]{1,63}")
_LANGUAGE = re.compile(r"[a-z]{2,3}")


def _scope_mode(value: Any) -> str | None:
    from gossamer.crawling.scope import MODES  # noqa: PLC0415 (scope imports the config's)

    return None if value in MODES else f"must be one of {', '.join(MODES)}"


def _domains(value: Any) -> str | None:
    """Host names in lower case, without scheme, port or path: ``example.org``."""
    if not _strings(value):
        return "must be a list of domain names"
    for entry in value:
        if not _DOMAIN.fullmatch(entry) or len(entry) > 253:
            return f"entry {shortened(entry, 80)!r} is not a domain name such as example.org"
    return None


def _regexes(value: Any) -> str | None:
    if not _strings(value):
        return "must be a list of regular expressions"
    for entry in value:
        try:
            re.compile(entry)
        except re.error as exc:
            return f"entry {shortened(entry, 80)!r} is not a regular expression ({exc})"
    return None


def _surts(value: Any) -> str | None:
    if not _strings(value):
        return "must be a list of SURT prefixes such as +http://(org,example,)/"
    from gossamer.crawling.scope import surt_rule  # noqa: PLC0415

    for entry in value:
        try:
            surt_rule(entry)
        except ValueError as exc:
            return f"entry {shortened(entry, 80)!r} {exc}"
    return None


def _languages(value: Any) -> str | None:
    if not _strings(value) or not all(_LANGUAGE.fullmatch(code) for code in value):
        return "must be a list of ISO 639-1 language codes such as en, de"
    from gossamer.extras import installed  # noqa: PLC0415

    if value and not installed("search"):
        # The crawl tells languages apart with the indexer's model (py3langid).
        return "needs the search extra: pip install 'gossamer[search]'"
    return None


def _site_tables(value: Any) -> str | None:
    """Each ``[[site]]`` table checked by the per-site rules' own module (``sites``)."""
    if not isinstance(value, tuple):
        return "must be a list of [[site]] tables"
    from gossamer.sites import site_problem  # noqa: PLC0415 (sites imports this module)

    for number, table in enumerate(value, 1):
        problem = site_problem(table)
        if problem is not None:
            return f"[[site]] table {number} {problem}"
    return None


def _whole(low: int, *, optional: bool = False, high: int | None = None) -> _Number:
    return _Number(seconds=False, low=low, optional=optional, high=high)


def _seconds(*, above_zero: bool = False, optional: bool = False, low: float = 0.0) -> _Number:
    return _Number(seconds=True, low=low, above=above_zero, optional=optional)


RULES: dict[str, Check] = {
    "max_pages": _whole(1, optional=True),
    "time_limit": _seconds(above_zero=True, optional=True),
    "concurrency": _whole(1, high=MAX_CONCURRENCY),
    "workers": _whole(1, high=MAX_WORKERS),
    "resolve": _resolve,
    "warc_max_bytes": _whole(1),
    "report_interval": _seconds(low=0.1),  # shorter would rewrite the reports in a loop
    "progress": _flag,
    "politeness.delay": _seconds(),
    "politeness.max_per_host": _whole(1, high=MAX_CONCURRENCY),
    "politeness.crawl_delay_cap": _seconds(),
    "politeness.robots_ttl": _seconds(above_zero=True),
    "politeness.robots_retry_delay": _seconds(),
    "politeness.robots_retries": _whole(0),
    "politeness.robots_wait": _seconds(),
    "politeness.max_per_ip": _whole(1, optional=True, high=MAX_CONCURRENCY),
    "politeness.max_retries": _whole(0),
    "politeness.max_backoff": _seconds(),
    "politeness.respect_nofollow": _flag,
    "recrawl.initial_interval": _seconds(above_zero=True),
    "recrawl.min_interval": _seconds(above_zero=True),
    "recrawl.max_interval": _seconds(above_zero=True),
    "recrawl.seed_interval": _seconds(above_zero=True, optional=True),
    "fetch.user_agent": _user_agent,
    "fetch.connect_timeout": _seconds(above_zero=True),
    "fetch.read_timeout": _seconds(above_zero=True),
    "fetch.total_timeout": _seconds(above_zero=True),
    "fetch.max_body": _whole(1),
    "fetch.max_decoded": _whole(1),
    "fetch.max_redirects": _whole(0),
    "fetch.keep_types": _media_types,
    "fetch.allow_private": _flag,
    "fetch.ca_file": _readable_file,
    "fetch.proxy": _proxy,
    "fetch.cookies": _flag,
    "fetch.cookies_file": _cookie_file,
    "fetch.warc_cookies": _flag,
    "fetch.http2": _flag,
    "render.hosts": _globs,
    "render.auto": _globs,
    "render.pool": _whole(1, high=16),
    "render.page_timeout": _seconds(above_zero=True),
    "render.max_requests": _whole(0),
    "render.block": _kinds,
    "render.memory_mb": _whole(64),
    "render.browser": _executable,
    "render.screenshot": _flag,
    "scope.max_depth": _whole(0, optional=True),
    "scope.max_url_length": _whole(1),
    "scope.max_pages_per_host": _whole(1, optional=True),
    "scope.max_path_depth": _whole(1),
    "scope.max_path_repeats": _whole(1),
    "scope.max_family": _whole(1, optional=True),
    "scope.strip_session_ids": _flag,
    "scope.sitemaps": _flag,
    "scope.extract": _extract_rules,
    "scope.plugins": _plugins,
    "sites": _site_tables,
    "scope.mode": _scope_mode,
    "scope.allow_domains": _domains,
    "scope.include": _regexes,
    "scope.exclude": _regexes,
    "scope.surts": _surts,
    "scope.public_suffixes": _domains,
    "scope.seed_area": _surts,
    "scope.languages": _languages,
    "scope.skip_other_languages": _flag,
}


def settings_by_name(config: CrawlConfig) -> dict[str, Any]:
    """Every setting of the tree by dotted name, but ``seeds`` and ``out`` (the command line
    names those)."""
    values: dict[str, Any] = {}
    for item in dataclasses.fields(config):
        value = getattr(config, item.name)
        if dataclasses.is_dataclass(value):
            for sub in dataclasses.fields(value):
                values[f"{item.name}.{sub.name}"] = getattr(value, sub.name)
        elif item.name not in {"seeds", "out"}:
            values[item.name] = value
    # Extraction rules as plain tables, so the settings stay JSON (Redis, crawl.json).
    # (Anything else is left as it came, for its rule to refuse: ``site = 1`` in a TOML file.)
    for name in ("scope.extract", "sites"):
        if isinstance(values[name], tuple):
            values[name] = tuple(_table_of(table) for table in values[name])
    return values


def _shown(value: Any) -> str:
    text = repr(value)
    return shortened(text, 80)


def check_config(config: CrawlConfig, origin: Callable[[str], str]) -> CrawlConfig:
    """``config`` if every setting is allowed (``ca_file`` made absolute); else ConfigError.

    ``origin`` turns a dotted name into where its value came from, for the message:
    ``"--max-depth"``, ``"config c.toml: scope.max_depth"``.
    """
    for name, value in settings_by_name(config).items():
        rule = RULES.get(name)
        problem = "is not a setting Gossamer knows" if rule is None else rule(value)
        if problem is not None:
            # A list's problem names the entry at fault; a proxy URL may hold a password.
            unshown = isinstance(value, tuple) or name == "fetch.proxy"
            got = "" if unshown else f" (got {_shown(value)})"
            raise ConfigError(f"{origin(name)} {problem}{got}")
    ca_file = config.fetch.ca_file
    if ca_file is not None and not Path(ca_file).is_absolute():
        fetch = dataclasses.replace(config.fetch, ca_file=str(Path(ca_file).absolute()))
        config = dataclasses.replace(config, fetch=fetch)
    config = _settled_cookies(config, origin)
    config = _settled_scope(config)
    recrawl = config.recrawl
    if not recrawl.min_interval <= recrawl.initial_interval <= recrawl.max_interval:
        raise ConfigError(
            f"{origin('recrawl.initial_interval')} must lie between recrawl.min_interval and"
            " recrawl.max_interval"
        )
    from gossamer.sites import settled  # noqa: PLC0415 (sites imports this module)

    sites = settled(config.sites)
    return config if sites == config.sites else dataclasses.replace(config, sites=sites)


def _settled_cookies(config: CrawlConfig, origin: Callable[[str], str]) -> CrawlConfig:
    """The cookie file made absolute (every process of a crawl reads it); refused with
    cookies off, where it would be silently unused (a ``[[site]]`` table's too)."""
    cookies_file = config.fetch.cookies_file
    tables = [_table_of(table) for table in config.sites]  # TOML's tables are still dicts
    if not config.fetch.cookies and any(table.get("cookies") for table in tables):
        raise ConfigError(
            f"{origin('sites')}: a table's cookies file needs cookies, which"
            f" {origin('fetch.cookies')} turns off"
        )
    if cookies_file is None:
        return config
    if not config.fetch.cookies:
        raise ConfigError(
            f"{origin('fetch.cookies_file')} needs cookies, which {origin('fetch.cookies')}"
            " turns off"
        )
    if Path(cookies_file).is_absolute():
        return config
    fetch = dataclasses.replace(config.fetch, cookies_file=str(Path(cookies_file).absolute()))
    return dataclasses.replace(config, fetch=fetch)


def _settled_scope(config: CrawlConfig) -> CrawlConfig:
    """Tables made rules, and plugin files absolute (every process of a crawl finds them)."""
    from gossamer.config import ExtractRule  # noqa: PLC0415 (config imports this module)

    scope = config.scope
    rules = tuple(ExtractRule.of(rule) for rule in scope.extract)
    plugins = tuple(
        str(Path(entry).absolute()) if entry.endswith(".py") else entry for entry in scope.plugins
    )
    if rules == scope.extract and plugins == scope.plugins:
        return config
    scope = dataclasses.replace(scope, extract=rules, plugins=plugins)
    return dataclasses.replace(config, scope=scope)


def concurrency_room() -> int:
    """Requests in flight one process can hold: the hard open-file limit less a reserve."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = MAX_CONCURRENCY if hard == resource.RLIM_INFINITY else hard - OPEN_FILE_RESERVE
    return min(room, MAX_CONCURRENCY)


def check_room(concurrency: int | None, origin: str) -> None:
    """Refuse a crawl the open-file limit cannot hold, or an explicit concurrency above it.

    A concurrency that was not asked for (the default, a resumed crawl's) is lowered to fit
    when the crawl starts instead: see :func:`fit_open_files`.
    """
    room = concurrency_room()
    if room < 1:
        raise ConfigError(
            f"the open-file limit (ulimit -n) is too low for a crawl: it needs more than "
            f"{OPEN_FILE_RESERVE} open files"
        )
    if concurrency is not None and concurrency > room:
        raise ConfigError(
            f"{origin} {concurrency} needs more open files than this system allows: at most "
            f"{room} requests in flight (raise the limit with 'ulimit -n')"
        )


def fit_open_files(config: CrawlConfig) -> tuple[CrawlConfig, str | None]:
    """Raise the soft open-file limit for the crawl's connections, or lower its concurrency.

    Returns the tree to run and, when the concurrency had to be lowered, a one-line note.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = config.concurrency + OPEN_FILE_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass  # keep the soft limit we have and fit the concurrency into it
    room = config.concurrency if soft == resource.RLIM_INFINITY else soft - OPEN_FILE_RESERVE
    if room >= config.concurrency:
        return config, None
    if room < 1:
        raise ConfigError(
            f"the open-file limit (ulimit -n {soft}) is too low for a crawl: it needs more than "
            f"{OPEN_FILE_RESERVE} open files"
        )
    note = (
        f"concurrency lowered from {config.concurrency} to {room}: the open-file limit is"
        f" {soft} (raise it with 'ulimit -n')"
    )
    return dataclasses.replace(config, concurrency=room), note
