"""Index stage, anchor text: what the links pointing at a page call it.

Data flow: links (each indexed page's out-links with their words) -> **anchors**
(``DIR/index/anchors.db``) -> the ``anchors`` field of each target's document. The words
others use for a page are often the words a searcher uses, and a page need not contain
them itself: a crawler has this signal and a plain text index has not.

A page's anchor text is weighed before it is indexed, since templates repeat links: each
distinct wording counts once per linking page of the target's own host, up to
``SAME_HOST_CAP`` times (so a menu entry on every page counts as a few links, not
thousands), and ``CROSS_HOST_WEIGHT`` times per other host that uses it, up to
``CROSS_HOST_CAP`` hosts (another site's words are an independent opinion).

Anchors arrive in crawl order, so a page is often indexed before the pages that link to
it. Every target that gains or loses an anchor is marked ``dirty``; writing its document
clears the mark, and at the end of a run the indexer rewrites the documents still marked
(``relink``). Commits follow tantivy's, before the document store's, so a run killed in
between reads its pages again and replaces their anchors (each page's own rows are
replaced whole).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from gossamer.index.errors import IndexingError
from gossamer.index.links import Anchor

__all__ = [
    "ANCHORS_FILE",
    "CROSS_HOST_CAP",
    "CROSS_HOST_WEIGHT",
    "SAME_HOST_CAP",
    "AnchorStore",
    "anchor_values",
]

ANCHORS_FILE = "anchors.db"  # under DIR/index
SAME_HOST_CAP = 2
CROSS_HOST_WEIGHT = 2
CROSS_HOST_CAP = 4
_MAX_VALUES = 64  # wordings kept per page, most repeated first

_SCHEMA = """
CREATE TABLE IF NOT EXISTS anchors (
    target TEXT NOT NULL,
    source TEXT NOT NULL,  -- url_id of the linking page
    host TEXT NOT NULL,    -- host of the linking page
    text TEXT NOT NULL,
    PRIMARY KEY (target, source, text)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS anchors_by_source ON anchors (source);
CREATE TABLE IF NOT EXISTS dirty (target TEXT PRIMARY KEY) WITHOUT ROWID;
"""


def anchor_values(target_host: str, rows: Iterable[tuple[str, str]]) -> list[str]:
    """The values of a page's anchor field from ``(linking host, words)`` rows."""
    same: dict[str, int] = {}
    hosts: dict[str, set[str]] = {}
    wording: dict[str, str] = {}
    for host, text in rows:
        key = " ".join(text.casefold().split())
        wording.setdefault(key, text)
        if host == target_host:
            same[key] = same.get(key, 0) + 1
        else:
            hosts.setdefault(key, set()).add(host)
    weights = {
        key: min(same.get(key, 0), SAME_HOST_CAP)
        + CROSS_HOST_WEIGHT * min(len(hosts.get(key, ())), CROSS_HOST_CAP)
        for key in wording
    }
    ranked = sorted(weights, key=lambda key: -weights[key])[:_MAX_VALUES]
    return [wording[key] for key in ranked for _ in range(weights[key])]


class AnchorStore:
    """``DIR/index/anchors.db``: every indexed page's links with their words."""

    def __init__(self, path: Path) -> None:
        try:
            self._conn = sqlite3.connect(path, isolation_level=None)
            self._conn.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot open the anchor store {path}: {exc}") from exc
        self._path = path

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> AnchorStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def begin(self) -> None:
        self._run("BEGIN")

    def commit(self) -> None:
        self._run("COMMIT")

    def rollback(self) -> None:
        if self._conn.in_transaction:
            self._run("ROLLBACK")

    def replace(self, source: str, host: str, anchors: Sequence[Anchor]) -> None:
        """Make ``anchors`` the links of the page ``source`` (a url_id), marking their targets."""
        try:
            old = self._conn.execute("SELECT target FROM anchors WHERE source = ?", (source,))
            self._conn.executemany(
                "INSERT OR IGNORE INTO dirty VALUES (?)", [row for row in old.fetchall()]
            )
            self._conn.execute("DELETE FROM anchors WHERE source = ?", (source,))
            rows = [(a.target, source, host, a.text) for a in anchors]
            self._conn.executemany("INSERT OR IGNORE INTO anchors VALUES (?, ?, ?, ?)", rows)
            self._conn.executemany(
                "INSERT OR IGNORE INTO dirty VALUES (?)", [(a.target,) for a in anchors]
            )
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot write the anchor store {self._path}: {exc}") from exc

    def values_for(self, target: str, target_host: str) -> list[str]:
        """The anchor field of ``target`` as of now; its ``dirty`` mark is cleared."""
        try:
            rows = self._conn.execute(
                "SELECT host, text FROM anchors WHERE target = ?", (target,)
            ).fetchall()
            self._conn.execute("DELETE FROM dirty WHERE target = ?", (target,))
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot read the anchor store {self._path}: {exc}") from exc
        return anchor_values(target_host, rows)

    def dirty(self) -> list[str]:
        """Targets whose anchors changed since their document was last written."""
        try:
            return [row[0] for row in self._conn.execute("SELECT target FROM dirty")]
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot read the anchor store {self._path}: {exc}") from exc

    def clear_dirty(self) -> None:
        self._run("DELETE FROM dirty")

    def _run(self, sql: str) -> None:
        try:
            self._conn.execute(sql)
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot write the anchor store {self._path}: {exc}") from exc
