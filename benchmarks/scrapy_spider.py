"""The Scrapy side of the throughput comparison: a broad crawl of the local test web.

Role: benchmark support only. ``compare_scrapy.py`` runs this file with the Scrapy virtualenv
(``benchmarks/.venv-scrapy``) as ``scrapy runspider``, one process per crawl, so that Scrapy is
measured the way Gossamer is: a separate process from spawn to exit.

Settings follow Scrapy's "Broad Crawls" advice, matched to what Gossamer does in the same run:
one request in flight per host and no delay, robots.txt obeyed (judged with the product token
``gossamer``, so the server-side audit applies the same rules to both crawlers), breadth-first
order, no cookies, no retries, redirects followed. Every response is stored as one JSON line
(url, status, content type, body length, SHA-1 of the body, number of links followed), which is
the least a crawler must keep to be compared with Gossamer's WARC + SQLite store; with
``-a bodies=FILE`` every body is also appended to FILE (a line with the URL and the length,
then the bytes), as an archiving crawler must keep them.

    scrapy runspider benchmarks/scrapy_spider.py -a seeds=seeds.txt -a stats=stats.json \\
        -O pages.jsonl:jsonlines -s CLOSESPIDER_PAGECOUNT=15000 \\
        -s TWISTED_DNS_RESOLVER=scrapy_resolver.TestWebResolver -s REACTOR_THREADPOOL_MAXSIZE=20

(with ``PYTHONPATH=benchmarks`` so that the resolver module can be imported).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import scrapy
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor

DOMAIN = "web.test"


class TestWebSpider(scrapy.Spider):
    """Follows every ``<a href>`` inside ``*.web.test`` and stores every response."""

    name = "testweb"
    allowed_domains: ClassVar[list[str]] = [DOMAIN]
    custom_settings: ClassVar[dict[str, Any]] = {
        # "Broad Crawls": many hosts at once, one at a time per host.
        "CONCURRENT_REQUESTS": 128,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": False,
        # REACTOR_THREADPOOL_MAXSIZE and TWISTED_DNS_RESOLVER are read when the reactor is set
        # up, before a spider's settings apply, so compare_scrapy.py passes them with -s.
        # Politeness that Gossamer also has.
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_USER_AGENT": "gossamer",
        # Breadth-first, as Gossamer crawls.
        "DEPTH_PRIORITY": 1,
        "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
        "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
        # What a broad crawl turns off.
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "REDIRECT_ENABLED": True,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        # Store 404s and 500s too, as Gossamer's metadata database does.
        "HTTPERROR_ALLOW_ALL": True,
    }

    def __init__(self, seeds: str = "", stats: str = "", bodies: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Open for the spider's whole life: closed in ``closed``.
        self.bodies = Path(bodies).open("ab") if bodies else None  # noqa: SIM115
        lines = Path(seeds).read_text(encoding="utf-8").splitlines()
        self.start_urls = [line.strip() for line in lines if line.strip()]
        self.stats_path = Path(stats) if stats else None
        # Scope is left to ``allowed_domains`` (Scrapy's offsite filter, which compares host
        # names): LinkExtractor's own allow_domains compares host:port and so would drop every
        # link of a web served on a non-default port.
        self.links = LinkExtractor()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[Any]:
        follow: list[str] = []
        if isinstance(response, TextResponse) and 200 <= response.status < 300:
            follow = [link.url for link in self.links.extract_links(response)]
        if self.bodies is not None:
            self.bodies.write(f"{response.url} {len(response.body)}\n".encode())
            self.bodies.write(response.body)
        yield {
            "url": response.url,
            "status": response.status,
            "content_type": response.headers.get("Content-Type", b"").decode("latin-1"),
            "length": len(response.body),
            "sha1": hashlib.sha1(response.body).hexdigest(),
            "links": len(follow),
        }
        for url in follow:
            yield scrapy.Request(url, callback=self.parse)

    def closed(self, reason: str) -> None:
        """Leave Scrapy's counters where the benchmark can read them."""
        if self.bodies is not None:
            self.bodies.close()
        if self.stats_path is None:
            return
        stats = dict(self.crawler.stats.get_stats())
        stats["finish_reason"] = reason
        self.stats_path.write_text(json.dumps(stats, default=str, indent=1), encoding="utf-8")
