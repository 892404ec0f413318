"""Store stage, the domain registry of seed 001: one row per host, in ``crawl.db`` and in
``reports/domains.tsv``.

Data flow: ``CrawlStats`` (bytes, fetch time, errors, robots.txt status per host) + the rows
of ``crawl.db`` (level-0 URLs, pages per link depth) + the frontier's hosts with requests in
flight or handed out (``in_visit``) -> **DomainRow** -> the report file (``reports``) and the
``domains`` table (``MetadataDB.put_domains``). Both are written from the same rows, so they
always agree.

A host's *level-0 URLs* are its URLs queued at depth 0: the seed forms of the domain (and
where a seed redirected, since a redirect keeps the depth). ``depths`` counts the host's
stored pages per link depth from a seed, written ``depth:count`` separated by spaces.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from gossamer.stats import CrawlStats
from gossamer.store.reads import CrawlReads

__all__ = ["DomainRow", "domain_rows"]


@dataclass(frozen=True, slots=True)
class DomainRow:
    """One host of the registry, as both the table and the report file show it."""

    host: str
    pages: int
    bytes: int
    time_spent: float  # seconds of fetch time, to the millisecond
    errors: int
    robots_status: str
    seeds: tuple[str, ...]  # level-0 URLs, in the order they were queued
    depths: tuple[tuple[int | None, int], ...]  # (link depth, stored pages), shallowest first
    in_visit: bool  # requests to the host in flight, or handed out and not yet done

    @property
    def seeds_text(self) -> str:
        return " ".join(self.seeds)

    @property
    def depths_text(self) -> str:
        return " ".join(f"{'?' if depth is None else depth}:{n}" for depth, n in self.depths)

    def values(self) -> tuple[str, str, int, str, int, float, int, int, str]:
        """The row in the column order of the ``domains`` table (``updated_at`` aside)."""
        return (
            self.host,
            self.seeds_text,
            self.pages,
            self.depths_text,
            int(self.in_visit),
            self.time_spent,
            self.bytes,
            self.errors,
            self.robots_status,
        )


def domain_rows(
    stats: CrawlStats, db: CrawlReads, visiting: Collection[str] = ()
) -> list[DomainRow]:
    """Every host the crawl met, most pages first (then by name)."""
    seeds: defaultdict[str, list[str]] = defaultdict(list)
    for host, url in db.level_zero_urls():
        seeds[host or ""].append(url)
    depths: defaultdict[str, list[tuple[int | None, int]]] = defaultdict(list)
    for host, depth, count in db.pages_by_depth():
        depths[host or ""].append((depth, count))
    hosts = set(stats.hosts) | set(seeds) | set(depths)
    hosts.discard("")
    rows = [
        _row(host, stats, seeds.get(host, ()), depths.get(host, ()), host in visiting)
        for host in hosts
    ]
    rows.sort(key=lambda row: (-row.pages, row.host))
    return rows


def _row(
    host: str,
    stats: CrawlStats,
    seeds: Iterable[str],
    depths: Iterable[tuple[int | None, int]],
    in_visit: bool,
) -> DomainRow:
    entry = stats.hosts.get(host)
    return DomainRow(
        host=host,
        pages=entry.pages if entry else 0,
        bytes=entry.bytes if entry else 0,
        time_spent=round(entry.time_spent, 3) if entry else 0.0,
        errors=entry.errors if entry else 0,
        robots_status=entry.robots_status if entry else "unknown",
        seeds=tuple(seeds),
        depths=tuple(sorted(depths, key=lambda pair: -1 if pair[0] is None else pair[0])),
        in_visit=in_visit,
    )
