"""Running the hooks of one crawl process: pages in, items out, every fault contained.

Data flow: the recorder (``crawling/recorder.py``, shared by every engine and by replay) ->
**hooks** (each plugin's ``on_page``, then ``keep_link`` per link) -> items appended to
``DIR/items.jsonl`` and the links to drop or admit handed back to the recorder. A hook that
raises is counted in the crawl's errors as ``plugin_error`` (so the reports and the progress
line show it), logged with the URL, and written to ``DIR/reports/plugin-errors.tsv``; the
page goes on as if that hook had answered nothing.

Items are appended one line per ``write`` on a file opened with ``O_APPEND``, so the
processes of a ``--workers`` crawl can share the file without mixing their lines, and a
killed crawl leaves whole lines. Replay (``--resume``, ``recover``) runs the hooks again over
the pages it records anew, so an item may appear twice after a crash: at least once, never
lost.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from gossamer.config import ScopeConfig
from gossamer.plugins.api import Link, Page, PageResult, Plugin
from gossamer.plugins.loading import load_plugins
from gossamer.plugins.rules import RulesPlugin
from gossamer.stats import CrawlStats

__all__ = ["ITEMS_FILE", "SLOW_HOOK", "CrawlHooks", "ErrorLog", "ItemSink", "crawl_hooks"]

log = logging.getLogger(__name__)

ITEMS_FILE = "items.jsonl"
ERRORS_FILE = "plugin-errors.tsv"  # in DIR/reports/
SLOW_HOOK = 0.1  # seconds: a call this slow is logged (it held up the crawl's loop)
T = TypeVar("T")


class _Appender:
    """Lines appended to one file, one ``write`` each, opened when the first line comes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def append(self, line: str) -> None:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        os.write(self._fd, line.encode("utf-8", "surrogatepass") + b"\n")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class ItemSink(_Appender):
    """``items.jsonl``: ``{"url": page, "source": plugin or "extract", ...the item}``."""

    def write(self, url: str, source: str, item: Any) -> None:
        if not isinstance(item, dict):
            raise TypeError(f"an item must be a dict, not {type(item).__name__}")
        self.append(json.dumps({"url": url, "source": source, **item}, ensure_ascii=False))


class ErrorLog(_Appender):
    """``plugin-errors.tsv``: time, plugin, hook, URL, exception; one line per failed call."""

    def write(self, plugin: str, hook: str, url: str, exc: BaseException) -> None:
        said = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        self.append("\t".join((time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), plugin,
                               hook, url, said)))  # fmt: skip


def _overrides(plugin: Plugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(Plugin, hook)


class CrawlHooks:
    """The plugins of one crawl process and where their output goes."""

    def __init__(
        self,
        plugins: Sequence[Plugin],
        *,
        items: ItemSink,
        errors: ErrorLog,
        stats: CrawlStats,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._pages = [p for p in plugins if _overrides(p, "on_page")]
        self._links = [p for p in plugins if _overrides(p, "keep_link")]
        self._items = items
        self._errors = errors
        self._stats = stats
        self._clock = clock
        self.seconds = 0.0  # spent in hooks, for the curious (and the tests)
        self.failures = 0

    def page(self, page: Page, host: str) -> tuple[frozenset[str], tuple[str, ...]]:
        """Run every page hook: the links to drop and the URLs to admit they asked for."""
        drop: set[str] = set()
        admit: list[str] = []
        for plugin in self._pages:
            result = self._call(plugin, "on_page", page.url, host, plugin.on_page, page)
            if not isinstance(result, PageResult):
                continue
            for item in result.items:
                try:
                    self._items.write(page.url, plugin.name, item)
                except (TypeError, ValueError) as exc:  # not JSON: the plugin's fault
                    self._failed(plugin, "on_page", page.url, host, exc)
            drop.update(result.drop)
            admit.extend(result.admit)
        return frozenset(drop), tuple(admit)

    def keep(self, link: Link, host: str) -> bool:
        """Whether every link hook keeps ``link`` (a hook that raises keeps it)."""
        for plugin in self._links:
            if (
                self._call(plugin, "keep_link", link.page_url, host, plugin.keep_link, link)
                is False
            ):
                return False
        return True

    def _call(  # noqa: PLR0917 (private; one call site per hook)
        self, plugin: Plugin, hook: str, url: str, host: str, run: Callable[[T], Any], arg: T
    ) -> Any:
        started = self._clock()
        try:
            return run(arg)
        except Exception as exc:  # a plugin's fault never stops the crawl: it is counted
            self._failed(plugin, hook, url, host, exc)
            return None
        finally:
            took = self._clock() - started
            self.seconds += took
            if took >= SLOW_HOOK:
                log.warning("plugin %s: %s took %.2f s on %s", plugin.name, hook, took, url)

    def _failed(self, plugin: Plugin, hook: str, url: str, host: str, exc: Exception) -> None:
        self.failures += 1
        self._stats.record_error("plugin_error", host)
        log.warning("plugin %s: %s failed on %s: %s: %s", plugin.name, hook, url,
                    type(exc).__name__, exc)  # fmt: skip
        try:
            self._errors.write(plugin.name, hook, url, exc)
        except OSError as error:
            log.error("cannot write %s: %s", self._errors.path, error)

    def close(self) -> None:
        self._items.close()
        self._errors.close()


def crawl_hooks(scope: ScopeConfig, folder: Path, stats: CrawlStats) -> CrawlHooks | None:
    """The hooks a crawl's scope asks for (its ``[[extract]]`` rules first, then its plugins),
    writing into ``folder``; None when it asks for none."""
    if not scope.extract and not scope.plugins:
        return None
    plugins: list[Plugin] = [RulesPlugin(scope.extract)] if scope.extract else []
    plugins += load_plugins(scope.plugins)
    return CrawlHooks(
        plugins,
        items=ItemSink(folder / ITEMS_FILE),
        errors=ErrorLog(folder / "reports" / ERRORS_FILE),
        stats=stats,
    )
