"""The fetcher a crawl builds (``crawling/fetching.py``) under ``[[site]]`` tables: a site's
cookie file seeds its hosts' jars in place of the crawl's, and no other host's."""

from __future__ import annotations

import asyncio
from pathlib import Path

from yarl import URL

from gossamer.config import CrawlConfig, FetchConfig, SiteConfig
from gossamer.crawling.fetching import cookie_jars

HEADER = "# Netscape HTTP Cookie File\n"


def test_a_sites_cookie_file_stands_for_the_crawls_on_its_hosts(tmp_path: Path) -> None:
    own, crawls = tmp_path / "shop.txt", tmp_path / "crawl.txt"
    own.write_text(HEADER + ".shop.test\tTRUE\t/\tFALSE\t0\tsession\tmine\n", encoding="utf-8")
    crawls.write_text(
        HEADER
        + ".shop.test\tTRUE\t/\tFALSE\t0\tsession\tcrawls\n"
        + ".other.test\tTRUE\t/\tFALSE\t0\tsession\tother\n",
        encoding="utf-8",
    )
    config = CrawlConfig(
        seeds=Path("s"),
        out=Path("o"),
        fetch=FetchConfig(cookies_file=str(crawls)),
        sites=(SiteConfig(match="www.shop.test", cookies=str(own)),),
    )

    async def headers() -> list[str | None]:  # aiohttp's jars live on an event loop
        jars = cookie_jars(config)
        assert jars is not None
        urls = ("http://www.shop.test/", "http://shop.test/", "http://www.other.test/")
        return [jars.header(URL(url)) for url in urls]

    # shop.test: no table names it, so the crawl's file
    assert asyncio.run(headers()) == ["session=mine", "session=crawls", "session=other"]
