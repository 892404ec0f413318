"""Search side, page details: what we know about one crawled URL, for the page-info view.

Data flow: crawl.db + document store + ranks -> **info** -> web. The fetch row and the links
in and out come from ``crawl.db`` through :class:`~gossamer.store.CrawlRecords`, read-only,
so the web UI can run while a crawl is still writing. Same-content pages come from the
document store: exact copies share the ``doc_id`` (body digest), near-duplicates only the
duplicate group (``gossamer.index.near``). The page's versions, every capture the folder
archived (after a recrawl: changes, "not modified" revisits, a 404 saying it is gone), come
from ``DIR/index.cdxj`` (``versions``), newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gossamer.errors import StoreError
from gossamer.rank import host_name
from gossamer.search.engine import SearchEngine
from gossamer.search.errors import SearchError
from gossamer.search.results import HitScores
from gossamer.search.versions import PageVersion, page_versions
from gossamer.store import CrawlRecords, PageRow
from gossamer.store.docstore import DocRow

__all__ = ["LINK_LIMIT", "PageInfo", "page_info"]

LINK_LIMIT = 100  # links listed per direction; the counts are exact


@dataclass(frozen=True, slots=True)
class PageInfo:
    url: str
    host: str
    fetch: PageRow | None  # None when the URL was discovered but never fetched
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
    near_duplicates: tuple[DocRow, ...]  # same duplicate group, different content
    scores: HitScores | None  # for the query the user came from, if any
    query: str
    versions: tuple[PageVersion, ...] = ()  # archived captures, newest first

    @property
    def current(self) -> PageVersion | None:
        """The version whose content counts now: the one ``crawl.db``'s row points at (a
        page not modified since keeps its first capture's row)."""
        fetch = self.fetch
        if fetch is None or fetch.warc_file is None:
            return None
        where = (fetch.warc_file, fetch.warc_offset)
        return next((v for v in self.versions if (v.filename, v.offset) == where), None)


def page_info(
    engine: SearchEngine,
    records: CrawlRecords,
    url: str,
    query: str = "",
    versions: Sequence[PageVersion] | None = None,
) -> PageInfo | None:
    """Everything about ``url``; None when the crawl never met it. ``versions``: its
    captures when the caller has read them already (the UI, off its event loop)."""
    try:
        fetch = records.page(url)
        links_in, in_count = records.links_in(url, LINK_LIMIT)
        links_out, out_count = records.links_out(url, LINK_LIMIT)
    except StoreError as exc:
        raise SearchError(str(exc)) from exc
    doc = engine.store.by_url(url)
    if versions is None:
        versions = page_versions(engine.crawl_dir, url)
    if fetch is None and doc is None and not in_count and not versions:
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
        versions=tuple(versions),
    )
