"""The plugin API: what a hook is given, what it may answer, and the class a plugin extends.

Data flow: the recorder (a fetched HTML page that answered 2xx, live or replayed) -> a
:class:`Page` -> each plugin's :meth:`Plugin.on_page` -> a :class:`PageResult` (items for
``DIR/items.jsonl``, links to drop, URLs to admit); then each link of the page -> a
:class:`Link` -> :meth:`Plugin.keep_link` (False drops it) -> admission.

A plugin is a small class::

    from gossamer.plugins import Link, Page, PageResult, Plugin

    class Prices(Plugin):
        name = "prices"

        def on_page(self, page: Page) -> PageResult | None:
            node = page.tree().css_first(".price")
            if node is None:
                return None
            return PageResult(items=({"price": node.text(strip=True)},))

        def keep_link(self, link: Link) -> bool:
            return "/cart" not in link.url

    plugin = Prices()

loaded from its file (``plugins = ["prices.py"]`` in the config, or ``gossamer extract
--plugin prices.py``) or from the ``gossamer.plugins`` entry point group of an installed
package (``plugins = ["prices"]``; the entry point names the class or an instance).

**Where hooks run.** In the crawl process that recorded the page, on the step that reads its
links: the event loop's thread for the one-process, ``--workers`` and Redis crawls, the store
lock's holder for the study's threads. A hook is a plain function of the page it is given: it
must not do I/O (no requests, no sleeping, no files but through its items), so it blocks
the loop no longer than the page's own parse does. That is what keeps the crawl's order and
its end exact: the links a hook drops or adds are known before the page's exchange is
committed and before the crawl can decide that no work is left. A call slower than
``hooks.SLOW_HOOK`` (0.1 s) is logged with the URL; an exception is caught, counted
(``plugin_error``), logged with the URL and written to ``DIR/reports/plugin-errors.tsv``,
and the page and the crawl go on as if that hook had answered nothing (its links kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from gossamer.parse.bounded import parse_bounded

__all__ = ["Link", "Page", "PageResult", "Plugin"]


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched HTML page that answered 2xx, as hooks see it."""

    url: str  # the URL fetched (after redirects: each hop is its own fetch)
    status: int
    content_type: str
    html: str  # the body decoded (its first 4 MiB, what the crawl parses for links)
    links: tuple[str, ...]  # its links, canonical, in document order
    depth: int  # link hops from a seed

    def tree(self) -> LexborHTMLParser:
        """The page parsed (selectolax's Lexbor tree), within the crawl's nesting bound."""
        return parse_bounded(self.html).tree


@dataclass(frozen=True, slots=True)
class Link:
    """One link found on a page."""

    url: str  # canonical form
    page_url: str  # the page it was found on
    depth: int  # the depth the target would be crawled at


@dataclass(frozen=True, slots=True)
class PageResult:
    """What a page hook answers: all optional."""

    items: tuple[Mapping[str, Any], ...] = ()  # JSON-able tables, one line each in items.jsonl
    drop: frozenset[str] = field(default_factory=frozenset)  # links of the page not to follow
    admit: tuple[str, ...] = ()  # more URLs to crawl (absolute), one hop deeper than the page


class Plugin:
    """Extend this and override either hook; the defaults do nothing and keep every link."""

    name: str = "plugin"

    def on_page(self, page: Page) -> PageResult | None:
        """Called once for every fetched HTML page that answered 2xx."""
        del page
        return None

    def keep_link(self, link: Link) -> bool:
        """Called for every link of such a page (after ``on_page``); False drops it."""
        del link
        return True
