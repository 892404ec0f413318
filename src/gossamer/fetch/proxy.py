"""Fetch, the route: which proxy a request goes through, chosen as curl chooses it.

Data flow: ``--proxy`` / ``[fetch] proxy`` (and a ``[[site]]`` table's ``proxy``) and the
environment -> **proxy** -> ``proxy_for(url)``, which the fetcher asks before each request.

Without a configured proxy the environment decides, as curl reads it: ``http_proxy`` for
http targets, ``https_proxy`` for https ones (the lower-case name first, then the upper-case
one), ``all_proxy`` for either, and ``no_proxy`` names the hosts that go direct: a name
matches itself and its subdomains (a leading dot changes nothing), an address or a CIDR
network matches address literals, ``*`` matches every host. Upper-case ``HTTP_PROXY`` is
ignored when ``REQUEST_METHOD`` is set, as Python's urllib does: under CGI a request's
``Proxy:`` header arrives in that name ("httpoxy"). A configured URL replaces the proxy
variables, and ``no_proxy`` still applies to it (as it does to curl's ``--proxy``); the
configured value ``none`` turns every proxy off. A site's own proxy is more specific than
``no_proxy`` and wins over both.

Only ``http://`` proxies are spoken to (https targets go through them with CONNECT).

Secrets: a proxy's password is never part of the configuration tree, which is stored in
``crawl.json`` and in a shared crawl's settings. A configured URL may name a user
(``http://alice@proxy:3128``); the password then comes from ``GOSSAMER_PROXY_PASSWORD``,
which ``gossamer crawl --proxy URL`` sets for its own processes when the URL carries one.
A proxy URL from the environment is used as it is, and stays there. Shown anywhere, a proxy
URL goes through :func:`redacted`.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from yarl import URL

from gossamer.errors import ConfigError

__all__ = [
    "NO_PROXY",
    "PASSWORD_ENV",
    "NoProxy",
    "Proxies",
    "ProxyRoute",
    "parse_proxy",
    "proxy_problem",
    "redacted",
    "split_password",
]

NO_PROXY = "none"  # the configured value that turns every proxy off, the environment's too
PASSWORD_ENV = "GOSSAMER_PROXY_PASSWORD"
_SCHEMES = ("http",)
_HIDDEN = "***"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def parse_proxy(text: str) -> URL:
    """A proxy URL as curl reads one: ``HOST:PORT`` means ``http://HOST:PORT``."""
    text = text.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        url = URL(text)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"proxy {redacted(text)!r} is not a URL ({exc})") from exc
    return url


def proxy_problem(value: str, *, password_allowed: bool = False) -> str | None:
    """Why ``value`` cannot be a configured proxy (``none``, or ``http://[USER@]HOST[:PORT]``),
    or None. ``password_allowed``: the environment's URLs may carry one."""
    if value.strip().lower() == NO_PROXY:
        return None
    try:
        url = parse_proxy(value)
        port = url.port  # yarl checks the port's range only when asked
    except (ConfigError, ValueError):
        return "is not a proxy URL such as http://proxy.example:3128"
    if url.scheme not in _SCHEMES:
        return f"uses {url.scheme}://, but Gossamer speaks only to http:// proxies"
    if not url.raw_host or port is None:
        return "names no proxy host (use http://HOST:PORT)"
    if url.path not in ("", "/") or url.query_string or url.fragment:
        return "must be http://HOST:PORT, without a path"
    if url.password is not None and not password_allowed:
        return (
            "must not hold a password (the settings are stored): name the user only and give"
            f" the password in {PASSWORD_ENV}"
        )
    return None


def redacted(text: str) -> str:
    """A proxy URL fit to show or store: its password, if any, replaced by ``***``.

    Done on the text, not a parsed URL, so that a password a URL parser would misread (an
    unencoded ``/`` or ``@`` in it) is hidden all the same.
    """
    scheme = _SCHEME.match(text)
    head = scheme.group(0) if scheme else ""
    userinfo, at, host = text[len(head) :].rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if not at or not colon:
        return text
    return f"{head}{user}:{_HIDDEN}@{host}"


def split_password(text: str) -> tuple[str, str | None]:
    """``http://USER:PASS@HOST:PORT`` -> (``http://USER@HOST:PORT``, ``PASS``)."""
    url = parse_proxy(text)
    if url.password is None:
        return text, None
    return str(url.with_password(None)), url.password


def _with_password(text: str, password: str | None) -> str:
    """A configured proxy URL with the password kept in the environment, if it names a user."""
    url = parse_proxy(text)
    if url.user is None or url.password is not None:
        return str(url)
    if password is None:
        raise ConfigError(
            f"the proxy {text} names a user but {PASSWORD_ENV} is not set (a proxy's password"
            " is never stored: give it in that variable, or give --proxy again with it)"
        )
    return str(url.with_password(password))


@dataclass(frozen=True, slots=True)
class NoProxy:
    """The hosts of ``no_proxy``: names (matching subdomains too) and address networks."""

    names: tuple[str, ...] = ()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()
    everything: bool = False

    @classmethod
    def parse(cls, text: str) -> NoProxy:
        names: list[str] = []
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for raw in text.replace(" ", ",").split(","):
            entry = raw.strip().lower()
            if not entry:
                continue
            if entry == "*":
                return cls(everything=True)
            if entry.startswith("[") and "]" in entry:  # [IPv6], maybe with a port
                entry = entry[1 : entry.index("]")]
            elif entry.count(":") == 1:  # HOST:PORT; curl ignores the port too
                entry = entry.partition(":")[0]
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.append(entry.lstrip("*").strip("."))
        return cls(tuple(name for name in names if name), tuple(networks))

    def matches(self, host: str) -> bool:
        if self.everything:
            return True
        bare = host.strip("[]").lower().rstrip(".")
        try:
            address = ipaddress.ip_address(bare)
        except ValueError:
            return any(bare == name or bare.endswith("." + name) for name in self.names)
        return any(address in network for network in self.networks)


def _first(environ: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value
    return None


@dataclass(frozen=True, slots=True)
class Proxies:
    """The crawl's proxies by target scheme (URLs that may carry a password: memory only)."""

    http: str | None = None
    https: str | None = None
    no_proxy: NoProxy = NoProxy()
    password: str | None = None  # for configured URLs that name a user

    @classmethod
    def of(cls, configured: str | None, environ: Mapping[str, str]) -> Proxies:
        """The proxies ``configured`` (None: the environment's) and ``environ`` give.

        Raises ConfigError for a proxy URL that cannot be used, naming where it came from.
        """
        password = environ.get(PASSWORD_ENV)
        if configured is not None and configured.strip().lower() == NO_PROXY:
            return cls(password=password)
        no_proxy = NoProxy.parse(_first(environ, "no_proxy", "NO_PROXY") or "")
        if configured is not None:
            chosen = _checked(configured, "--proxy", password_allowed=False)
            chosen = _with_password(chosen, password)
            return cls(chosen, chosen, no_proxy, password)
        upper_http = () if environ.get("REQUEST_METHOD") else ("HTTP_PROXY",)
        every = _first(environ, "all_proxy", "ALL_PROXY")
        http = _first(environ, "http_proxy", *upper_http) or every
        https = _first(environ, "https_proxy", "HTTPS_PROXY") or every
        for value, name in ((http, "http_proxy"), (https, "https_proxy")):
            if value is not None:
                _checked(value, f"the environment's {name}", password_allowed=True)
        return cls(http, https, no_proxy, password)

    def for_url(self, url: str, site: str | None = None) -> str | None:
        """The proxy of one request (None: direct). ``site``: the proxy its site's rule names,
        if any (``none``: direct), which wins over ``no_proxy``."""
        if site is not None:
            return None if site.strip().lower() == NO_PROXY else _with_password(site, self.password)
        target = URL(url, encoded=True)
        chosen = self.https if target.scheme == "https" else self.http
        if chosen is None or self.no_proxy.matches(target.raw_host or ""):
            return None
        return chosen

    @property
    def any(self) -> bool:
        return self.http is not None or self.https is not None


def _checked(value: str, where: str, *, password_allowed: bool) -> str:
    problem = proxy_problem(value, password_allowed=password_allowed)
    if problem is not None:
        raise ConfigError(f"{where} {redacted(value)!r} {problem}")
    return value


@dataclass(frozen=True, slots=True)
class ProxyRoute:
    """One proxy as the fetcher hands it to aiohttp: the URL without credentials, and the
    ``Proxy-Authorization`` they make, kept apart (memory only)."""

    url: URL
    authorization: str | None = field(repr=False)  # the Proxy-Authorization header's value
    shown: str  # for messages: the password hidden

    @classmethod
    def of(cls, text: str) -> ProxyRoute:
        url = URL(text if "://" in text else "http://" + text)
        authorization = None
        if url.user is not None:
            pair = f"{url.user}:{url.password or ''}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return cls(url.with_user(None), authorization, redacted(text))

    def headers(self, target: URL) -> tuple[dict[str, str], dict[str, str]]:
        """(request headers, CONNECT headers) carrying the credentials: an http target's
        request goes to the proxy itself, an https one's only through its tunnel."""
        if self.authorization is None:
            return {}, {}
        carried = {"Proxy-Authorization": self.authorization}
        return ({}, carried) if target.scheme == "https" else (carried, {})
