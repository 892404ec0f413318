"""Crawl folders holding the link graph of a generated test web, made without a crawl.

``gossamer.testweb`` builds the web (hosts, pages, the links of each page, a 404); its
HTML pages become the pages of a crawl folder (``fake_crawl.make_crawl``), whole or split
by host between two folders, as the workers of a shared crawl split it.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from gossamer.testweb import WebSpec, build_web
from gossamer.testweb.model import HTML_KINDS, Kind

from ..index.fake_crawl import FakePage, html, make_crawl


def web_pages(hosts: int = 6, pages: int = 15) -> list[FakePage]:
    web = build_web(
        WebSpec(hosts=hosts, pages_per_host=pages, special_hosts=False, crawl_delay_hosts=False)
    )
    found: list[FakePage] = []
    for (host, target), resource in sorted(web.resources.items()):
        url = f"http://{host}{target}"
        if resource.kind in HTML_KINDS:
            links = tuple(f"http://{link.host}{link.path}" for link in resource.links)
            found.append(FakePage(url, html(target, f"page {target} of {host}"), links=links))
        elif resource.kind is Kind.ERROR:  # gone: a 404 casts no votes
            found.append(FakePage(url, b"gone", status=resource.status))
    return found


def worker_of(url: str, workers: int) -> int:
    host = url.split("/")[2]
    return zlib.crc32(host.encode()) % workers


def web_crawls(folder: Path, workers: int = 2) -> tuple[Path, list[Path]]:
    """The test web as one crawl folder, and as ``workers`` folders split by host."""
    pages = web_pages()
    whole = make_crawl(folder / "whole", pages)
    parts = [
        make_crawl(folder / f"worker-{k}", [p for p in pages if worker_of(p.url, workers) == k])
        for k in range(workers)
    ]
    return whole, parts
