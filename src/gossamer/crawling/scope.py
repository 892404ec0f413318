"""Crawl scope: which URLs this crawl means to fetch at all, and which rule refuses the others.

Data flow: the ``[scope]`` settings (``--scope``, ``--allow-domain``, ``--include``,
``--exclude``, SURT-prefix rules, and the SURT prefixes the seeds gave when the crawl started)
-> **Scope** -> admission, which asks :meth:`Scope.refusal` of every URL found (links, seeds,
redirect targets, sitemap entries, plugins' URLs) in every way of running a crawl, so each
rule is written here once.

Areas are SURT prefixes, as Heritrix writes them: ``http://www.example.org/a/`` is
``http://(org,example,www,)/a/``; ``http://(org,example,`` (no closing parenthesis) holds
example.org and every subdomain, ``http://(org,example,)/`` example.org alone. As in Heritrix,
https is compared as http, so a rule written for one scheme holds for both.

The seeds' area is worked out once, when the crawl starts (:func:`seed_surts`), and kept in
the settings (``crawl.json``, a shared crawl's settings in Redis), so a resumed crawl and a
worker that joins without the seeds file judge by the same area. Registrable domains come from
the Public Suffix List packaged by ``publicsuffixlist`` (no download at run time), plus the
suffixes the config adds (``public_suffixes``: an intranet's shared parent, the test web's).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from publicsuffixlist import PublicSuffixList

from gossamer.urls import host_of

if TYPE_CHECKING:
    from gossamer.config import ScopeConfig

__all__ = [
    "MODES",
    "Scope",
    "registrable_domain",
    "scope_of",
    "seed_surts",
    "surt_of",
    "surt_rule",
]

# --scope: the seed list alone (links not followed), the seeds' hosts, their registrable
# domains, the URL prefixes of the seeds (up to the last "/" of the path), or anywhere.
MODES = ("seeds", "host", "domain", "prefix", "any")
_SURT_RULE = re.compile(r"^([+-])\s*([a-z][a-z0-9+.-]*://\(.*)$", re.IGNORECASE)


def surt_of(url: str) -> str:
    """The SURT form of a canonical URL, https written as http (the comparison form)."""
    scheme, _, rest = url.partition("://")
    slash = rest.find("/")
    authority, tail = (rest, "/") if slash < 0 else (rest[:slash], rest[slash:])
    authority = authority[authority.rfind("@") + 1 :]  # never credentials in a key
    if authority.startswith("["):  # an IPv6 literal keeps its brackets
        close = authority.index("]") + 1
        host, port = authority[:close], authority[close:]
        labels = host
    else:
        host, colon, number = authority.partition(":")
        port = colon + number
        labels = host if _is_ipv4(host) else ",".join(reversed(host.split(".")))
    return f"{_compared(scheme)}://({labels},{port}){tail}"


def surt_rule(text: str) -> tuple[bool, str]:
    """A written SURT-prefix rule (``+http://(org,example,)/``) as (allows, prefix); an
    unsigned prefix allows. ValueError says what is wrong."""
    written = text.strip()
    match = _SURT_RULE.match(written if written[:1] in "+-" else "+" + written)
    if match is None:
        raise ValueError("is not a SURT prefix such as +http://(org,example,)/")
    sign, prefix = match.groups()
    scheme, _, rest = prefix.partition("://")
    close = rest.find(")")
    host = rest if close < 0 else rest[:close]
    # The scheme and the host part are case-insensitive; the path keeps its case.
    tail = "" if close < 0 else rest[close:]
    return sign == "+", f"{_compared(scheme.lower())}://{host.lower()}{tail}"


def registrable_domain(host: str, extra: tuple[str, ...] = ()) -> str:
    """The registrable domain of ``host`` (example.co.uk for www.example.co.uk); a host that
    has none (an address, a bare name, a public suffix itself) is its own."""
    if host.startswith("[") or _is_ipv4(host):
        return host
    for suffix in sorted(extra, key=len, reverse=True):  # the longest that fits wins
        if host.endswith("." + suffix):
            head = host[: -len(suffix) - 1]
            return f"{head.rsplit('.', 1)[-1]}.{suffix}"
    found = _suffixes().privatesuffix(host)
    return str(found) if found else host


def seed_surts(mode: str, seeds: Iterable[str], extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The SURT prefixes that ``mode`` draws around the seeds' URLs (none for ``seeds`` and
    ``any``), shortest covering set, sorted."""
    prefixes: set[str] = set()
    for url in seeds:
        if mode == "host":
            surt = surt_of(url)
            prefixes.add(surt[: surt.index(")") + 2])  # "http://(org,example,www,)/"
        elif mode == "domain":
            domain = registrable_domain(host_of(url), extra)
            prefixes.add(surt_of(f"http://{domain}/").split(")", 1)[0])  # "http://(org,example,"
        elif mode == "prefix":
            surt = surt_of(url.split("?", 1)[0])
            prefixes.add(surt[: surt.rindex("/") + 1])
    return _covering(prefixes)


class Scope:
    """The scope rules of one crawl, compiled; :meth:`refusal` judges a URL."""

    def __init__(
        self,
        *,
        mode: str = "any",
        seed_area: tuple[str, ...] = (),
        allow_domains: tuple[str, ...] = (),
        surts: tuple[str, ...] = (),
        include: tuple[str, ...] = (),
        exclude: tuple[str, ...] = (),
    ) -> None:
        allowed: list[str] = []
        denied: list[str] = []
        for text in surts:
            allows, prefix = surt_rule(text)
            (allowed if allows else denied).append(prefix)
        for domain in allow_domains:
            allowed.append(surt_of(f"http://{domain.lower().strip('.')}/").split(")", 1)[0])
        self._mode = mode
        self._seed_area = _covering(seed_area)
        self._allowed = _covering(allowed)
        self._denied = _covering(denied)
        self._include = tuple(re.compile(pattern) for pattern in include)
        self._exclude = tuple(re.compile(pattern) for pattern in exclude)
        # With the mode drawing no area, --allow-domain and + rules are the whole area.
        self._area = mode not in ("any", "seeds") or bool(self._allowed)

    @property
    def limited(self) -> bool:
        """Whether these rules can refuse any URL at all (the default scope refuses none)."""
        return self._mode != "any" or bool(
            self._allowed or self._denied or self._include or self._exclude
        )

    @property
    def follows_links(self) -> bool:
        """False for ``--scope seeds``: a URL found on a page (depth above 0) is refused."""
        return self._mode != "seeds"

    def refusal(self, url: str) -> str | None:
        """The rule that keeps ``url`` out wherever it is found: ``host``, ``domain``,
        ``prefix``, ``allow`` (outside --allow-domain and the + SURT rules), ``surt`` (a -
        rule), ``include`` or ``exclude``; None when it is in scope. (``seeds`` refuses by
        depth: see :attr:`follows_links`.)"""
        if any(pattern.search(url) for pattern in self._exclude):
            return "exclude"
        if self._denied or self._area:
            surt = surt_of(url)
            if _within(self._denied, surt):
                return "surt"
            if self._area and not (_within(self._seed_area, surt) or _within(self._allowed, surt)):
                return self._mode if self._mode in ("host", "domain", "prefix") else "allow"
        if self._include and not any(pattern.search(url) for pattern in self._include):
            return "include"
        return None


def scope_of(config: ScopeConfig) -> Scope:
    """The scope rules a ``[scope]`` section sets."""
    return Scope(
        mode=config.mode,
        seed_area=config.seed_area,
        allow_domains=config.allow_domains,
        surts=config.surts,
        include=config.include,
        exclude=config.exclude,
    )


def _within(prefixes: tuple[str, ...], surt: str) -> bool:
    """Whether ``surt`` starts with one of ``prefixes`` (a prefix-free sorted tuple: the only
    candidate is the greatest one not above ``surt``)."""
    at = bisect_right(prefixes, surt)
    return at > 0 and surt.startswith(prefixes[at - 1])


def _covering(prefixes: Iterable[str]) -> tuple[str, ...]:
    """Sorted, without the prefixes another one already covers (which :func:`_within` needs)."""
    kept: list[str] = []
    for prefix in sorted(set(prefixes)):
        if not kept or not prefix.startswith(kept[-1]):
            kept.append(prefix)
    return tuple(kept)


def _compared(scheme: str) -> str:
    return "http" if scheme == "https" else scheme


def _is_ipv4(host: str) -> bool:
    # Canonical URLs write an IPv4 address in dotted decimal, and no top-level domain is all
    # digits, so the last label tells (ipaddress would raise for every host name: 5x slower).
    return host.rpartition(".")[2].isdigit()


@cache
def _suffixes() -> PublicSuffixList:
    """The Public Suffix List shipped in the package (read once per process, ~10 ms)."""
    return PublicSuffixList()
