"""Store stage, reading ``crawl.db`` for ``gossamer export-tree``: fetched pages and referrers.

Data flow: ``crawl.db`` -> **tree_rows** -> ``cli/tree.py`` -> ``threads.urltree`` (the
Indexed URL Tree of seed 000). The file is opened read-only (:class:`CrawlRecords`), so a
finished crawl, one still running or one in a read-only folder can all be exported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gossamer.errors import StoreError
from gossamer.store.reads import CrawlRecords

__all__ = ["TreePage", "TreeRows"]

_PAGES = (
    "SELECT url, referrer, status, content_type, warc_file, warc_offset FROM pages"
    " WHERE purpose = 'page' ORDER BY fetched_at, url"
)


@dataclass(frozen=True, slots=True)
class TreePage:
    """A fetched page as the tree files it: the URL, where it was found, and its fetch."""

    url: str
    referrer: str | None
    status: int
    content_type: str | None
    warc_file: str | None
    warc_offset: int | None

    def data(self) -> str:
        """The data field of the tree's line: ``status type warcfile:offset`` (``-`` if none)."""
        place = "-" if self.warc_file is None else f"{self.warc_file}:{self.warc_offset}"
        return f"{self.status} {self.content_type or '-'} {place}"


class TreeRows(CrawlRecords):
    """``crawl.db`` opened read-only, with the one query the tree export needs."""

    def __enter__(self) -> TreeRows:
        return self

    def check_crawl(self) -> None:
        """Raise StoreError unless the file holds a Gossamer crawl's tables."""
        tables = {str(name) for (name,) in self._query("SELECT name FROM sqlite_master")}
        if not {"meta", "pages", "urls"} <= tables:
            raise StoreError(f"{self.path} is not a Gossamer crawl database")

    def fetched_pages(self) -> Iterator[TreePage]:
        """Every page fetch (robots.txt and sitemap exchanges aside), in fetch order."""
        for values in self._query(_PAGES):
            yield TreePage(*values)
