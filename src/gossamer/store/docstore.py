"""Store stage, the index's bookkeeping: ``DIR/index/docs.db``, one row per page indexed.

Data flow: crawl.db -> **document store** <-> full-text index -> search. It lives in ``store``
with ``crawl.db``'s queries because it reads that file too (``pending``, ``gone``). The store
answers four questions:

* which fetched pages are new since the last run (incremental indexing after a resumed
  crawl or a recrawl): a page is pending when its ``url_id`` has no row, or its row has an
  older fetch time (the page changed and was archived again);
* which indexed pages are gone: their ``pages`` row now says 404, 410 or another final 4xx,
  or a redirect, or the row is gone (``gone``). A 429, a 5xx or a network error is taken for
  a passing fault (a recrawl keeps the old row for those anyway), and the page stays;
* which pages a new one may duplicate: exact duplicates share ``doc_id`` (SHA-1 of the
  content, ``exact_group``); near-duplicate candidates share a simhash band (``bands``
  table, ``simhash_neighbours``) or a MinHash-LSH band key (``lsh`` table,
  ``minhash_neighbours``). Which candidate really is a near-duplicate, and so the group a
  page joins, is decided by ``gossamer.index.near``; a group is named by the ``num`` of its
  first member, and keeps that name when the member is replaced or gone;
* for the search side, how large each group is, how many of its pages have each content,
  and which pages are in it.

Pages that were looked at but not indexed (noindex, no text) get a row too, with
``indexed = 0``, so they are not read again.

Row numbers (``num``) are never used twice: tantivy's ``num`` field, the page vectors and the
rank arrays are addressed by them, so a number given again to another page (SQLite gives
the largest rowid plus one, reusing the number of a last row deleted) would hand the new
page the old one's vector and, by the saved ranks' stamp, its ranks. The highest number
ever forgotten is kept in ``meta`` (``retired``) and new rows are numbered above it.

Simhash lookup uses the pigeonhole principle: a 64-bit fingerprint (``index.simhash``) is
split into ``MAX_DISTANCE + 1`` bands of 16 bits; two fingerprints within ``MAX_DISTANCE``
bits agree exactly on at least one band, so candidates come with one indexed lookup per band.
MinHash signatures (``index.minhash``) are stored as bytes beside the row, with one row of
``lsh`` per band key. A ``docs.db`` written before signatures were kept gains the column and
the table when it is next opened for writing; its pages keep their groups and are found by
simhash only (``gossamer index`` says so; a fresh index, ``rm -r DIR/index``, finds them by
both). Every fault is raised as ``StoreError``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gossamer.errors import StoreError
from gossamer.store.connect import connect_readonly, faults

__all__ = [
    "BANDS",
    "MAX_DISTANCE",
    "DocRow",
    "DocStore",
    "NearKeys",
    "PendingPage",
    "bands",
    "hamming",
]

MAX_DISTANCE = 3  # bits two fingerprints of near-duplicates may differ in
BANDS = MAX_DISTANCE + 1
_BAND_BITS = 64 // BANDS
_BAND_MASK = (1 << _BAND_BITS) - 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    num INTEGER PRIMARY KEY,
    url_id TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    host TEXT NOT NULL,
    doc_id TEXT,
    fetched_at REAL NOT NULL,
    kind TEXT NOT NULL,
    lang TEXT NOT NULL,
    title TEXT NOT NULL,
    words INTEGER NOT NULL,
    simhash INTEGER,
    group_id INTEGER NOT NULL,
    indexed INTEGER NOT NULL,
    minhash BLOB
);
CREATE INDEX IF NOT EXISTS docs_doc_id ON docs (doc_id);
CREATE INDEX IF NOT EXISTS docs_group ON docs (group_id);
CREATE TABLE IF NOT EXISTS bands (
    band INTEGER NOT NULL,
    value INTEGER NOT NULL,
    num INTEGER NOT NULL,
    PRIMARY KEY (band, value, num)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lsh (
    band INTEGER NOT NULL,
    key INTEGER NOT NULL,
    num INTEGER NOT NULL,
    PRIMARY KEY (band, key, num)
) WITHOUT ROWID;
"""

# Fetched, archived, successful pages of the crawl that have no row yet, or an older one
# (robots.txt files and sitemaps are the crawl's own business, not documents).
_PENDING_FROM = """
FROM crawl.pages AS p LEFT JOIN docs AS d ON d.url_id = p.url_id
WHERE p.status BETWEEN 200 AND 299 AND p.warc_file IS NOT NULL AND p.purpose = 'page'
  AND (d.num IS NULL OR d.fetched_at < p.fetched_at)
"""
_PENDING = f"""
SELECT p.url, p.url_id, p.doc_id, p.content_type, p.fetched_at,
       p.warc_file, p.warc_offset, p.warc_length, d.num, {{render}}
{_PENDING_FROM}
ORDER BY p.warc_file, p.warc_offset
"""
_ANY_PENDING = f"SELECT 1 {_PENDING_FROM} LIMIT 1"
_IN_FLIGHT = "in_flight"  # set while a batch is committed to tantivy but not yet here
_RETIRED = "retired"  # the highest row number forgotten, never given again
# The number of a new row: above every row there is and every row there was (from 1, as
# SQLite numbers rows).
_NEXT_NUM = (
    "(SELECT max(coalesce((SELECT max(num) FROM docs), 0),"
    f" coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{_RETIRED}'), 0)) + 1)"
)


@dataclass(frozen=True, slots=True)
class PendingPage:
    """A page of crawl.db that the indexer still has to read."""

    url: str
    url_id: str
    doc_id: str | None
    content_type: str | None
    fetched_at: float
    warc_file: str
    warc_offset: int
    warc_length: int
    old_num: int | None  # the row of an earlier fetch of the same URL, to replace
    render: str | None = None  # crawl.db's pages.render: a DOM archived beside the response


@dataclass(frozen=True, slots=True)
class NearKeys:
    """What a page is looked up by as a near-duplicate: its simhash fingerprint, its MinHash
    signature (little-endian uint32 values) and that signature's LSH band keys."""

    simhash: int | None = None
    minhash: bytes | None = None
    lsh: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class DocRow:
    """One row of ``docs``."""

    num: int
    url_id: str
    url: str
    host: str
    doc_id: str | None
    fetched_at: float
    kind: str
    lang: str
    title: str
    words: int
    simhash: int | None
    group_id: int
    indexed: bool


_DOC_COLUMNS = (
    "num, url_id, url, host, doc_id, fetched_at, kind, lang, title, words, simhash, "
    "group_id, indexed"
)
# Rows whose page crawl.db no longer holds as a document: no row, another purpose, a final
# 4xx (404, 410, 403...; not 429, which asks to come back), a redirect (not a 304, which says
# the page is as it was, should a row ever hold one), or a success that was not archived.
# Joined on ``url``, the primary key of ``pages``.
_GONE = f"""
SELECT {", ".join("d." + c.strip() for c in _DOC_COLUMNS.split(","))}
FROM docs AS d LEFT JOIN crawl.pages AS p ON p.url = d.url
WHERE p.url IS NULL OR p.purpose != 'page'
   OR (p.status BETWEEN 300 AND 499 AND p.status NOT IN (304, 429))
   OR (p.status BETWEEN 200 AND 299 AND p.warc_file IS NULL)
ORDER BY d.num
"""


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def bands(fingerprint: int) -> tuple[int, ...]:
    """The ``BANDS`` 16-bit pieces of a fingerprint, lowest first."""
    return tuple((fingerprint >> (i * _BAND_BITS)) & _BAND_MASK for i in range(BANDS))


def _signed(value: int) -> int:
    # SQLite integers are signed 64-bit.
    return value - (1 << 64) if value >= 1 << 63 else value


def _unsigned(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


def _row(values: tuple[Any, ...]) -> DocRow:
    fields = list(values)
    fields[10] = None if fields[10] is None else _unsigned(int(fields[10]))
    fields[12] = bool(fields[12])
    return DocRow(*fields)


class DocStore:
    """The document store of one crawl folder; writable only while indexing."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self._path = path
        self.upgraded = False  # True when this opening added MinHash to an older docs.db
        if readonly and not path.exists():
            raise StoreError(f"no index at {path.parent}; run 'gossamer index' first")
        try:
            if readonly:
                self._conn = connect_readonly(path, threads=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                # URI filenames on, so ATTACH in ``pending`` can open crawl.db read-only.
                uri = path.resolve().as_uri()
                self._conn = sqlite3.connect(uri, uri=True, isolation_level=None)
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
                self._conn.executescript(_SCHEMA)
                self.upgraded = self._upgrade()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open document store {path}: {exc}") from exc

    def _upgrade(self) -> bool:
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(docs)")}
        if "minhash" in columns:
            return False
        self._conn.execute("ALTER TABLE docs ADD COLUMN minhash BLOB")
        return True

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> DocStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- indexing --------------------------------------------------------------------------

    def pending(self, crawl_db: Path) -> list[PendingPage]:
        """Pages of ``crawl_db`` not indexed yet, in WARC order (sequential reads)."""
        # A crawl.db older than schema 6 has no render column: attached read-only, it is not
        # upgraded, and its pages were never rendered.
        columns = {row[1] for row in self._with_crawl(crawl_db, "PRAGMA crawl.table_info(pages)")}
        render = "p.render" if "render" in columns else "NULL"
        return [
            PendingPage(*row) for row in self._with_crawl(crawl_db, _PENDING.format(render=render))
        ]

    def gone(self, crawl_db: Path) -> list[DocRow]:
        """Rows (indexed or not) whose page ``crawl_db`` no longer holds as a document."""
        return [_row(values) for values in self._with_crawl(crawl_db, _GONE)]

    def has_pending(self, crawl_db: Path) -> bool:
        """Whether ``pending`` would find a page, without reading them all."""
        return bool(self._with_crawl(crawl_db, _ANY_PENDING))

    def _with_crawl(self, crawl_db: Path, sql: str) -> list[Any]:
        """The rows of ``sql`` run with ``crawl_db`` attached read-only as ``crawl``."""
        with faults("read", crawl_db):
            uri = f"{crawl_db.resolve().as_uri()}?mode=ro"
            self._conn.execute("ATTACH DATABASE ? AS crawl", (uri,))
            try:
                return self._conn.execute(sql).fetchall()
            finally:
                self._conn.execute("DETACH DATABASE crawl")

    @property
    def in_flight(self) -> bool:
        """True when the last run stopped between the tantivy commit and ours."""
        with self._faults("read"):
            row = self._conn.execute(
                "SELECT value FROM meta WHERE key = ?", (_IN_FLIGHT,)
            ).fetchone()
        return bool(row and row[0] == "1")

    def set_in_flight(self, value: bool) -> None:
        with self._faults("write"):
            self._conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (_IN_FLIGHT, "1" if value else "0"),
            )

    def begin(self) -> None:
        self._conn.execute("BEGIN")

    def commit(self) -> None:
        with self._faults("write"):
            self._conn.execute("COMMIT")

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def forget(self, num: int) -> None:
        """Drop a row (an earlier fetch, or a page gone) with its keys; its group keeps the
        number as its name, and the number is never given to another row."""
        for table in ("docs", "bands", "lsh"):
            self._conn.execute(f"DELETE FROM {table} WHERE num = ?", (num,))
        self._conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key)"
            " DO UPDATE SET value = max(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))",
            (_RETIRED, num),
        )

    def add(
        self,
        *,
        url_id: str,
        url: str,
        host: str,
        doc_id: str | None,
        fetched_at: float,
        kind: str,
        lang: str,
        title: str,
        words: int,
        keys: NearKeys,
        group: int | None,
        indexed: bool,
    ) -> DocRow:
        """Insert a row in ``group`` (None: a group of its own); call between ``begin`` and
        ``commit``. Only an indexed page's keys are looked up by later pages."""
        fingerprint = keys.simhash
        cursor = self._conn.execute(
            "INSERT INTO docs (num, url_id, url, host, doc_id, fetched_at, kind, lang, title,"
            " words, simhash, group_id, indexed, minhash) VALUES ("
            f"{_NEXT_NUM}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
            (
                url_id, url, host, doc_id, fetched_at, kind, lang, title, words,
                None if fingerprint is None else _signed(fingerprint), int(indexed), keys.minhash,
            ),
        )  # fmt: skip
        num = int(cursor.lastrowid or 0)
        group = num if group is None or not indexed else group
        self._conn.execute("UPDATE docs SET group_id = ? WHERE num = ?", (group, num))
        if indexed and fingerprint is not None:
            self._conn.executemany(
                "INSERT INTO bands (band, value, num) VALUES (?, ?, ?)",
                [(band, value, num) for band, value in enumerate(bands(fingerprint))],
            )
        if indexed and keys.minhash is not None:
            self._conn.executemany(
                "INSERT OR IGNORE INTO lsh (band, key, num) VALUES (?, ?, ?)",
                [(band, key, num) for band, key in enumerate(keys.lsh)],
            )
        return DocRow(
            num, url_id, url, host, doc_id, fetched_at, kind, lang, title, words,
            fingerprint, group, indexed,
        )  # fmt: skip

    def exact_group(self, doc_id: str | None) -> int | None:
        """The group of an indexed page with this content, if any."""
        if doc_id is None:
            return None
        row = self._conn.execute(
            "SELECT group_id FROM docs WHERE doc_id = ? AND indexed = 1 LIMIT 1", (doc_id,)
        ).fetchone()
        return None if row is None else int(row[0])

    def simhash_neighbours(self, fingerprint: int, *, unsigned: bool) -> list[tuple[int, int]]:
        """(group, fingerprint) of the indexed pages sharing a band with ``fingerprint``;
        ``unsigned``: only those indexed before MinHash signatures were kept."""
        only = " AND d.minhash IS NULL" if unsigned else ""
        found: dict[int, tuple[int, int]] = {}
        for band, value in enumerate(bands(fingerprint)):
            for num, other, group in self._conn.execute(
                "SELECT d.num, d.simhash, d.group_id FROM bands AS b JOIN docs AS d"
                f" ON d.num = b.num WHERE b.band = ? AND b.value = ?{only}",
                (band, value),
            ):
                found[int(num)] = (int(group), _unsigned(int(other)))
        return list(found.values())

    def minhash_neighbours(self, keys: Sequence[int]) -> list[tuple[int, bytes]]:
        """(group, signature) of the indexed pages sharing an LSH band key with ``keys``."""
        found: dict[int, tuple[int, bytes]] = {}
        for band, key in enumerate(keys):
            for num, signature, group in self._conn.execute(
                "SELECT d.num, d.minhash, d.group_id FROM lsh AS l JOIN docs AS d"
                " ON d.num = l.num WHERE l.band = ? AND l.key = ?",
                (band, key),
            ):
                found[int(num)] = (int(group), bytes(signature))
        return list(found.values())

    # -- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        with self._faults("read"):
            row = self._conn.execute("SELECT count(*) FROM docs WHERE indexed = 1").fetchone()
        return int(row[0])

    def max_num(self) -> int:
        """The largest row number of an indexed page, -1 when there is none."""
        with self._faults("read"):
            row = self._conn.execute("SELECT max(num) FROM docs WHERE indexed = 1").fetchone()
        return -1 if row[0] is None else int(row[0])

    def group_sizes(self) -> dict[int, int]:
        """Sizes of the groups with more than one indexed page."""
        sql = (
            "SELECT group_id, count(*) FROM docs WHERE indexed = 1"
            " GROUP BY group_id HAVING count(*) > 1"
        )
        return {int(g): int(n) for g, n in self._conn.execute(sql)}

    def exact_copies(self) -> dict[tuple[int, str], int]:
        """(group, doc_id) -> pages, for each content that several indexed pages share."""
        sql = (
            "SELECT group_id, doc_id, count(*) FROM docs WHERE indexed = 1"
            " AND doc_id IS NOT NULL GROUP BY group_id, doc_id HAVING count(*) > 1"
        )
        return {(int(g), str(d)): int(n) for g, d, n in self._conn.execute(sql)}

    def nums_and_urls(self) -> Iterator[tuple[int, str]]:
        cursor = self._conn.execute("SELECT num, url FROM docs WHERE indexed = 1")
        while rows := cursor.fetchmany(10_000):
            yield from rows

    def by_url(self, url: str) -> DocRow | None:
        row = self._conn.execute(f"SELECT {_DOC_COLUMNS} FROM docs WHERE url = ?", (url,))
        found = row.fetchone()
        return None if found is None else _row(found)

    def group_members(self, group_id: int, limit: int = 100) -> list[DocRow]:
        rows = self._conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM docs WHERE group_id = ? AND indexed = 1"
            " ORDER BY num LIMIT ?",
            (group_id, limit),
        )
        return [_row(r) for r in rows]

    def _faults(self, action: str) -> AbstractContextManager[None]:
        return faults(action, self._path, "document store")
