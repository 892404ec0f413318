"""The fetch stage as a crawl's settings ask for it: ``CrawlConfig`` -> a ``Fetcher``.

Data flow: configuration (and the environment's proxy variables) -> **fetching** ->
``fetch.Fetcher``, which the crawl loop (``crawling/loop.py``) drives. Kept apart so every
engine that fetches builds its fetcher from the same settings the same way: one process,
each ``--workers`` process and each worker of a shared crawl call :func:`build_fetcher`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gossamer.config import CrawlConfig
from gossamer.fetch.cookies import CookieJars, matching, read_cookie_file
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.proxy import Proxies
from gossamer.fetch.resolver import parse_resolve

__all__ = ["build_fetcher", "cookie_jars", "fetch_limits", "proxies_of"]


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
    password, so the CLI calls it before a crawl starts, to say so in one line.
    """
    return Proxies.of(config.fetch.proxy, os.environ if environ is None else environ)


def cookie_jars(config: CrawlConfig) -> CookieJars | None:
    """The crawl's cookie jars, seeded from its cookie file; None with cookies off."""
    if not config.fetch.cookies:
        return None
    if config.fetch.cookies_file is None:
        return CookieJars()
    return CookieJars(given=matching(read_cookie_file(config.fetch.cookies_file)))


def build_fetcher(config: CrawlConfig, *, connections: int) -> Fetcher:
    """A fetcher with ``connections`` pooled connections, as ``config`` says."""
    proxies = proxies_of(config)
    return Fetcher(
        user_agent=config.fetch.user_agent,
        limits=fetch_limits(config),
        resolve=tuple(parse_resolve(entry) for entry in config.resolve),
        allow_private=config.fetch.allow_private,
        connections=connections,
        max_per_ip=config.politeness.max_per_ip,
        ca_file=config.fetch.ca_file,
        proxy_for=proxies.for_url,
        cookies=cookie_jars(config),
        record_cookies=config.fetch.warc_cookies,
    )
