"""Per-site rules: which ``[[site]]`` tables apply to a host, and what they make of it.

Data flow: the TOML config's ``[[site]]`` tables (``config.SiteConfig``, checked here at the
edge by :func:`site_problem`) -> **SiteRules.for_host** -> one resolved :class:`SiteRule` per
host, read by every part that treats sites differently: the frontiers (a host's delay and
in-flight limit: ``frontier/frontier.py``, the Redis frontier's CRAWL_DELAY and ADD), admission
(a host's URL budget), the fetcher (User-Agent, headers, proxy, cookie file, HTTP/2), the
renderer (``render``, ``block``: ``render/choice.py``) and robots.txt matching (the product
token of the site's User-Agent).

Matching. ``match`` is a host glob, compared with the host name as ``urls.host_of`` spells it
(lower case, punycode, no port): ``*`` stands for any run of characters, dots included, and
nothing else is special. So ``*.example.org`` names every subdomain of example.org but not
example.org itself (write a second table for it), and ``*`` names every host.

Most specific first. The tables that match a host are ordered:

1. an exact host name (no ``*``) before any glob;
2. then the glob with more literal characters (``*.shop.example.org`` before
   ``*.example.org`` before ``*``);
3. then the table written first in the file.

Each key takes its value from the first table in that order that sets it, and the crawl's own
setting when none does (as CSS rules cascade): a ``*.example.org`` table with ``delay`` and a
``shop.example.org`` table with only ``headers`` give shop.example.org both. A site rule may be
looser or stricter than the crawl's settings, never than the site's robots.txt: a larger
Crawl-delay still wins over a site's ``delay`` (``politeness.with_crawl_delay``).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gossamer.config import SiteConfig
from gossamer.config_check import MAX_CONCURRENCY, MAX_SECONDS, RULES
from gossamer.errors import ConfigError, shortened
from gossamer.robots.parser import product_token
from gossamer.urls import host_of

if TYPE_CHECKING:
    from gossamer.config import CrawlConfig

__all__ = ["SiteRule", "SiteRules", "settled", "site_problem", "specificity"]

CACHED_HOSTS = 1 << 16  # hosts whose resolved rule is kept; the cache starts over beyond
_MAX_GLOB = 253  # the longest host name DNS allows
_GLOB = re.compile(r"[a-z0-9*_-]+(\.[a-z0-9*_-]+)*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name (RFC 9110 5.6.2)
# Headers the fetcher or another key owns: sent twice, or wrong, if a table set them too.
_OWNED_HEADERS = {
    "host": "it is the URL's",
    "content-length": "the fetcher sets it",
    "transfer-encoding": "the fetcher sets it",
    "connection": "the fetcher sets it",
    "accept-encoding": "the fetcher decodes only what it asks for",
    "user-agent": "use the table's user_agent key",
    "cookie": "use the table's cookies key",
    "proxy-authorization": "a proxy's password is never stored: see proxy",
}
_KEYS = frozenset(field.name for field in dataclasses.fields(SiteConfig))


@dataclass(frozen=True, slots=True)
class SiteRule:
    """What applies to one host: every ``[[site]]`` key resolved, the crawl's value where no
    table sets it."""

    matched: tuple[str, ...]  # the globs of the tables that apply, most specific first
    delay: float  # seconds between two requests (before robots.txt's Crawl-delay)
    max_per_host: int  # requests in flight
    max_pages: int | None  # URLs admitted (None: no limit)
    user_agent: str
    product: str  # the product token of user_agent: what robots.txt rules are matched against
    headers: tuple[tuple[str, str], ...]  # sent besides the fetcher's own
    proxy: str | None  # the site's proxy URL; None: the crawl's own route
    cookies: str | None  # absolute path of the site's Netscape cookie file; None: none
    http2: bool = False  # https over the HTTP/2 transport (``fetch/http2.py``)
    render: bool | str | None = None  # the table's render (True, False, "auto"); None: unset
    block: tuple[str, ...] | None = None  # sub-resource kinds a rendered page may not load


def specificity(pattern: str) -> tuple[bool, int]:
    """The sort key of "most specific first" (larger first): exact host, literal characters."""
    return "*" not in pattern, len(pattern) - pattern.count("*")


def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.lower().split("*")))


class SiteRules:
    """The crawl's ``[[site]]`` tables, resolved per host (``for_host``) and kept per host."""

    def __init__(self, tables: Iterable[SiteConfig], default: SiteRule) -> None:
        ordered = sorted(enumerate(tables), key=lambda item: (*_negated(item[1].match), item[0]))
        self._tables = tuple((_regex(table.match), table) for _, table in ordered)
        self._default = default
        self._hosts: dict[str, SiteRule] = {}
        # Hosts matched by the same tables share one rule, so the cache holds few objects.
        self._combined: dict[tuple[int, ...], SiteRule] = {(): default}

    @classmethod
    def of(cls, config: CrawlConfig) -> SiteRules:
        """The rules of a crawl: its tables over its own politeness, budget and agent."""
        user_agent = config.fetch.user_agent
        default = SiteRule(
            matched=(),
            delay=config.politeness.delay,
            max_per_host=config.politeness.max_per_host,
            max_pages=config.scope.max_pages_per_host,
            user_agent=user_agent,
            product=product_token(user_agent),
            headers=(),
            proxy=None,
            cookies=None,
            http2=config.fetch.http2,
        )
        return cls(config.sites, default)

    @property
    def default(self) -> SiteRule:
        """The rule of a host no table names: the crawl's own settings."""
        return self._default

    def __bool__(self) -> bool:
        return bool(self._tables)

    def for_host(self, host: str) -> SiteRule:
        """The rule of ``host`` (a host name as ``host_of`` gives it)."""
        rule = self._hosts.get(host)
        if rule is None:
            if len(self._hosts) >= CACHED_HOSTS:
                self._hosts.clear()
            rule = self._hosts[host] = self._resolve(host)
        return rule

    def for_url(self, url: str) -> SiteRule:
        """The rule of ``url``'s host: the fetcher's hook (``Fetcher(site_for=...)``)."""
        return self.for_host(host_of(url)) if self._tables else self._default

    def product_for(self, url: str) -> str:
        """The product token robots.txt rules are matched against for ``url``'s site (a page,
        a robots.txt URL or an origin): its User-Agent's, which may be a site's own."""
        return self.for_url(url).product

    def _resolve(self, host: str) -> SiteRule:
        found = tuple(i for i, (regex, _) in enumerate(self._tables) if regex.fullmatch(host))
        rule = self._combined.get(found)
        if rule is None:
            rule = self._combined[found] = self._cascade([self._tables[i][1] for i in found])
        return rule

    def _cascade(self, tables: list[SiteConfig]) -> SiteRule:
        """Each key from the first (most specific) table that sets it, else the default."""

        def first(key: str) -> Any:
            return next(
                (v for t in tables if (v := getattr(t, key)) is not None), getattr(base, key)
            )

        base = self._default
        user_agent: str = first("user_agent")
        return SiteRule(
            matched=tuple(table.match for table in tables),
            delay=first("delay"),
            max_per_host=first("max_per_host"),
            max_pages=first("max_pages"),
            user_agent=user_agent,
            product=product_token(user_agent),
            headers=first("headers"),
            proxy=first("proxy"),
            cookies=first("cookies"),
            http2=first("http2"),
            render=first("render"),
            block=first("block"),
        )


def _negated(pattern: str) -> tuple[bool, int]:
    exact, literal = specificity(pattern)
    return not exact, -literal


# -- the edge: one table checked, and settled --------------------------------------------------


def site_problem(value: Any) -> str | None:
    """Why one ``[[site]]`` table is not allowed, or None (``config_check`` names the table)."""
    table = dataclasses.asdict(value) if isinstance(value, SiteConfig) else value
    if not isinstance(table, dict):
        return "must be a table with a match key"
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        return f"has an unknown key {shortened(str(unknown[0]), 40)!r}"
    match = table.get("match")
    if not isinstance(match, str):
        return "needs a match key: a host glob such as '*.example.org'"
    problem = glob_problem(match)
    if problem is not None:
        return f"match {shortened(match, 60)!r} {problem}"
    try:
        site = SiteConfig.of(table)
    except ConfigError as exc:
        return f"({match}) delay: {exc}"
    except (TypeError, ValueError) as exc:
        return f"({match}) {exc}"
    for key, check in _CHECKS.items():
        value = getattr(site, key)
        problem = None if value is None else check(value)
        if problem is not None:
            return f"({match}) {key} {problem}"
    return None


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is no host glob (``[[site]]``'s match, ``--render``), or None."""
    lowered = pattern.lower()
    if not lowered.isascii():
        return "is not ASCII: write an international name as punycode (xn--...)"
    if not lowered or len(lowered) > _MAX_GLOB or not _GLOB.fullmatch(lowered):
        return (
            "is not a host glob: letters, digits, '-', '.' and '*' only, no empty label,"
            " no port or path, e.g. '*.example.org'"
        )
    return None


def _delay(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return "must be a number of seconds or a duration such as '0.5s'"
    if value < 0:
        return "must not be negative"
    return "must be at most 10 years" if value > MAX_SECONDS else None


def _whole(low: int, high: int | None = None) -> Any:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        if value < low:
            return f"must be at least {low}"
        return f"must be at most {high}" if high is not None and value > high else None

    return check


def _headers(value: Any) -> str | None:
    if not isinstance(value, tuple):
        return "must be a table of header names and string values"
    for pair in value:
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
        ):
            return "must be a table of header names and string values"
        name, text = pair
        if not _TOKEN.fullmatch(name):
            return f"has a bad header name {shortened(name, 40)!r}"
        owner = _OWNED_HEADERS.get(name.lower())
        if owner is not None:
            return f"may not set {name} ({owner})"
        if not text.isascii() or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            return f"{name}: the value must be plain ASCII without control characters"
    return None


def _render(value: Any) -> str | None:
    if isinstance(value, bool) or value == "auto":
        return None
    return 'must be true, false or "auto"'


_CHECKS = {
    "delay": _delay,
    "max_per_host": _whole(1, MAX_CONCURRENCY),
    "max_pages": _whole(1),
    "user_agent": RULES["fetch.user_agent"],
    "headers": _headers,
    # the crawl's own rules for these values (an http:// proxy or none, no password; a
    # Netscape cookie file), so a site's are checked exactly as --proxy and --cookies are
    "proxy": RULES["fetch.proxy"],
    "cookies": RULES["fetch.cookies_file"],
    "http2": RULES["fetch.http2"],
    "render": _render,
    "block": RULES["render.block"],
}


def settled(tables: Iterable[SiteConfig | dict[str, Any]]) -> tuple[SiteConfig, ...]:
    """Checked tables as ``SiteConfig`` values, cookie files made absolute (every process of
    a crawl, and a resume from elsewhere, finds them)."""
    found = []
    for table in tables:
        site = SiteConfig.of(table)
        if site.cookies is not None and not Path(site.cookies).is_absolute():
            site = dataclasses.replace(site, cookies=str(Path(site.cookies).absolute()))
        found.append(site)
    return tuple(found)
