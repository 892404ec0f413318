"""Index stage, image store: ``DIR/index/images.db``, the images of every indexed page, searchable.

Data flow: extract (``images``) -> indexer -> **imagestore** -> ``gossamer.search.images``.

One row per (page, image): the same image on two pages is found through either's words, and
the search shows it once. The words are in an SQLite FTS5 table over the rows (external
content, kept in step by triggers), with the Porter stemmer, so "foxes" finds "fox". A page
indexed again (a newer fetch) replaces its rows, a page gone loses them; the indexer commits
the store with the document store, batch by batch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gossamer.index.errors import IndexingError
from gossamer.index.images import PageImage, file_words
from gossamer.store.connect import readonly_uri

__all__ = ["IMAGES_FILE", "ImageRow", "ImageStore"]

IMAGES_FILE = "images.db"  # under DIR/index

_SCHEMA = """
CREATE TABLE IF NOT EXISTS images (
    id INTEGER PRIMARY KEY,
    page_url_id TEXT NOT NULL,
    page_url TEXT NOT NULL,
    page_title TEXT NOT NULL,
    url TEXT NOT NULL,
    alt TEXT NOT NULL,
    title TEXT NOT NULL,
    caption TEXT NOT NULL,
    file TEXT NOT NULL,
    near TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS images_page ON images (page_url_id);
CREATE VIRTUAL TABLE IF NOT EXISTS image_words USING fts5(
    alt, title, caption, file, near, page_title,
    content='images', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS images_added AFTER INSERT ON images BEGIN
    INSERT INTO image_words (rowid, alt, title, caption, file, near, page_title)
    VALUES (new.id, new.alt, new.title, new.caption, new.file, new.near, new.page_title);
END;
CREATE TRIGGER IF NOT EXISTS images_removed AFTER DELETE ON images BEGIN
    INSERT INTO image_words (image_words, rowid, alt, title, caption, file, near, page_title)
    VALUES ('delete', old.id, old.alt, old.title, old.caption, old.file, old.near,
            old.page_title);
END;
"""
# BM25 weights of image_words' columns: what describes the image itself counts most.
_WEIGHTS = "5.0, 2.0, 4.0, 2.0, 1.0, 1.0"


@dataclass(frozen=True, slots=True)
class ImageRow:
    """An image found by a search, with the page it was found on."""

    url: str
    page_url: str
    page_title: str
    alt: str
    title: str
    caption: str


class ImageStore:
    """The image store; written by the indexer, read (``readonly``) by searches."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        try:
            if readonly:
                self._conn = sqlite3.connect(readonly_uri(path), uri=True)
            else:
                self._conn = sqlite3.connect(path, isolation_level=None)
                self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot open the image store {path}: {exc}") from exc

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ImageStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def begin(self) -> None:
        self._conn.execute("BEGIN")

    def commit(self) -> None:
        self._conn.execute("COMMIT")

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def replace(
        self, page_url_id: str, page_url: str, page_title: str, images: Sequence[PageImage]
    ) -> None:
        """The images of one page, instead of those it had."""
        self._conn.execute("DELETE FROM images WHERE page_url_id = ?", (page_url_id,))
        self._conn.executemany(
            "INSERT INTO images (page_url_id, page_url, page_title, url, alt, title, caption,"
            " file, near) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (page_url_id, page_url, page_title, i.url, i.alt, i.title, i.caption,
                 file_words(i.url), i.near)
                for i in images
            ],
        )  # fmt: skip

    def drop(self, page_url_id: str) -> None:
        """Forget the images of one page (gone, or its new version has no text)."""
        self._conn.execute("DELETE FROM images WHERE page_url_id = ?", (page_url_id,))

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(DISTINCT url) FROM images").fetchone()[0])

    def search(self, match: str, limit: int) -> list[ImageRow]:
        """The rows matching the FTS5 expression ``match``, best first, each image once."""
        try:
            rows = self._conn.execute(
                "SELECT i.url, i.page_url, i.page_title, i.alt, i.title, i.caption"
                " FROM image_words JOIN images AS i ON i.id = image_words.rowid"
                f" WHERE image_words MATCH ? ORDER BY bm25(image_words, {_WEIGHTS}), i.id"
                " LIMIT ?",
                (match, limit * 4),  # an image on several pages comes back several times
            ).fetchall()
        except sqlite3.OperationalError as exc:
            raise IndexingError(f"cannot search the image store {self.path}: {exc}") from exc
        seen: dict[str, ImageRow] = {}
        for row in rows:
            if row[0] not in seen:
                seen[row[0]] = ImageRow(*row)
        return list(seen.values())[:limit]
