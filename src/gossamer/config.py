"""The one typed configuration tree, loaded once from TOML, then flags (flags win).

Constructors elsewhere take the few specific values they need from this tree, never the tree
itself and never a string key. Validation happens at the edge: types here, allowed values in
``config_check``; inside, values are trusted.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gossamer import __version__
from gossamer.config_check import MAX_SECONDS, MAX_WORKERS, check_config
from gossamer.errors import ConfigError, shortened

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
    # The proxy of every request, "http://HOST:PORT" (`--proxy`); "none": no proxy at all;
    # absent: the environment's http_proxy, https_proxy and no_proxy, as curl reads them.
    # Never a password: it is read from GOSSAMER_PROXY_PASSWORD, so it is never stored.
    proxy: str | None = None
    cookies: bool = True  # keep each host's cookies in a jar of its own (`--no-cookies`: off)
    # A Netscape cookie file (curl -c, wget --save-cookies) the jars start from (`--cookies`)
    cookies_file: str | None = None
    warc_cookies: bool = False  # write Cookie headers into WARC request records (`--warc-cookies`)
    # https over HTTP/2 where the server offers it by ALPN (`--http2`; the http2 extra)
    http2: bool = False


@dataclass(frozen=True, slots=True)
class RenderConfig:
    """``[render]``: pages rendered in Chromium, whose requests go through the fetcher."""

    hosts: tuple[str, ...] = ()  # host globs whose pages are rendered (`--render`)
    auto: tuple[str, ...] = ()  # host globs whose script-built pages are (`--render-auto`)
    pool: int = 2  # pages rendered at once, per crawler process (one browser each)
    page_timeout: float = 20.0  # seconds a page may take to settle; then kept as it is
    max_requests: int = 50  # sub-resources one page may fetch; past it they are refused
    block: tuple[str, ...] = ("image", "media", "font")  # sub-resource kinds not loaded
    memory_mb: int = 1024  # each browser's JavaScript heap
    browser: str | None = None  # the Chromium executable; None: chromium on the PATH
    screenshot: bool = False  # archive a PNG of each rendered page's viewport (urn:view:)


@dataclass(frozen=True, slots=True)
class ExtractRule:
    """One ``[[extract]]`` table: a named field pulled from every page whose URL matches."""

    # the item's key for what the rule finds
    field: str
    css: str = ""  # a CSS selector: the text of the first element it matches
    regex: str = ""  # or a regular expression over the page's HTML: its group 1, else the match
    attr: str = ""  # with css: this attribute's value instead of the element's text
    url: str = ""  # a regular expression a page's URL must contain; "" = every HTML page
    all: bool = False  # every match, as a list, instead of the first

    @classmethod
    def of(cls, value: ExtractRule | dict[str, Any]) -> ExtractRule:
        """A rule from its TOML or JSON table (unknown keys: TypeError, for the checker)."""
        return value if isinstance(value, ExtractRule) else cls(**value)


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """One ``[[site]]`` table: settings over the crawl's own for the hosts ``match`` names.

    A key left out keeps the value of a less specific table, else the crawl's; which tables
    apply to a host, and in what order, is ``gossamer.sites``' rule."""

    # a host glob: "example.org" (that host), "*.example.org" (its subdomains), "*" (any)
    match: str
    delay: float | None = None  # seconds between two requests to one matching host
    max_per_host: int | None = None  # requests in flight per matching host
    max_pages: int | None = None  # URLs admitted per matching host (its max_pages_per_host)
    # the User-Agent sent to the site; robots.txt rules are matched against its first word
    user_agent: str | None = None
    headers: tuple[tuple[str, str], ...] | None = None  # extra request headers, {Name = "v"}
    # the http:// proxy of the site's requests ("http://[USER@]HOST:PORT", the password in
    # GOSSAMER_PROXY_PASSWORD), over --proxy and the environment; "none": direct
    proxy: str | None = None
    cookies: str | None = None  # a Netscape cookie file (curl -c, wget --save-cookies)
    # render the site's pages in Chromium: true, false, or "auto" (only pages whose HTML
    # looks script-built); over --render and --render-auto (gossamer.render)
    http2: bool | None = None  # https over HTTP/2 where the site offers it (over [fetch] http2)
    render: bool | str | None = None
    # kinds of sub-resource a rendered page may not load: "image", "media", "font", ...
    # (Playwright's resource types); over [render] block
    block: tuple[str, ...] | None = None

    @classmethod
    def of(cls, value: SiteConfig | dict[str, Any]) -> SiteConfig:
        """A table from TOML or JSON (unknown keys: TypeError; a bad duration: ConfigError),
        its durations in seconds and its headers as (name, value) pairs."""
        if isinstance(value, SiteConfig):
            return value
        table = dict(value)
        delay = table.get("delay")
        if isinstance(delay, str):
            table["delay"] = parse_duration(delay)
        elif isinstance(delay, int) and not isinstance(delay, bool):
            table["delay"] = float(delay)
        if isinstance(table.get("block"), list):
            table["block"] = tuple(table["block"])
        headers = table.get("headers")
        if isinstance(headers, dict):
            table["headers"] = tuple(headers.items())
        elif isinstance(headers, list | tuple):
            table["headers"] = tuple(
                tuple(pair) if isinstance(pair, list | tuple) else pair for pair in headers
            )
        return cls(**table)


@dataclass(frozen=True, slots=True)
class ScopeConfig:
    max_depth: int | None = None
    max_url_length: int = 2_048
    # URLs admitted per origin: the last stop for traps no pattern catches (endless calendars).
    max_pages_per_host: int | None = 10_000
    max_path_depth: int = 32  # path segments; deeper URLs are refused as traps
    max_path_repeats: int = 3  # times one path segment (or query key) may occur
    # Link hops a URL family (numbers and dates masked) may feed itself, ever deeper, before its
    # members are refused as trap_family: stops calendars; None turns the rule off.
    max_family: int | None = 100
    strip_session_ids: bool = True  # drop jsessionid, PHPSESSID, sid=... before dedup
    sitemaps: bool = True  # robots.txt Sitemap lines (or /sitemap.xml) as URL sources
    # What a crawl takes from the pages besides their links (issue 33): ``[[extract]]`` tables
    # and plugins (files or entry points) whose items go to DIR/items.jsonl; plugins may also
    # drop links or admit more URLs.
    extract: tuple[ExtractRule, ...] = ()
    plugins: tuple[str, ...] = ()
    # where links may lead (`--scope`): "seeds" (the seeds alone, no link followed), "host"
    # (the seeds' hosts), "domain" (their registrable domains), "prefix" (the seeds' URLs up to
    # the last /) or "any": the default, as a crawl from a seed list is meant to cross sites
    mode: str = "any"
    # also these domains and their subdomains (`--allow-domain`); with mode "any": only them
    allow_domains: tuple[str, ...] = ()
    # regular expressions; when given, a URL (canonical form) must match one (`--include`)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # regular expressions; a URL one matches is refused (`--exclude`)
    # SURT-prefix rules as Heritrix writes them: "+http://(org,example,)/" allows (like
    # --allow-domain), "-http://(org,example,)/private/" refuses
    surts: tuple[str, ...] = ()
    # suffixes treated as public beside the Public Suffix List's, for mode "domain"
    public_suffixes: tuple[str, ...] = ()
    # the SURT prefixes the seeds gave modes "host", "domain" and "prefix" when the crawl
    # started: filled by Gossamer and kept, so a resumed crawl or a joining worker judges alike
    seed_area: tuple[str, ...] = ()
    # follow the links of pages in these languages only (`--languages en,de`; ISO 639-1 codes,
    # the index's detection; needs the search extra); the others are stored and counted
    languages: tuple[str, ...] = ()
    # with languages: pages in other languages are not stored either (`--skip-other-languages`)
    skip_other_languages: bool = False


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count): the
    default number of crawler processes."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


@dataclass(frozen=True, slots=True)
class RecrawlConfig:
    # How long after a fetch a page is due again when nothing is known of how it changes
    initial_interval: float = 86_400.0
    min_interval: float = 3_600.0  # the interval of a page that keeps changing never falls below
    max_interval: float = 30 * 86_400.0  # nor rises above, for a page that never changes
    # A seed's interval (seeds are the crawl's hubs: asked again sooner); none: as any page
    seed_interval: float | None = None


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    seeds: Path
    out: Path
    max_pages: int | None = None
    time_limit: float | None = None  # seconds
    concurrency: int = 64  # requests in flight, per worker process
    # crawler processes, hosts split between them by a hash: one per usable core by default
    workers: int = field(default_factory=usable_cores)
    resolve: tuple[str, ...] = ()  # "HOST:IP", "HOST:PORT:IP", "*.example:IP"
    warc_max_bytes: int = 1_000_000_000
    report_interval: float = 30.0
    progress: bool = True
    politeness: PolitenessConfig = field(default_factory=PolitenessConfig)
    fetch: FetchConfig = field(default_factory=FetchConfig)
    scope: ScopeConfig = field(default_factory=ScopeConfig)
    recrawl: RecrawlConfig = field(default_factory=RecrawlConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    # ``[[site]]`` tables: per-site politeness, budget and request settings (gossamer.sites)
    sites: tuple[SiteConfig, ...] = ()


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration(text: str) -> float:
    """``"90"``, ``"90s"``, ``"15m"``, ``"2h"`` -> seconds."""
    match = _DURATION.match(text)
    if match is None:
        raise ConfigError(f"invalid duration {shortened(text, 40)!r} (use e.g. 90s, 15m, 2h)")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not math.isfinite(seconds) or seconds > MAX_SECONDS:
        raise ConfigError(f"duration {shortened(text, 40)!r} is too long (at most 10 years)")
    return seconds


_SECTIONS: dict[str, type[Any]] = {
    "politeness": PolitenessConfig,
    "fetch": FetchConfig,
    "scope": ScopeConfig,
    "recrawl": RecrawlConfig,
    "render": RenderConfig,
}


def _field_types() -> dict[str, str]:
    """Dotted setting name -> the annotation of its field (a string: annotations are lazy)."""
    types = {f.name: str(f.type) for f in dataclasses.fields(CrawlConfig)}
    for section, kind in _SECTIONS.items():
        del types[section]
        types.update({f"{section}.{f.name}": str(f.type) for f in dataclasses.fields(kind)})
    return types


_FIELD_TYPES = _field_types()
_TOP_LEVEL_SCOPE = {"extract": "scope.extract", "plugins": "scope.plugins", "site": "sites"}


@dataclass(frozen=True, slots=True)
class Requested:
    """The settings one command line asks for: the TOML file's, then the flags' over them."""

    values: dict[str, Any]  # dotted name -> value
    labels: dict[str, str]  # dotted name -> where it was given: "--delay", "config c.toml: ..."


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except IsADirectoryError as exc:
        raise ConfigError(f"config file {path} is a folder") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from exc


def _convert(value: Any, annotation: str, label: str) -> Any:
    """A TOML value in its field's type where that is unambiguous; ranges are checked later."""
    if "tuple" in annotation and isinstance(value, list):
        return tuple(value)
    if "float" in annotation:
        if isinstance(value, str):
            try:
                return parse_duration(value)
            except ConfigError as exc:
                raise ConfigError(f"{label}: {exc}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    return value


def _table(value: Any, label: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        shown = shortened(repr(value), 60)
        raise ConfigError(f"{label} must be a table of settings (got {shown})")
    return value


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a TOML file by dotted name (``politeness.delay``).

    Top-level keys and the ``[crawl]`` table hold the crawl's own settings; ``[politeness]``,
    ``[fetch]`` and ``[scope]`` their sections. ``seeds`` and ``out`` are ignored: the
    command line names those.
    """
    where = f"config {path}:"
    data = _read_toml(path)
    crawl = _table(data.get("crawl", {}), f"{where} [crawl]")
    entries = [(k, v) for k, v in data.items() if k not in _SECTIONS and k != "crawl"]
    entries += list(crawl.items())
    # ``[[extract]]`` tables and ``plugins`` are written at the top level (issue 33's
    # spelling); they live in the scope section, which every engine's admission reads.
    # ``[[site]]`` tables fill ``sites``.
    entries = [(_TOP_LEVEL_SCOPE.get(key, key), value) for key, value in entries]
    for section in _SECTIONS:
        if section in data:
            table = _table(data[section], f"{where} [{section}]")
            entries += [(f"{section}.{key}", value) for key, value in table.items()]
    values: dict[str, Any] = {}
    for key, value in entries:
        name = key.replace("-", "_")
        if name in {"seeds", "out"}:
            continue
        if name not in _FIELD_TYPES:
            raise ConfigError(f"{where} unknown key {shortened(key, 60)!r}")
        values[name] = _convert(value, _FIELD_TYPES[name], f"{where} {name}")
    return values


def requested(
    config_file: Path | None, overrides: dict[str, Any], flags: dict[str, str] | None = None
) -> Requested:
    """What a command line asks for; ``overrides`` maps dotted names to flag values (None =
    flag not given) and ``flags`` names the flag of each, for messages."""
    values = read_config_file(config_file) if config_file is not None else {}
    labels = {name: f"config {config_file}: {name}" for name in values}
    for name, value in overrides.items():
        if value is not None:
            values[name] = value
            labels[name] = (flags or {}).get(name, name)
    return Requested(values, labels)


def settle(base: CrawlConfig, wanted: Requested, base_label: str = "") -> CrawlConfig:
    """``wanted`` applied over ``base``, then checked; ``base_label`` names where the rest of
    the values came from (a saved ``crawl.json``), for messages."""
    config = apply_overrides(base, wanted.values)
    return check_config(config, lambda name: wanted.labels.get(name, base_label + name))


def load_config(
    seeds: Path,
    out: Path,
    config_file: Path | None,
    overrides: dict[str, Any],
    flags: dict[str, str] | None = None,
) -> CrawlConfig:
    """Build the tree: defaults, then the TOML file, then ``overrides`` from flags; checked.

    ``overrides`` maps dotted names (``"max_pages"``, ``"politeness.delay"``) to values that
    the CLI has already parsed; ``None`` values mean "flag not given".
    """
    return settle(CrawlConfig(seeds=seeds, out=out), requested(config_file, overrides, flags))


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
            # (A crawl saved before a section existed has its defaults.)
            values[name] = kind(
                **{k: tuple(v) if isinstance(v, list) else v for k, v in data.get(name, {}).items()}
            )
        scope = values["scope"]
        rules = tuple(ExtractRule.of(rule) for rule in scope.extract)
        values["scope"] = dataclasses.replace(scope, extract=rules)
        values["sites"] = tuple(SiteConfig.of(table) for table in values.get("sites", ()))
        return CrawlConfig(seeds=Path(data["seeds"]), out=out, **values)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"the saved configuration in {out} is unreadable: {exc}") from exc
