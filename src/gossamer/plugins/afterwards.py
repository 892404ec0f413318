"""``gossamer extract DIR``: the extraction rules and plugins run over an archived crawl.

Data flow: ``crawl.db`` (HTML pages that answered 2xx, in WARC order: ``store.export_rows``)
-> each page's response read back from the WARC files -> the same :class:`Page` the crawl's
recorder builds (decoded as it decodes, links parsed as it parses them) -> the same hooks
(``hooks.CrawlHooks``) -> JSON Lines on standard output or in ``--out``. So a rule gives
the same items afterwards as while crawling. The rules and plugins come from ``--config``
and ``--plugin``, or, with neither, from the crawl's own saved settings (``crawl.json``).
Links dropped or URLs admitted by a plugin mean nothing here: nothing is crawled.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gossamer.config import CrawlConfig, ScopeConfig, config_from_json, requested, settle
from gossamer.config_check import check_config
from gossamer.crawling.recorder import HTML_TYPES, PARSE_LIMIT
from gossamer.errors import ConfigError
from gossamer.fetch.fetcher import media_type
from gossamer.index.archive import WarcReader
from gossamer.index.errors import IndexingError
from gossamer.parse import decode_html, parse_html
from gossamer.plugins.api import Page, Plugin
from gossamer.plugins.hooks import ERRORS_FILE, CrawlHooks, ErrorLog, ItemSink
from gossamer.plugins.loading import load_plugins
from gossamer.plugins.rules import RulesPlugin
from gossamer.stats import CrawlStats
from gossamer.store.export_rows import ExportRows, RowFilter

__all__ = ["ExtractReport", "extract_crawl"]

Progress = Callable[[int, int], None]
_SAVED = "crawl.json"


@dataclass(frozen=True, slots=True)
class ExtractReport:
    pages: int  # HTML pages read
    items: int
    errors: int  # hook calls that raised
    unreadable: int  # records missing or damaged

    def summary(self) -> str:
        return f"read {self.pages} pages, wrote {self.items} items, {self.errors} hook errors" + (
            f", {self.unreadable} unreadable records" if self.unreadable else ""
        )


def _scope(folder: Path, config_file: Path | None, plugins: tuple[str, ...]) -> ScopeConfig:
    base = CrawlConfig(seeds=Path("-"), out=folder)
    if config_file is None and not plugins and (folder / _SAVED).is_file():
        try:
            saved = json.loads((folder / _SAVED).read_text(encoding="utf-8"))["config"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read {folder / _SAVED}: {exc}") from exc
        return config_from_json(saved, folder).scope
    config = settle(base, requested(config_file, {}))
    scope = dataclasses.replace(config.scope, plugins=config.scope.plugins + plugins)
    checked = check_config(dataclasses.replace(config, scope=scope), lambda name: f"--{name}")
    if not checked.scope.extract and not checked.scope.plugins:
        raise ConfigError("nothing to extract: give --config with [[extract]] tables, or --plugin")
    return checked.scope


class _Counting(ItemSink):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.count = 0

    def append(self, line: str) -> None:
        super().append(line)
        self.count += 1


def extract_crawl(
    folder: Path,
    config_file: Path | None,
    plugins: tuple[str, ...],
    out: Path | None,
    *,
    progress: Progress | None = None,
) -> ExtractReport:
    """Run the rules and plugins over every archived HTML page of ``folder``."""
    scope = _scope(folder, config_file, plugins)
    found: list[Plugin] = [RulesPlugin(scope.extract)] if scope.extract else []
    found += load_plugins(scope.plugins)
    items = _Counting(out if out is not None else Path("/dev/stdout"))
    hooks = CrawlHooks(
        found,
        items=items,
        errors=ErrorLog(folder / "reports" / ERRORS_FILE),
        stats=CrawlStats(),
    )
    pages = unreadable = 0
    try:
        with (
            ExportRows(folder / "crawl.db") as db,
            WarcReader(folder / "warc") as reader,
        ):
            db.check_crawl()
            where = RowFilter(statuses=((200, 299),))
            total = db.count(where)
            for done, row in enumerate(db.rows(where), 1):
                if progress is not None:
                    progress(done, total)
                if media_type(row.content_type or "") not in HTML_TYPES or row.warc_file is None:
                    continue
                try:
                    response = reader.read(
                        row.warc_file, row.warc_offset or 0, row.warc_length or 0
                    )
                except IndexingError:
                    unreadable += 1
                    continue
                pages += 1
                content = response.content[:PARSE_LIMIT]
                ctype = row.content_type or response.content_type
                parsed = parse_html(content, row.url, ctype)
                html, _ = decode_html(content, ctype)
                links = tuple(link.url for link in parsed.links)
                page = Page(row.url, row.status, ctype, html, links, row.depth or 0)
                hooks.page(page, row.host or "")
    finally:
        hooks.close()
    return ExtractReport(pages, items.count, hooks.failures, unreadable)
