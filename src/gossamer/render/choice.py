"""Which pages a crawl renders: per host from ``[[site]] render``, ``--render`` and
``--render-auto``; per page, for ``auto``, from the plain HTML's look.

Data flow: configuration -> **choice** -> the crawl loop (``crawling/loop.py``) asks
:meth:`RenderChoice.mode` for each page's host before it is stored. A site table's ``render``
wins (``true``, ``false`` or ``"auto"``), then ``[render] hosts`` (``--render``), then
``[render] auto`` (``--render-auto``); a host none of them names is not rendered.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from gossamer.config import CrawlConfig
from gossamer.errors import ConfigError
from gossamer.extras import require
from gossamer.sites import SiteRules

if TYPE_CHECKING:
    from gossamer.render.renderer import Renderer

__all__ = [
    "KINDS",
    "Mode",
    "RenderChoice",
    "check_renderable",
    "find_browser",
    "kinds_problem",
    "renderer_of",
]

# The request kinds Chromium names (Playwright's ``Request.resource_type``): what ``block``
# may list. "document" is left out: a page's own frames are never blocked by kind.
KINDS = frozenset(
    {
        "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
        "eventsource", "websocket", "manifest", "other",
    }
)  # fmt: skip


class Mode(Enum):
    OFF = "off"
    ALWAYS = "always"
    AUTO = "auto"  # only a page whose HTML looks script-built (``ParsedPage.script_built``)


def kinds_problem(value: Any) -> str | None:
    """Why ``value`` is not a list of request kinds to block, or None."""
    if not isinstance(value, tuple) or not all(isinstance(item, str) for item in value):
        return "must be a list of request kinds such as 'image'"
    unknown = sorted(set(value) - KINDS)
    if unknown:
        return f"names an unknown kind {unknown[0][:40]!r} (one of {', '.join(sorted(KINDS))})"
    return None


def _regex(globs: tuple[str, ...]) -> re.Pattern[str] | None:
    if not globs:
        return None
    parts = (".*".join(re.escape(p) for p in glob.lower().split("*")) for glob in globs)
    return re.compile("|".join(f"(?:{part})" for part in parts))


@dataclass(frozen=True, slots=True)
class _Globs:
    always: re.Pattern[str] | None
    auto: re.Pattern[str] | None


class RenderChoice:
    """The render mode and blocked request kinds of each host of one crawl."""

    def __init__(self, config: CrawlConfig, sites: SiteRules) -> None:
        render = config.render
        self._globs = _Globs(_regex(render.hosts), _regex(render.auto))
        self.sites = sites  # the crawl's [[site]] rules, which a rendered page's delay is too
        self._block = frozenset(render.block)
        self._modes: dict[str, Mode] = {}

    @classmethod
    def of(cls, config: CrawlConfig) -> RenderChoice | None:
        """The crawl's choice; None when no host can be rendered (no browser is started)."""
        asked = config.render.hosts or config.render.auto
        if not asked and not any(table.render for table in config.sites):
            return None
        return cls(config, SiteRules.of(config))

    def mode(self, host: str) -> Mode:
        mode = self._modes.get(host)
        if mode is None:
            if len(self._modes) >= 100_000:
                self._modes.clear()
            mode = self._modes[host] = self._mode(host)
        return mode

    def _mode(self, host: str) -> Mode:
        table = self.sites.for_host(host).render
        if table is not None:
            return Mode.AUTO if table == "auto" else Mode.ALWAYS if table else Mode.OFF
        globs = self._globs
        if globs.always is not None and globs.always.fullmatch(host):
            return Mode.ALWAYS
        if globs.auto is not None and globs.auto.fullmatch(host):
            return Mode.AUTO
        return Mode.OFF

    def blocked(self, host: str) -> frozenset[str]:
        """The request kinds a rendered page of ``host`` may not load."""
        table = self.sites.for_host(host).block
        return self._block if table is None else frozenset(table)


def renderer_of(config: CrawlConfig) -> Renderer | None:
    """The crawler process's renderer, or None when the crawl renders no host (then
    Playwright is not even imported). Raises ConfigError when Chromium is missing."""
    choice = RenderChoice.of(config)
    if choice is None:
        return None
    from gossamer.render.renderer import Renderer  # noqa: PLC0415 (the render extra)

    return Renderer(config, choice)


def find_browser(configured: str | None) -> str:
    """The Chromium executable to run: the configured one, else ``chromium`` on the PATH.

    Raises ConfigError (one line for the CLI) when there is none."""
    if configured is not None:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found is not None:
            return found
    raise ConfigError(
        "rendering needs Chromium: install it (apt-get install chromium) or name it with"
        " [render] browser"
    )


def check_renderable(config: CrawlConfig, *, engine: str = "async") -> None:
    """Before a crawl starts: a crawl that renders has Playwright and a browser, and runs on
    an engine that renders, else one clear line (MissingExtraError or ConfigError) instead of
    a failure in every process."""
    if RenderChoice.of(config) is None:
        return
    if engine != "async":
        raise ConfigError(
            "rendering needs the default engine: the threaded engine (the concurrency study's)"
            " fetches plain HTML only"
        )
    require("gossamer crawl --render", "render")
    find_browser(config.render.browser)
