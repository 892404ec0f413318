"""Engine: the crawl loop that ties frontier, fetch, parse and store together."""

from gossamer.engine.crawler import Crawler, CrawlOutcome

__all__ = ["CrawlOutcome", "Crawler"]
