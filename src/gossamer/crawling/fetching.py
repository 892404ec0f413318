"""The fetch stage as a crawl's settings ask for it: ``CrawlConfig`` -> a ``Fetcher``.

Data flow: configuration -> **fetching** -> ``fetch.Fetcher``, which the crawl loop
(``engine/crawler.py``) drives. Kept apart so every engine that fetches builds its fetcher
from the same settings the same way.
"""

from __future__ import annotations

from gossamer.config import CrawlConfig
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve

__all__ = ["build_fetcher", "fetch_limits"]


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


def build_fetcher(config: CrawlConfig, *, connections: int) -> Fetcher:
    """A fetcher with ``connections`` pooled connections, as ``config`` says."""
    return Fetcher(
        user_agent=config.fetch.user_agent,
        limits=fetch_limits(config),
        resolve=tuple(parse_resolve(entry) for entry in config.resolve),
        allow_private=config.fetch.allow_private,
        connections=connections,
        max_per_ip=config.politeness.max_per_ip,
        ca_file=config.fetch.ca_file,
    )
