"""The fetch stage as a crawl's settings ask for it: ``CrawlConfig`` -> a ``Fetcher``.

Data flow: configuration (its ``[[site]]`` tables, and the environment's proxy variables) ->
**fetching** -> ``fetch.Fetcher``, which the crawl loop (``crawling/loop.py``) drives. Kept
apart so every engine that fetches builds its fetcher from the same settings the same way:
one process, each ``--workers`` process and each worker of a shared crawl call
:func:`build_fetcher`.

A site's rule (``sites.SiteRule``) reaches the fetcher through three hooks: ``site_for``
(its User-Agent and headers), ``proxy_for`` (its ``proxy`` over the crawl's, ``none`` for
direct) and the cookie jars' ``given`` (its ``cookies`` file instead of the crawl's).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from gossamer.config import CrawlConfig
from gossamer.extras import require
from gossamer.fetch.cookies import CookieJars, FileCookie, read_cookie_file
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.proxy import Proxies
from gossamer.fetch.resolver import parse_resolve
from gossamer.sites import SiteRules

__all__ = ["build_fetcher", "cookie_jars", "fetch_limits", "proxies_of", "wants_http2"]


def fetch_limits(config: CrawlConfig) -> FetchLimits:
    fetch = config.fetch
    return FetchLimits(
        connect_timeout=fetch.connect_timeout,
        read_timeout=fetch.read_timeout,
        total_timeout=fetch.total_timeout,
        max_body=fetch.max_body,
        max_decoded=fetch.max_decoded,
        keep_types=fetch.keep_types,
    )


def proxies_of(config: CrawlConfig, environ: Mapping[str, str] | None = None) -> Proxies:
    """The crawl's proxies: its ``fetch.proxy`` over the environment's variables.

    Raises ConfigError for an unusable proxy URL (the environment's included) or a missing
    password, a site's proxy's too, so the CLI calls it before a crawl starts, to say so in
    one line.
    """
    proxies = Proxies.of(config.fetch.proxy, os.environ if environ is None else environ)
    for table in config.sites:
        if table.proxy is not None:
            proxies.for_url("http://check.invalid/", site=table.proxy)  # its password known
    return proxies


def cookie_jars(config: CrawlConfig, sites: SiteRules | None = None) -> CookieJars | None:
    """The crawl's cookie jars, each host's seeded from its site's cookie file, else the
    crawl's; None with cookies off. Every file is read here, once."""
    if not config.fetch.cookies:
        return None
    rules = sites if sites is not None else SiteRules.of(config)
    paths = {table.cookies for table in config.sites} | {config.fetch.cookies_file}
    files = {path: read_cookie_file(path) for path in paths if path is not None}
    if not files:
        return CookieJars()
    crawl_file = config.fetch.cookies_file

    def given(host: str) -> tuple[FileCookie, ...]:
        path = rules.for_host(host).cookies or crawl_file
        if path is None:
            return ()
        return tuple(cookie for cookie in files[path] if cookie.matches(host))

    return CookieJars(given=given)


def _proxy_hook(proxies: Proxies, sites: SiteRules) -> Callable[[str], str | None]:
    if not sites:  # no [[site]] table: the crawl's route alone
        return proxies.for_url
    return lambda url: proxies.for_url(url, site=sites.for_url(url).proxy)


def build_fetcher(config: CrawlConfig, *, connections: int) -> Fetcher:
    """A fetcher with ``connections`` pooled connections, as ``config`` says.

    ``fetch.http2`` needs the http2 extra: a missing one is a ``MissingExtraError`` here,
    before any request (the CLI asks first, to say so in one line).
    """
    h2 = wants_http2(config)
    if h2:
        require("fetch.http2", "http2")
    sites = SiteRules.of(config)
    return Fetcher(
        user_agent=config.fetch.user_agent,
        limits=fetch_limits(config),
        resolve=tuple(parse_resolve(entry) for entry in config.resolve),
        allow_private=config.fetch.allow_private,
        connections=connections,
        max_per_ip=config.politeness.max_per_ip,
        ca_file=config.fetch.ca_file,
        proxy_for=_proxy_hook(proxies_of(config), sites),
        cookies=cookie_jars(config, sites),
        record_cookies=config.fetch.warc_cookies,
        site_for=sites.for_url if sites else None,
        http2=(lambda url: sites.for_url(url).http2) if h2 else None,
    )


def wants_http2(config: CrawlConfig) -> bool:
    """Whether any request of the crawl may go over HTTP/2: ``[fetch] http2`` (``--http2``)
    or a ``[[site]]`` table's ``http2``."""
    return config.fetch.http2 or any(table.http2 for table in config.sites)
