"""Store stage, reading ``crawl.db``: every query the crawl, the reports and the search side ask.

Data flow: ``crawl.db`` -> **reads** -> reports, resume, rank (the link graph as id arrays),
search and web (a page's row, its links, where its cached copy is). :class:`CrawlReads` holds
the queries over one connection; ``MetadataDB`` is one (reading its own writes), and
:class:`CrawlRecords` opens the file read-only, for any other reader: the web UI while a
crawl is still writing, a report written on another thread, ``gossamer rank``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gossamer.errors import StoreError
from gossamer.store.connect import connect_readonly, faults
from gossamer.store.rows import PAGE_COLUMNS, PageRow, Schedule
from gossamer.store.schema import UNFETCHED

__all__ = ["BACKLOG", "BacklogRow", "CrawlReads", "CrawlRecords", "PageFacts", "recorded_files"]

_FETCH_ROWS = 1000  # rows per fetchmany when streaming query results
_GRAPH_ROWS = 100_000  # edges per fetchmany when loading the link graph
_IN_LIST = 500  # URLs per ``IN (...)`` query, well under SQLite's bound-parameter limit

# host, status, error, length, elapsed, fetched_at, url, kind ("page", "robots", "sitemap"
# or "other")
PageFacts = tuple[str, int, str | None, int | None, float | None, float | None, str, str]

# Spilled, unfetched URLs of a host with ids above a given one, in order; for a page a
# recrawl wants again, its validators (etag, last_modified) and 1.
BACKLOG = (
    "SELECT id, urls.url, depth, referrer, s.etag, s.last_modified, s.wanted_at IS NOT NULL"
    " FROM urls LEFT JOIN schedule AS s ON s.url = urls.url"
    f" WHERE host = ? AND spilled = 1 AND id > ? AND {UNFETCHED} ORDER BY id LIMIT ?"
)
# id, url, depth, referrer, etag, last_modified, wanted again (0 or 1)
BacklogRow = tuple[int, str, int, str | None, str | None, str | None, int]
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


class CrawlReads:
    """Every read query on ``crawl.db``, over one connection."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path
        self._page_select: str | None = None
        self._pages_present: frozenset[str] | None = None

    def _before_read(self) -> None:
        """Called before each query; a writer makes its buffered rows visible here."""

    # -- pages ----------------------------------------------------------------------------

    def page(self, url: str) -> PageRow | None:
        """``url``'s fetch row: status, type, and where its cached copy is in the WARC files."""
        if self._page_select is None:
            self._page_select = self._page_columns()
        for values in self._query(f"SELECT {self._page_select} FROM pages WHERE url = ?", (url,)):
            return PageRow(*values)
        return None

    def _page_columns(self) -> str:
        """``PAGE_COLUMNS``, each as :meth:`page_column` gives it."""
        return ", ".join(self.page_column(name) for name in PAGE_COLUMNS.split(", "))

    def page_column(self, name: str, table: str = "") -> str:
        """``name`` of ``pages`` for a SELECT list (``table``: its alias), NULL if the file
        has no such column yet: a crawl.db of an older schema opened read-only (search,
        serve, export) is not upgraded (``render`` came with schema 6)."""
        if self._pages_present is None:
            with faults("read", self.path):
                rows = self._conn.execute("PRAGMA table_info(pages)").fetchall()
            self._pages_present = frozenset(str(row[1]) for row in rows)
        if name in self._pages_present:
            return f"{table}.{name}" if table else name
        return f"NULL AS {name}"

    def stored_pages(self, urls: Collection[str]) -> set[str]:
        """Which of ``urls`` were fetched with a 2xx answer and archived: the URLs whose cached
        copy shows the page itself. Asked in batches, for all the links of a page at once."""
        wanted = list(dict.fromkeys(urls))
        found: set[str] = set()
        for start in range(0, len(wanted), _IN_LIST):
            batch = wanted[start : start + _IN_LIST]
            sql = (
                f"SELECT url FROM pages WHERE url IN ({', '.join('?' * len(batch))})"
                " AND warc_file IS NOT NULL AND status BETWEEN 200 AND 299"
            )
            found.update(str(url) for (url,) in self._query(sql, tuple(batch)))
        return found

    def crawled_urls(self) -> Iterator[str]:
        for (url,) in self._query("SELECT url FROM pages ORDER BY fetched_at, url"):
            yield url

    def page_statuses(self) -> Iterator[tuple[str, int, str | None]]:
        """``(url, status, error)`` per fetched URL, in fetch order."""
        yield from self._query("SELECT url, status, error FROM pages ORDER BY fetched_at, url")

    def page_facts(self) -> Iterator[PageFacts]:
        """Per row, what the statistics of each domain are counted from (see ``PageFacts``).

        ``kind`` is "page" for a stored page (2xx, no error), "robots" for a robots.txt
        exchange, "sitemap" for a sitemap's, "resource" for a rendered page's own request,
        else "other".
        """
        yield from self._query(
            "SELECT host, status, error, length, elapsed, fetched_at, url,"
            " CASE WHEN purpose IN ('robots', 'sitemap', 'resource') THEN purpose"
            " WHEN status BETWEEN 200 AND 299 AND error IS NULL THEN 'page'"
            " ELSE 'other' END FROM pages"
        )

    def render_counts(self) -> dict[str, int]:
        """Pages by ``render`` (rendered, unsettled, failed, hint), those with none left out."""
        sql = (
            "SELECT render, count(*) FROM pages WHERE render IS NOT NULL AND purpose = 'page'"
            " GROUP BY render"
        )
        return {str(kind): int(count) for kind, count in self._query(sql)}

    def page_count(self) -> int:
        return self._count("SELECT count(*) FROM pages")

    def level_zero_urls(self) -> Iterator[tuple[str | None, str]]:
        """``(host, url)`` of every URL queued at depth 0 (seeds, and where they redirected;
        sitemaps aside), in the order queued: seed 001's level-0 URLs of each domain."""
        yield from self._query(
            "SELECT host, url FROM urls WHERE depth = 0 AND discovered_at IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM sitemaps WHERE sitemaps.url = urls.url) ORDER BY id"
        )

    def pages_by_depth(self) -> Iterator[tuple[str | None, int | None, int]]:
        """``(host, depth, stored pages)``: pages counted as ``page_facts`` counts them."""
        yield from self._query(
            "SELECT host, depth, count(*) FROM pages WHERE purpose = 'page'"
            " AND status BETWEEN 200 AND 299 AND error IS NULL GROUP BY host, depth"
        )

    # -- rows against the WARC files (resume, recover) -------------------------------------

    def recorded_files(self) -> set[str]:
        """Names of the WARC files that ``pages`` rows point into."""
        sql = "SELECT DISTINCT warc_file FROM pages WHERE warc_file IS NOT NULL"
        return {str(name) for (name,) in self._query(sql)}

    def recorded_records(self, warc_file: str) -> dict[int, tuple[str, int]]:
        """The rows pointing into one WARC file: offset -> (url, compressed length)."""
        sql = "SELECT warc_offset, url, warc_length FROM pages WHERE warc_file = ?"
        return {
            int(offset): (str(url), int(length or 0))
            for offset, url, length in self._query(sql, (warc_file,))
        }

    def page_target(self, url: str) -> tuple[float, str | None, int | None] | None:
        """``(fetched_at, warc_file, warc_offset)`` of ``url``'s committed row, if any.

        Unlike the other readers this does not wait for rows still buffered: a caller
        replaying many records keeps track of the ones it added itself.
        """
        sql = "SELECT fetched_at, warc_file, warc_offset FROM pages WHERE url = ?"
        with faults("read", self.path):
            row = self._conn.execute(sql, (url,)).fetchone()
        return None if row is None else (float(row[0] or 0.0), row[1], row[2])

    # -- discovered URLs and the frontier's disk backlog ------------------------------------

    def uncrawled_urls(self) -> Iterator[str]:
        """URLs queued but never fetched, in discovery order."""
        for (url,) in self._query(f"SELECT url FROM urls WHERE {UNFETCHED} ORDER BY id"):
            yield url

    def queued_urls(self) -> Iterator[str]:
        """Every URL ever queued or fetched (the seen-set's content)."""
        for (url,) in self._query(
            "SELECT url FROM urls WHERE discovered_at IS NOT NULL UNION SELECT url FROM pages"
        ):
            yield url

    def unqueued_links(self) -> Iterator[tuple[str, int, str]]:
        """Link targets of fetched pages that were never queued: ``(url, depth, referrer)``,
        one hop below the shallowest page linking to them.

        Most were refused by the scope rules; with ``--workers``, some were handed to the
        worker owning their host, which a crash stopped before it recorded them.
        """
        yield from self._query(
            "SELECT d.url, min(p.depth) + 1, min(p.url) FROM urls AS d"
            " JOIN links ON links.dst = d.id JOIN urls AS s ON s.id = links.src"
            " JOIN pages AS p ON p.url = s.url"
            " WHERE d.discovered_at IS NULL AND p.purpose = 'page' GROUP BY d.url"
        )

    def discovered_count(self) -> int:
        return self._count("SELECT count(*) FROM urls WHERE discovered_at IS NOT NULL")

    def backlog(self, host: str, after: int, limit: int) -> list[BacklogRow]:
        """Spilled, unfetched URLs of ``host`` with id above ``after`` (``BacklogRow``)."""
        return list(self._query(BACKLOG, (host, after, limit)))

    def urls_per_host(self) -> dict[str, int]:
        """URLs ever queued per host: what each host has used of the per-host budget."""
        return {
            str(host): int(count)
            for host, count in self._query(
                "SELECT host, count(*) FROM urls WHERE discovered_at IS NOT NULL GROUP BY host"
            )
        }

    def backlog_counts(self) -> dict[str, int]:
        """Spilled, unfetched URLs per host (after ``prepare_resume``)."""
        return {
            str(host): int(count)
            for host, count in self._query(
                f"SELECT host, count(*) FROM urls WHERE spilled = 1 AND {UNFETCHED} GROUP BY host"
            )
        }

    # -- the link graph -------------------------------------------------------------------

    def links(self) -> Iterator[tuple[str, str]]:
        yield from self._query("SELECT from_url, to_url FROM link_urls")

    def link_count(self) -> int:
        return self._count("SELECT count(*) FROM links")

    def links_out(self, url: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` URLs ``url`` links to, in order, and how many there are."""
        return self._urls(_OUT, url, limit), self._count(_OUT_COUNT, (url,))

    def links_in(self, url: str, limit: int) -> tuple[list[str], int]:
        """Up to ``limit`` URLs linking to ``url``, in order, and how many there are."""
        return self._urls(_IN, url, limit), self._count(_IN_COUNT, (url,))

    def url_nodes(self) -> tuple[npt.NDArray[np.int64], list[str]]:
        """Every ``urls`` row as the link graph's nodes: ids (ascending) and URLs."""
        ids: list[int] = []
        urls: list[str] = []
        for node_id, url in self._query("SELECT id, url FROM urls ORDER BY id"):
            ids.append(node_id)
            urls.append(url)
        return np.array(ids, dtype=np.int64), urls

    def link_edges(self) -> npt.NDArray[np.int64]:
        """Every link but self-links as ``(src, dst)`` id pairs, one row each."""
        self._before_read()
        parts: list[npt.NDArray[np.int64]] = []
        with faults("read", self.path):
            cursor = self._conn.execute("SELECT src, dst FROM links WHERE src != dst")
            while rows := cursor.fetchmany(_GRAPH_ROWS):
                parts.append(np.array(rows, dtype=np.int64).reshape(-1, 2))
        return np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)

    # -- robots.txt answers and saved values ------------------------------------------------

    def robots_answers(self) -> Iterator[tuple[str, int, bytes, float]]:
        """Every origin's latest robots.txt answer: (origin, status, body, fetched_at)."""
        yield from self._query("SELECT origin, status, body, fetched_at FROM robots")

    def sitemaps(self) -> Iterator[tuple[str, str, int]]:
        """Every sitemap found: ``(url, owner host, level)``."""
        yield from self._query("SELECT url, owner, level FROM sitemaps")

    def lastmod(self, url: str) -> str | None:
        """The ``<lastmod>`` a sitemap gave for ``url``, if any listed it with one."""
        for (value,) in self._query("SELECT lastmod FROM sitemap_entries WHERE url = ?", (url,)):
            return str(value) if value is not None else None
        return None

    # -- recrawl ---------------------------------------------------------------------------

    def schedule(self, url: str) -> Schedule | None:
        """The page's recrawl schedule row, if it was ever fetched as a page."""
        for values in self._query("SELECT * FROM schedule WHERE url = ?", (url,)):
            return Schedule(*values)
        return None

    def wanted_revisits(self) -> Iterator[tuple[Any, ...]]:
        """The pages a recrawl wants asked, with what a revisit job carries: ``(url, host,
        depth, referrer, etag, last_modified, interval, changed_at, doc_id, length,
        warc_file, warc_offset, warc_length)``."""
        yield from self._query(
            "SELECT s.url, p.host, p.depth, p.referrer, s.etag, s.last_modified, s.interval,"
            " s.changed_at, p.doc_id, p.length, p.warc_file, p.warc_offset, p.warc_length"
            " FROM schedule AS s JOIN pages AS p USING (url) WHERE s.wanted_at IS NOT NULL"
        )

    def next_due(self) -> float | None:
        """When the earliest page of the schedule is due (None: no page has a schedule). A
        page a recrawl still wants (a robots.txt left deferred, say) is not what is due."""
        for (due,) in self._query("SELECT min(due_at) FROM schedule WHERE wanted_at IS NULL"):
            return None if due is None else float(due)
        return None

    def wanted_count(self) -> int:
        """Pages a recrawl still wants asked."""
        return self._count("SELECT count(*) FROM schedule WHERE wanted_at IS NOT NULL")

    def sitemap_lastmods(self) -> Iterator[tuple[str, str, float]]:
        """``(url, <lastmod> text, last fetch)`` of every fetched page a sitemap dated."""
        yield from self._query(
            "SELECT e.url, e.lastmod, s.checked_at FROM sitemap_entries AS e"
            " JOIN schedule AS s USING (url) WHERE e.lastmod IS NOT NULL"
        )

    def recrawl_counts(self, since: float) -> dict[str, int]:
        """Answers of pages asked since ``since`` (a recrawl's start), by answer; ``due``: the
        pages that recrawl asked or still wants; ``bytes_saved``: the stored bytes of the
        pages that answered 304 (what a full fetch would have sent again)."""
        counts = dict(
            self._query(
                "SELECT answer, count(*) FROM schedule WHERE checked_at >= ? AND wanted_at IS"
                " NULL GROUP BY answer",
                (since,),
            )
        )
        counts["due"] = self._count(
            "SELECT count(*) FROM schedule WHERE wanted_at IS NOT NULL"
            " OR (checked_at >= ? AND answer != 'new')",
            (since,),
        )
        # What the recrawl's requests brought, against the stored copies of the same pages.
        counts["bytes"], counts["bytes_full"] = next(
            self._query(
                "SELECT coalesce(sum(s.received), 0), coalesce(sum(p.length), 0)"
                " FROM schedule AS s JOIN pages AS p USING (url)"
                " WHERE s.checked_at >= ? AND s.answer != 'new'",
                (since,),
            )
        )
        counts["bytes_saved"] = self._count(
            "SELECT coalesce(sum(p.length), 0) FROM schedule AS s JOIN pages AS p USING (url)"
            " WHERE s.checked_at >= ? AND s.answer = 'not_modified'",
            (since,),
        )
        return counts

    def get_meta(self, key: str) -> str | None:
        for (value,) in self._query("SELECT value FROM meta WHERE key = ?", (key,)):
            return str(value)
        return None

    # -- internals -------------------------------------------------------------------------

    def _urls(self, sql: str, url: str, limit: int) -> list[str]:
        return [str(u) for (u,) in self._query(sql, (url, limit))]

    def _count(self, sql: str, params: tuple[object, ...] = ()) -> int:
        for (count,) in self._query(sql, params):
            return int(count)
        return 0

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> Iterator[Any]:
        self._before_read()
        yield from self._rows(sql, params)

    def _rows(self, sql: str, params: tuple[object, ...] = ()) -> Iterator[Any]:
        # Rows come back untyped from SQLite; each caller knows the shape of its columns.
        with faults("read", self.path):
            cursor = self._conn.execute(sql, params)
            while rows := cursor.fetchmany(_FETCH_ROWS):
                yield from rows


class CrawlRecords(CrawlReads):
    """``crawl.db`` opened read-only: it works while a crawl writes, and in a read-only folder."""

    def __init__(self, crawl_db: Path) -> None:
        if not crawl_db.is_file():
            raise StoreError(f"{crawl_db.parent} has no crawl.db")
        with faults("open", crawl_db):
            # Usable from any one thread at a time (the web UI's handlers, a report thread).
            conn = connect_readonly(crawl_db, threads=True)
        super().__init__(conn, crawl_db)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CrawlRecords:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def consistent(self) -> Iterator[None]:
        """Every query inside sees the same state of the file, whatever is committed meanwhile."""
        with faults("read", self.path):
            self._conn.execute("BEGIN")
        try:
            yield
        finally:
            self._conn.execute("COMMIT")


def recorded_files(crawl_db: Path) -> set[str]:
    """The WARC files ``crawl_db``'s rows point into, read without writing anything; empty when
    it is missing or cannot be read (a damaged database is refused when it is opened)."""
    try:
        with CrawlRecords(crawl_db) as records:
            return records.recorded_files()
    except StoreError:
        return set()
