"""Search side, page details: what we know about one crawled URL, for the page-info view.

Data flow: crawl.db + document store + ranks -> **info** -> web. ``CrawlRecords`` reads
``crawl.db`` read-only (the fetch row, links in and out), so the web UI can run while a
crawl is still writing. Same-content pages come from the document store: exact copies share
the ``doc_id``, near copies the simhash group.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from gossamer.index import DocRow
from gossamer.index.access import readonly_uri
from gossamer.rank import host_name
from gossamer.search.engine import SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.results import HitScores

__all__ = ["LINK_LIMIT", "CrawlRecords", "FetchRecord", "PageInfo", "page_info"]

LINK_LIMIT = 100  # links listed per direction; the counts are exact


@dataclass(frozen=True, slots=True)
class FetchRecord:
    """The columns of a ``pages`` row that the search side shows or follows."""

    url: str
    url_id: str
    doc_id: str | None
    status: int
    content_type: str | None
    length: int | None
    fetched_at: float | None
    elapsed: float | None
    depth: int | None
    referrer: str | None
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    error: str | None


# Named columns, not *, so columns the store adds later do not break this reader.
_PAGE_COLUMNS = ", ".join(f.name for f in fields(FetchRecord))
_OUT = """
SELECT d.url FROM links JOIN urls AS s ON s.id = links.src JOIN urls AS d ON d.id = links.dst
WHERE s.url = ? ORDER BY d.url LIMIT ?
"""
_IN = """
SELECT s.url FROM links JOIN urls AS s ON s.id = links.src JOIN urls AS d ON d.id = links.dst
WHERE d.url = ? ORDER BY s.url LIMIT ?
"""
_OUT_COUNT = "SELECT count(*) FROM links WHERE src = (SELECT id FROM urls WHERE url = ?)"
_IN_COUNT = "SELECT count(*) FROM links WHERE dst = (SELECT id FROM urls WHERE url = ?)"


class CrawlRecords:
    """Read-only queries on ``crawl.db``."""

    def __init__(self, crawl_db: Path) -> None:
        self._path = crawl_db
        if not crawl_db.is_file():
            raise SearchError(f"{crawl_db.parent} has no crawl.db")
        try:
            uri = readonly_uri(crawl_db)  # works in a read-only folder too
            self._conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise SearchError(f"cannot open {crawl_db}: {exc}") from exc

    def close(self) -> None:
        self._conn.close()

    def page(self, url: str) -> FetchRecord | None:
        row = self._one(f"SELECT {_PAGE_COLUMNS} FROM pages WHERE url = ?", (url,))
        return None if row is None else FetchRecord(*row)

    def links_out(self, url: str, limit: int = LINK_LIMIT) -> tuple[list[str], int]:
        return self._urls(_OUT, url, limit), self._count(_OUT_COUNT, url)

    def links_in(self, url: str, limit: int = LINK_LIMIT) -> tuple[list[str], int]:
        return self._urls(_IN, url, limit), self._count(_IN_COUNT, url)

    def _urls(self, sql: str, url: str, limit: int) -> list[str]:
        try:
            return [str(u) for (u,) in self._conn.execute(sql, (url, limit))]
        except sqlite3.Error as exc:
            raise SearchError(f"cannot read {self._path}: {exc}") from exc

    def _count(self, sql: str, url: str) -> int:
        row = self._one(sql, (url,))
        return int(row[0]) if row else 0

    def _one(self, sql: str, params: tuple[object, ...]) -> Any:
        try:
            return self._conn.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise SearchError(f"cannot read {self._path}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class PageInfo:
    url: str
    host: str
    fetch: FetchRecord | None  # None when the URL was discovered but never fetched
    doc: DocRow | None  # None when it is not in the index
    pagerank: float
    pagerank_relative: float  # times the average URL (1.0 = average)
    host_rank: float
    host_rank_relative: float
    links_in: tuple[str, ...]
    links_in_count: int
    links_out: tuple[str, ...]
    links_out_count: int
    same_content: tuple[DocRow, ...]  # exact copies (same doc_id), other URLs
    near_duplicates: tuple[DocRow, ...]  # same simhash group, different content
    scores: HitScores | None  # for the query the user came from, if any
    query: str


def page_info(
    engine: SearchEngine, records: CrawlRecords, url: str, query: str = ""
) -> PageInfo | None:
    """Everything about ``url``; None when the crawl never met it."""
    fetch = records.page(url)
    doc = engine.store.by_url(url)
    links_in, in_count = records.links_in(url)
    links_out, out_count = records.links_out(url)
    if fetch is None and doc is None and not in_count:
        return None
    ranks = engine.ranks
    host = host_name(url)
    pagerank = ranks.of_url(url) if ranks else 0.0
    host_rank = ranks.of_host(host) if ranks else 0.0
    same: list[DocRow] = []
    near: list[DocRow] = []
    if doc is not None and doc.indexed:
        for other in engine.store.group_members(doc.group_id):
            if other.url == url:
                continue
            exact = doc.doc_id is not None and other.doc_id == doc.doc_id
            (same if exact else near).append(other)
    return PageInfo(
        url=url,
        host=host,
        fetch=fetch,
        doc=doc,
        pagerank=pagerank,
        pagerank_relative=pagerank * ranks.urls if ranks else 0.0,
        host_rank=host_rank,
        host_rank_relative=host_rank * ranks.hosts if ranks else 0.0,
        links_in=tuple(links_in),
        links_in_count=in_count,
        links_out=tuple(links_out),
        links_out_count=out_count,
        same_content=tuple(same),
        near_duplicates=tuple(near),
        scores=engine.scores_for(url, query) if query.strip() else None,
        query=query,
    )
