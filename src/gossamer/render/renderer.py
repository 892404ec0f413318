"""The render stage of one crawler process: which fetched pages go through Chromium, and the
browser pool, resource cache and counters they share.

Data flow: the crawl loop (``crawling/loop.py``), holding the page's ticket -> **renderer**
(``choice``: this host, this page? -> ``session.render_page`` with ``subfetch`` routing) ->
the same ``FetchResult`` with ``render`` and ``rendered`` set -> store. Every engine's loop
is the same loop, so one process, each ``--workers`` process and each worker of a shared
crawl render alike, each with its own browser.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from gossamer.config import CrawlConfig
from gossamer.crawling.recorder import PARSE_LIMIT, stored_html
from gossamer.fetch import FetchResult
from gossamer.fetch.fetcher import Fetcher
from gossamer.frontier import Job
from gossamer.parse import parse_html
from gossamer.parse.html import may_have_scripts
from gossamer.render.browser import BrowserPool
from gossamer.render.choice import Mode, RenderChoice, find_browser
from gossamer.render.session import render_page
from gossamer.render.subfetch import PageLimits, ResourceCache, SubFetches
from gossamer.robots import RobotsRules

__all__ = ["Renderer"]


class Renderer:
    def __init__(self, config: CrawlConfig, choice: RenderChoice) -> None:
        render = config.render
        self._choice = choice
        self._cap = config.politeness.crawl_delay_cap
        self._timeout = render.page_timeout
        self._max_requests = render.max_requests
        self._screenshot = render.screenshot
        self._pool = BrowserPool(
            size=render.pool,
            executable=find_browser(render.browser),
            memory_mb=render.memory_mb,
            user_agent=config.fetch.user_agent,
        )
        self._cache = ResourceCache()
        self.refused: Counter[str] = Counter()  # sub-resources not fetched, by why

    def wanted(self, job: Job, result: FetchResult) -> bool:
        """Whether this fetched page is rendered: a stored HTML page of a rendered host
        (for ``auto``, one whose HTML looks script-built)."""
        if not stored_html(result):
            return False
        mode = self._choice.mode(job.host)
        if mode is Mode.OFF:
            return False
        if mode is Mode.ALWAYS:
            return True
        content = result.content[:PARSE_LIMIT]
        if not may_have_scripts(content):  # no parse of a page the hint would pass over
            return False
        return parse_html(content, result.url, result.content_type).script_built

    async def render(
        self,
        job: Job,
        result: FetchResult,
        *,
        rules: RobotsRules | None,
        fetcher: Fetcher,
        keep: Callable[[FetchResult], None],
    ) -> FetchResult:
        """``result`` rendered: its ``render`` state and DOM set."""
        delay = self._choice.sites.for_host(job.host).delay
        if rules is not None and rules.crawl_delay is not None:
            delay = max(delay, min(rules.crawl_delay, self._cap))
        limits = PageLimits(delay, self._max_requests, self._choice.blocked(job.host))
        subs = SubFetches(
            result, rules, limits, fetcher=fetcher, keep=keep, cache=self._cache,
            refused=self.refused,
        )  # fmt: skip
        rendering = await render_page(
            self._pool, result, subs, self._timeout, screenshot=self._screenshot
        )
        return replace(
            result, render=rendering.state, rendered=rendering.dom, screenshot=rendering.screenshot
        )

    @property
    def restarts(self) -> int:
        return self._pool.restarts

    async def close(self) -> None:
        await self._pool.close()
