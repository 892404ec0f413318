"""The fetcher a crawl's settings build: a site's proxy and cookie file over the crawl's,
checked when the crawl starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from yarl import URL

from gossamer.config import CrawlConfig, FetchConfig, SiteConfig
from gossamer.crawling.fetching import cookie_jars, proxies_of
from gossamer.errors import ConfigError
from gossamer.fetch.proxy import PASSWORD_ENV


def _config(**changes: object) -> CrawlConfig:
    return CrawlConfig(seeds=Path("seeds.txt"), out=Path("out"), **changes)  # type: ignore[arg-type]


def test_a_sites_proxy_naming_a_user_needs_its_password_at_start() -> None:
    config = _config(sites=(SiteConfig(match="*.corp.test", proxy="http://bob@proxy:3128"),))
    with pytest.raises(ConfigError, match=PASSWORD_ENV):
        proxies_of(config, {})
    proxies = proxies_of(config, {PASSWORD_ENV: "pw"})
    assert proxies.for_url("http://a.corp.test/", site="http://bob@proxy:3128") == (
        "http://bob:pw@proxy:3128"
    )


def _file(path: Path, host: str, name: str) -> str:
    path.write_text(f"# Netscape HTTP Cookie File\n{host}\tFALSE\t/\tFALSE\t0\t{name}\tv\n")
    return str(path)


def test_a_sites_cookie_file_replaces_the_crawls_for_its_hosts(tmp_path: Path) -> None:
    crawl_file = _file(tmp_path / "crawl.txt", "a.test", "crawl")
    site_file = _file(tmp_path / "site.txt", "b.test", "site")
    config = _config(
        fetch=FetchConfig(cookies_file=crawl_file),
        sites=(SiteConfig(match="b.test", cookies=site_file),),
    )

    async def headers() -> list[str | None]:
        jars = cookie_jars(config)
        assert jars is not None
        return [jars.header(URL(f"http://{host}/")) for host in ("a.test", "b.test", "c.test")]

    assert asyncio.run(headers()) == ["crawl=v", "site=v", None]


def test_cookies_off_means_no_jars() -> None:
    assert cookie_jars(_config(fetch=FetchConfig(cookies=False))) is None
