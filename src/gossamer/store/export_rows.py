"""Store stage, reading ``crawl.db`` for ``gossamer export``: page rows with their out-links.

Data flow: ``crawl.db`` -> **export_rows** -> ``gossamer.export`` (records, filters, writers).
The file is opened read-only (:class:`CrawlRecords`), so a finished crawl, one still running
or one in a read-only folder can all be exported. Rows stream out in WARC order (file, then
offset), so the records they point at are read sequentially; the filters that need no WARC
record (site, status, time) are applied here in SQL, before anything is read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gossamer.errors import StoreError
from gossamer.store.reads import CrawlRecords

__all__ = ["ExportRow", "ExportRows", "RowFilter"]

# The page's links out, one URL per line: a correlated subquery over the links primary key
# (src, dst), so memory stays one page's links whatever the crawl's size.
_PAGES = """
SELECT p.url, p.status, p.fetched_at, p.content_type, p.host, p.depth, p.doc_id,
       p.warc_file, p.warc_offset, p.warc_length, p.error, {render},
       (SELECT group_concat(d.url, char(10)) FROM links AS l JOIN urls AS d ON d.id = l.dst
        WHERE l.src = u.id) AS links_out
FROM pages AS p LEFT JOIN urls AS u ON u.url = p.url
WHERE p.purpose = 'page'{where}
ORDER BY p.warc_file IS NULL, p.warc_file, p.warc_offset, p.url
"""
_COUNT = "SELECT count(*) FROM pages AS p WHERE p.purpose = 'page'{where}"


@dataclass(frozen=True, slots=True)
class RowFilter:
    """What a row must be to be exported, as far as ``crawl.db`` alone can tell."""

    hosts: tuple[str, ...] = ()  # the host or one of its subdomains; () = any
    statuses: tuple[tuple[int, int], ...] = ()  # inclusive ranges; () = any
    since: float | None = None  # fetched at or after (seconds since the epoch)

    def sql(self) -> tuple[str, tuple[object, ...]]:
        """The extra ``AND ...`` conditions and their parameters."""
        parts: list[str] = []
        params: list[object] = []
        if self.hosts:
            alternatives = []
            for host in self.hosts:
                alternatives.append("(p.host = ? OR p.host LIKE ? ESCAPE '\\')")
                escaped = host.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                params += [host, f"%.{escaped}"]
            parts.append("(" + " OR ".join(alternatives) + ")")
        if self.statuses:
            parts.append("(" + " OR ".join("p.status BETWEEN ? AND ?" for _ in self.statuses) + ")")
            params += [bound for pair in self.statuses for bound in pair]
        if self.since is not None:
            parts.append("p.fetched_at >= ?")
            params.append(self.since)
        return "".join(f" AND {part}" for part in parts), tuple(params)


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One ``pages`` row (purpose 'page') and the URLs it links to."""

    url: str
    status: int
    fetched_at: float | None
    content_type: str | None
    host: str | None
    depth: int | None
    doc_id: str | None
    warc_file: str | None
    warc_offset: int | None
    warc_length: int | None
    error: str | None
    links: tuple[str, ...]
    render: str | None = None  # pages.render: a rendered page's text is its DOM's


class ExportRows(CrawlRecords):
    """``crawl.db`` opened read-only, with the queries the export needs."""

    def __enter__(self) -> ExportRows:
        return self

    def check_crawl(self) -> None:
        """Raise StoreError unless the file holds a Gossamer crawl's tables."""
        tables = {str(name) for (name,) in self._query("SELECT name FROM sqlite_master")}
        if not {"meta", "pages", "urls", "links"} <= tables:
            raise StoreError(f"{self.path} is not a Gossamer crawl database")

    def count(self, where: RowFilter) -> int:
        """How many rows :meth:`rows` gives for ``where`` (for the progress bar)."""
        clause, params = where.sql()
        return self._count(_COUNT.format(where=clause), params)

    def rows(self, where: RowFilter) -> Iterator[ExportRow]:
        """Every page row ``where`` lets through, in WARC order, with its links out."""
        clause, params = where.sql()
        sql = _PAGES.format(where=clause, render=self.page_column("render", "p"))
        for values in self._query(sql, params):
            (
                url,
                status,
                fetched_at,
                mime,
                host,
                depth,
                doc_id,
                wfile,
                offset,
                length,
                error,
                render,
                links,
            ) = values
            yield ExportRow(
                url, status, fetched_at, mime, host, depth, doc_id, wfile, offset, length, error,
                tuple(links.split("\n")) if links else (), render,
            )  # fmt: skip
