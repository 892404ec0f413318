"""Rank stage, input: the link graph of ``crawl.db`` as numpy edge arrays, per URL and per host.

Data flow: store (crawl.db ``urls`` + ``links``, read through ``CrawlRecords``) -> **graph**
-> pagerank. Nodes are every row of ``urls``: crawled pages, and link targets that were never
fetched, which become dangling nodes. Self-links are dropped: a page cannot vote for itself.

The graph is what ``crawl.db`` says now, read afresh by every ``gossamer rank``: after a
recrawl a changed page's links are its new version's, and a page gone (404, 410) has none,
so it ranks as a link target never fetched. The crawl deletes a gone page's links; links
still found from a page whose row is a final 4xx (not 429, which asks to come back) are
dropped here too, as a first crawl never records links from such a page.

The host graph has one node per host name (scheme and port ignored) and one edge per
ordered pair of different hosts with at least one link between them. Counting each pair
once, instead of weighting by the number of links, keeps a site that links to another
from every page of a large template from outvoting a site that links once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from gossamer.errors import StoreError
from gossamer.rank.errors import RankError
from gossamer.store import CrawlRecords
from gossamer.urls import host_or_empty

__all__ = ["HostGraph", "UrlGraph", "host_graph", "host_name", "load_url_graph"]


@dataclass(frozen=True, slots=True, eq=False)
class UrlGraph:
    """Nodes ``0 .. n-1`` stand for ``urls.id`` values ``ids``; edges are node numbers."""

    ids: npt.NDArray[np.int64]
    urls: list[str]
    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]

    @property
    def nodes(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True, eq=False)
class HostGraph:
    hosts: list[str]
    host_of: npt.NDArray[np.int64]  # host number of each URL node
    src: npt.NDArray[np.int64]
    dst: npt.NDArray[np.int64]
    links: npt.NDArray[np.int64]  # URL links behind each host edge

    @property
    def nodes(self) -> int:
        return len(self.hosts)


def host_name(url: str) -> str:
    """The host a URL's rank is filed under (``""`` if it is not an absolute URL)."""
    return host_or_empty(url)


def load_url_graph(crawl_db: Path) -> UrlGraph:
    """Read ``urls`` and ``links`` from a crawl database (read-only)."""
    if not crawl_db.is_file():
        raise RankError(f"{crawl_db.parent} has no crawl.db; is it a crawl folder?")
    try:
        with CrawlRecords(crawl_db) as records:
            ids, urls = records.url_nodes()
            edges = records.link_edges()
            gone = {url for url, status, _ in records.page_statuses() if _gone(status)}
    except StoreError as exc:
        raise RankError(f"cannot read the link graph: {exc}") from exc
    # ids are sorted, so a binary search maps each urls.id to its node number.
    src = np.searchsorted(ids, edges[:, 0]).astype(np.int64)
    dst = np.searchsorted(ids, edges[:, 1]).astype(np.int64)
    if gone:
        silent = np.fromiter((url in gone for url in urls), dtype=np.bool_, count=len(urls))
        voting = ~silent[src]
        src, dst = src[voting], dst[voting]
    return UrlGraph(ids, urls, src, dst)


def _gone(status: int | None) -> bool:
    """Whether a page answering ``status`` now is gone: a final 4xx, as the index takes it."""
    return status is not None and 400 <= status < 500 and status != 429


def host_graph(graph: UrlGraph) -> HostGraph:
    numbers: dict[str, int] = {}
    host_of = np.fromiter(
        (numbers.setdefault(host_name(url), len(numbers)) for url in graph.urls),
        dtype=np.int64,
        count=graph.nodes,
    )
    hosts = list(numbers)
    h_src = host_of[graph.src]
    h_dst = host_of[graph.dst]
    between = h_src != h_dst
    keys = h_src[between] * max(len(hosts), 1) + h_dst[between]
    pairs, counts = np.unique(keys, return_counts=True)
    width = max(len(hosts), 1)
    return HostGraph(
        hosts=hosts,
        host_of=host_of,
        src=(pairs // width).astype(np.int64),
        dst=(pairs % width).astype(np.int64),
        links=counts.astype(np.int64),
    )
