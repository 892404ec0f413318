"""Which hosts and pages a crawl renders, and what looks script-built."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, RenderConfig, SiteConfig
from gossamer.errors import ConfigError
from gossamer.parse import parse_html
from gossamer.render.choice import Mode, RenderChoice, find_browser, kinds_problem
from gossamer.sites import site_problem


def _choice(render: RenderConfig, *sites: SiteConfig) -> RenderChoice | None:
    config = CrawlConfig(seeds=Path("s"), out=Path("o"), render=render, sites=sites)
    return RenderChoice.of(config)


def test_nothing_asked_starts_no_browser() -> None:
    assert _choice(RenderConfig()) is None
    assert _choice(RenderConfig(), SiteConfig(match="a.test", render=False)) is None


def test_a_site_table_wins_over_the_flags() -> None:
    choice = _choice(
        RenderConfig(hosts=("*.app.test",), auto=("*",), block=("image",)),
        SiteConfig(match="old.app.test", render=False),
        SiteConfig(match="news.test", render="auto", block=("font", "media")),
    )
    assert choice is not None
    assert choice.mode("www.app.test") is Mode.ALWAYS
    assert choice.mode("old.app.test") is Mode.OFF
    assert choice.mode("news.test") is Mode.AUTO
    assert choice.mode("other.test") is Mode.AUTO
    assert choice.blocked("www.app.test") == {"image"}
    assert choice.blocked("news.test") == {"font", "media"}


def test_site_and_setting_values_are_checked() -> None:
    assert site_problem({"match": "a.test", "render": "sometimes"}) is not None
    assert site_problem({"match": "a.test", "render": "auto", "block": ["image"]}) is None
    assert site_problem({"match": "a.test", "block": ["pictures"]}) is not None
    assert kinds_problem(("image", "font")) is None
    assert kinds_problem(("document",)) is not None  # a page's frames are never blocked


def test_a_missing_browser_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigError, match="rendering needs Chromium"):
        find_browser(None)
    assert find_browser("/opt/chrome") == "/opt/chrome"


@pytest.mark.parametrize(
    ("html", "built"),
    [
        ('<html><head><script src="/app.js"></script></head><body><div id=app></div>', True),
        # links, but only a menu's worth of text
        ('<script src="/a.js"></script><body><a href="/x">Home</a> <a href="/y">About</a>', True),
        # an article with an analytics script
        ("<script>track()</script><body><a href='/x'>next</a><p>" + "word " * 80 + "</p>", False),
        ("<body><p>short</p></body>", False),  # no script: nothing to render
        ("<body><a href='/x'>x</a>" + "<p>text</p>" * 40 + "</body>", False),
    ],
)
def test_what_looks_script_built(html: str, built: bool) -> None:
    assert parse_html(html.encode(), "http://a.test/").script_built is built
