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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from gossamer.config import ScopeConfig
from gossamer.plugins.api import Link, Page, PageResult, Plugin
from gossamer.plugins.loading import load_plugins
from gossamer.plugins.rules import RulesPlugin
from gossamer.stats import CrawlStats

__all__ = [
    "ITEMS_FILE",
    "SLOW_HOOK",
    "CrawlHooks",
    "ErrorLog",
    "Failure",
    "ItemSink",
    "Verdict",
    "crawl_hooks",
]

log = logging.getLogger(__name__)

ITEMS_FILE = "items.jsonl"
ERRORS_FILE = "plugin-errors.tsv"  # in DIR/reports/
SLOW_HOOK = 0.1  # seconds: a call this slow is logged (it holds up its page)
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


@dataclass(frozen=True, slots=True)
class Failure:
    """One hook call that raised (or gave an item that is not JSON)."""

    plugin: Plugin
    hook: str
    url: str
    exc: Exception


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a page's hooks answered: worked out by :meth:`CrawlHooks.judge` (on any thread),
    applied by :meth:`CrawlHooks.apply` (on the thread that records the page)."""

    items: tuple[tuple[str, Any], ...]  # (plugin name, item), in the order given
    drop: frozenset[str]  # links not to follow: dropped by on_page, or refused by keep_link
    admit: tuple[str, ...]  # URLs on_page asked to crawl one hop deeper
    failures: tuple[Failure, ...]
    seconds: float  # spent in the hooks


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

    def judge(self, page: Page, links: Sequence[Link]) -> Verdict:
        """Run every page hook on ``page``, then every link hook on each of ``links`` not
        dropped already. Touches nothing of the crawl's, so it may run on a thread of its own
        while the event loop goes on (``crawling/loop.py`` does so)."""
        started = self._clock()
        items: list[tuple[str, Any]] = []
        drop: set[str] = set()
        admit: list[str] = []
        failures: list[Failure] = []
        for plugin in self._pages:
            result = self._call(plugin, "on_page", page.url, plugin.on_page, page, failures)
            if isinstance(result, PageResult):
                items.extend((plugin.name, item) for item in result.items)
                drop.update(result.drop)
                admit.extend(result.admit)
        if self._links:
            for link in links:
                if link.url not in drop and not self._keeps(link, failures):
                    drop.add(link.url)
        took = self._clock() - started
        return Verdict(tuple(items), frozenset(drop), tuple(admit), tuple(failures), took)

    def _keeps(self, link: Link, failures: list[Failure]) -> bool:
        """Whether every link hook keeps ``link`` (a hook that raises keeps it)."""
        for plugin in self._links:
            call = plugin.keep_link
            if self._call(plugin, "keep_link", link.page_url, call, link, failures) is False:
                return False
        return True

    def apply(self, verdict: Verdict, url: str, host: str) -> None:
        """Write a page's items and count its hooks' failures (on the recording thread)."""
        self.seconds += verdict.seconds
        failures = list(verdict.failures)
        by_name = {plugin.name: plugin for plugin in self._pages}
        for name, item in verdict.items:
            try:
                self._items.write(url, name, item)
            except (TypeError, ValueError) as exc:  # not JSON: the plugin's fault
                failures.append(Failure(by_name[name], "on_page", url, exc))
        for failure in failures:
            self._failed(failure, host)

    def page(self, page: Page, host: str) -> tuple[frozenset[str], tuple[str, ...]]:
        """Run and apply every page hook: the links to drop and the URLs to admit."""
        verdict = self.judge(page, ())
        self.apply(verdict, page.url, host)
        return verdict.drop, verdict.admit

    def keep(self, link: Link, host: str) -> bool:
        """Run and apply every link hook on one link: whether it is kept."""
        failures: list[Failure] = []
        kept = self._keeps(link, failures)
        for failure in failures:
            self._failed(failure, host)
        return kept

    def _call(  # noqa: PLR0917 (private; one call site per hook)
        self,
        plugin: Plugin,
        hook: str,
        url: str,
        run: Callable[[T], Any],
        arg: T,
        failures: list[Failure],
    ) -> Any:
        started = self._clock()
        try:
            return run(arg)
        except Exception as exc:  # a plugin's fault never stops the crawl: it is counted
            failures.append(Failure(plugin, hook, url, exc))
            return None
        finally:
            took = self._clock() - started
            if took >= SLOW_HOOK:
                log.warning("plugin %s: %s took %.2f s on %s", plugin.name, hook, took, url)

    def _failed(self, failure: Failure, host: str) -> None:
        self.failures += 1
        self._stats.record_error("plugin_error", host)
        exc = failure.exc
        log.warning("plugin %s: %s failed on %s: %s: %s", failure.plugin.name, failure.hook,
                    failure.url, type(exc).__name__, exc)  # fmt: skip
        try:
            self._errors.write(failure.plugin.name, failure.hook, failure.url, exc)
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
