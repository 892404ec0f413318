"""Engine: the crawl loop that ties frontier, fetch, parse and store together."""

from gossamer.engine.crawler import CrawlOutcome, Crawler

__all__ = ["CrawlOutcome", "Crawler"]
