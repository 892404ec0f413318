"""A batch committed a chunk of rows per statement leaves what one statement per row leaves."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from gossamer.store.metadata import MetadataDB
from gossamer.store.writes import Batch, UrlIds, commit

# The same rows one statement each: what the chunked statements must be equivalent to.
ONE_BY_ONE = {
    "pages": f"INSERT OR REPLACE INTO pages VALUES ({', '.join('?' * 17)})",
    "discovered": (
        "INSERT INTO urls (url, host, depth, referrer, discovered_at, spilled)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (url) DO UPDATE SET host = excluded.host,"
        " depth = excluded.depth, referrer = excluded.referrer,"
        " discovered_at = excluded.discovered_at, spilled = excluded.spilled"
        " WHERE urls.discovered_at IS NULL"
    ),
    "nodes": "INSERT OR IGNORE INTO urls (url) VALUES (?)",
    "links": (
        "INSERT OR IGNORE INTO links (src, dst) SELECT s.id, d.id FROM urls AS s, urls AS d"
        " WHERE s.url = ? AND d.url = ?"
    ),
}


def random_batch(rng: random.Random, size: int) -> Batch:
    urls = [f"http://h{rng.randrange(5)}.test/{rng.randrange(300)}" for _ in range(size)]
    batch = Batch()
    for i, url in enumerate(urls):
        # Repeats on purpose: a later page row replaces, a later discovery does not.
        batch.pages.append(
            (url, f"id{i}", None, 200 + i % 3, "text/html", i, float(i), 0.1, i % 4, None,
             None, None, None, None, url[7:15], "page", (None, "rendered", "hint")[i % 3])
        )  # fmt: skip
        batch.discovered.append((rng.choice(urls), url[7:15], i % 5, url, float(i), i % 2))
        batch.links.extend((url, rng.choice(urls)) for _ in range(rng.randrange(4)))
    return batch


def dump(path: Path) -> list[list[tuple[object, ...]]]:
    with closing(sqlite3.connect(path)) as conn:
        return [
            conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("pages", "urls", "links")
        ]


def test_chunked_statements_match_one_statement_per_row(tmp_path: Path) -> None:
    rng = random.Random(7)
    batches = [random_batch(rng, size) for size in (1, 3, 255, 256, 257, 700)]
    chunked, single = tmp_path / "chunked.db", tmp_path / "single.db"
    MetadataDB(chunked).close()
    MetadataDB(single).close()
    with closing(sqlite3.connect(chunked, isolation_level=None)) as conn:
        ids = UrlIds(capacity=50)  # small: URLs age out and are looked up again
        for batch in batches:
            commit(conn, batch, ids)
    with closing(sqlite3.connect(single, isolation_level=None)) as conn:
        for batch in batches:
            nodes = dict.fromkeys(url for pair in batch.links for url in pair)
            with conn:
                conn.executemany(ONE_BY_ONE["pages"], batch.pages)
                conn.executemany(ONE_BY_ONE["discovered"], batch.discovered)
                conn.executemany(ONE_BY_ONE["nodes"], [(url,) for url in nodes])
                conn.executemany(ONE_BY_ONE["links"], batch.links)
    assert dump(chunked) == dump(single)
    assert dump(chunked)[2]  # links were written


def test_link_rows_by_remembered_ids_match_rows_by_url(tmp_path: Path) -> None:
    rng = random.Random(11)
    batches = [random_batch(rng, size) for size in (5, 300, 40, 600, 2)]
    by_id, by_url = tmp_path / "by_id.db", tmp_path / "by_url.db"
    MetadataDB(by_id).close()
    MetadataDB(by_url).close()
    with closing(sqlite3.connect(by_id, isolation_level=None)) as conn:
        ids = UrlIds()
        for batch in batches:
            commit(conn, batch, ids)
    with closing(sqlite3.connect(by_url, isolation_level=None)) as conn:
        for batch in batches:
            commit(conn, batch)
    assert dump(by_id) == dump(by_url)  # the same ids, in the same order


def test_a_rolled_back_batch_leaves_no_id_behind(tmp_path: Path) -> None:
    path = tmp_path / "crawl.db"
    MetadataDB(path).close()
    ids = UrlIds()
    bad = Batch(links=[("http://a.test/", "http://b.test/")], robots=[("x", 1, b"", 0.0, 9)])  # type: ignore[list-item]
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        with pytest.raises(sqlite3.ProgrammingError):
            commit(conn, bad, ids)  # five values for four columns: the COMMIT never runs
        assert ids.get("http://a.test/") is None
        commit(conn, Batch(links=[("http://c.test/", "http://a.test/")]), ids)
        assert (
            ids.get("http://a.test/")
            == conn.execute("SELECT id FROM urls WHERE url = 'http://a.test/'").fetchone()[0]
        )
