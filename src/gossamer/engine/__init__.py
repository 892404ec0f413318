"""Engine: the crawl loop that ties frontier, fetch, parse and store together.

The crawler is loaded on first use (``gossamer.lazy``): the coordinator of a ``--workers``
crawl imports ``engine.workers`` and ``engine.coordinator`` without it, so it reaches its
workers' orders sooner (issue 29).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gossamer.lazy import exports

if TYPE_CHECKING:
    from gossamer.engine.crawler import Crawler, CrawlOutcome

__all__ = ["CrawlOutcome", "Crawler"]
__getattr__ = exports(__name__, {"Crawler": "crawler", "CrawlOutcome": "crawler"})
