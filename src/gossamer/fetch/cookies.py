"""Fetch, cookies: one jar per host for the whole crawl, seeded from a Netscape cookie file.

Data flow: ``--cookies FILE`` (read once, :func:`read_cookie_file`) -> **cookies** -> the
fetcher, which asks :meth:`CookieJars.header` before each request and hands every answer's
``Set-Cookie`` lines to :meth:`CookieJars.update`, redirects included (a login often sets its
session on a 302).

Each host has a jar of its own (aiohttp's ``CookieJar``), so a cookie is only ever sent to
the host that set it, whatever ``Domain`` it claims: a site cannot plant a cookie for a
public suffix (``co.uk``) and have it sent to every site under it, and a login cookie for
one host never reaches another. A ``Domain=example.org`` cookie set by ``www.example.org``
is thus not sent to ``shop.example.org``; a cookie file's domain entries are given to
every host they match, so a login exported from a browser serves all of its site's hosts.

The jars of the hosts used least recently are dropped past ``max_hosts`` (their cookies
are set again on the next answer), so a crawl of millions of hosts keeps a bounded table.
"""

from __future__ import annotations

import http.cookiejar
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import CookieError, Morsel

from aiohttp import CookieJar
from yarl import URL

from gossamer.errors import ConfigError

__all__ = [
    "MAX_HOSTS",
    "CookieJars",
    "FileCookie",
    "cookie_file_problem",
    "matching",
    "read_cookie_file",
]

MAX_HOSTS = 10_000  # jars kept at once; far above the hosts a crawl talks to at a time


@dataclass(frozen=True, slots=True)
class FileCookie:
    """One line of a Netscape cookie file."""

    domain: str  # without a leading dot
    subdomains: bool  # the line's domain matches its subdomains too
    path: str
    secure: bool
    expires: float | None  # epoch seconds; None: a session cookie
    name: str
    value: str

    def matches(self, host: str) -> bool:
        return host == self.domain or (self.subdomains and host.endswith("." + self.domain))


def read_cookie_file(path: str) -> tuple[FileCookie, ...]:
    """The unexpired cookies of a Netscape cookie file (curl's ``-b``/``-c``, wget's
    ``--load-cookies``, browser export add-ons); ConfigError if it cannot be read as one."""
    jar = http.cookiejar.MozillaCookieJar()
    try:
        # Expiry is judged below: curl and wget write 0 for a session cookie, which is what a
        # login usually leaves, and the standard library would drop it as long expired.
        jar.load(path, ignore_discard=True, ignore_expires=True)
    except http.cookiejar.LoadError as exc:
        raise ConfigError(f"cookie file {path}: not in the Netscape cookie format ({exc})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(f"cookie file {path}: {reason}") from exc
    now = time.time()
    return tuple(
        FileCookie(
            domain=cookie.domain.lstrip(".").lower(),
            subdomains=cookie.domain_specified or cookie.domain.startswith("."),
            path=cookie.path or "/",
            secure=cookie.secure,
            expires=float(cookie.expires) if cookie.expires else None,
            name=cookie.name,
            value=cookie.value or "",
        )
        for cookie in jar
        if not cookie.expires or cookie.expires > now
    )


def cookie_file_problem(path: str) -> str | None:
    """Why ``path`` cannot be used as ``--cookies``, or None (for the config check)."""
    try:
        read_cookie_file(path)
    except ConfigError as exc:
        return f"cannot be used: {str(exc).removeprefix(f'cookie file {path}: ')}"
    return None


def _morsel(cookie: FileCookie, now: float) -> Morsel[str] | None:
    morsel: Morsel[str] = Morsel()
    try:
        morsel.set(cookie.name, cookie.value, cookie.value)
    except CookieError:
        return None  # a name no Cookie header can carry
    morsel["path"] = cookie.path
    if cookie.secure:
        morsel["secure"] = True
    if cookie.expires is not None:
        morsel["max-age"] = str(max(1, int(cookie.expires - now)))
    return morsel


def matching(cookies: tuple[FileCookie, ...]) -> Callable[[str], tuple[FileCookie, ...]]:
    """The ``given`` hook of :class:`CookieJars` for one cookie file's cookies."""
    return lambda host: tuple(cookie for cookie in cookies if cookie.matches(host))


def _none(host: str) -> tuple[FileCookie, ...]:
    return ()


class CookieJars:
    """The crawl's cookies, one jar per host.

    ``given(host)``: the cookie file's cookies a host's jar starts with (a site's own file,
    or the crawl's); ``keep(host)``: whether a host has cookies at all.
    """

    def __init__(
        self,
        *,
        given: Callable[[str], tuple[FileCookie, ...]] = _none,
        keep: Callable[[str], bool] = lambda host: True,
        max_hosts: int = MAX_HOSTS,
    ) -> None:
        self._given = given
        self._keep = keep
        self._max_hosts = max_hosts
        self._jars: OrderedDict[str, CookieJar] = OrderedDict()

    def header(self, url: URL) -> str | None:
        """The ``Cookie`` header for a request to ``url``, or None."""
        host = (url.raw_host or "").lower()
        if not self._keep(host):
            return None
        jar = self._jar(host, create=False)
        if jar is None:
            return None
        cookies = jar.filter_cookies(url)
        if not cookies:
            return None
        return "; ".join(f"{morsel.key}={morsel.coded_value}" for morsel in cookies.values())

    def update(self, url: URL, set_cookie: list[str]) -> None:
        """Keep the cookies an answer from ``url`` set (its ``Set-Cookie`` lines)."""
        host = (url.raw_host or "").lower()
        if not set_cookie or not self._keep(host):
            return
        jar = self._jar(host, create=True)
        assert jar is not None
        jar.update_cookies_from_headers(set_cookie, url)

    def hosts(self) -> list[str]:
        """The hosts holding a jar now (for tests and reports)."""
        return list(self._jars)

    def _jar(self, host: str, *, create: bool) -> CookieJar | None:
        jar = self._jars.get(host)
        if jar is not None:
            self._jars.move_to_end(host)
            return jar
        given = self._given(host)
        if not given and not create:
            return None
        # unsafe: a jar serves one host, so cookies of an address host are as safe as any.
        jar = self._jars[host] = CookieJar(unsafe=True)
        now = time.time()
        origin = URL.build(scheme="http", host=host)
        for cookie in given:
            morsel = _morsel(cookie, now)
            if morsel is not None:
                jar.update_cookies({cookie.name: morsel}, origin)
        while len(self._jars) > self._max_hosts:
            self._jars.popitem(last=False)
        return jar
