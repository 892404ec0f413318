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

URLs, url_ids and hosts are stored once each (``names``) and the link rows refer to them by
number: a 10,000-page crawl's store went from 41 MB to 20 MB.
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
CREATE TABLE IF NOT EXISTS names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS anchor_links (
    target INTEGER NOT NULL,  -- names.id of the URL linked to
    source INTEGER NOT NULL,  -- names.id of the linking page's url_id
    host INTEGER NOT NULL,    -- names.id of the linking page's host
    text TEXT NOT NULL,
    PRIMARY KEY (target, source, text)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS anchor_links_by_source ON anchor_links (source);
CREATE TABLE IF NOT EXISTS anchor_dirty (target INTEGER PRIMARY KEY);
"""
# An anchors.db of the first layout (one row per link, its URLs and host spelt out: about
# 4 KB per indexed page) is moved into the interned one when opened.
_UPGRADE = """
INSERT OR IGNORE INTO names (name)
    SELECT target FROM anchors UNION SELECT source FROM anchors UNION SELECT host FROM anchors
    UNION SELECT target FROM dirty;
INSERT OR IGNORE INTO anchor_links
    SELECT t.id, s.id, h.id, a.text FROM anchors AS a
    JOIN names AS t ON t.name = a.target JOIN names AS s ON s.name = a.source
    JOIN names AS h ON h.name = a.host;
INSERT OR IGNORE INTO anchor_dirty SELECT t.id FROM dirty AS d JOIN names AS t ON t.name = d.target;
DROP TABLE anchors;
DROP TABLE dirty;
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
    # Ties go by the words themselves, not by the order the store returned the rows in.
    ranked = sorted(weights, key=lambda key: (-weights[key], key))[:_MAX_VALUES]
    return [wording[key] for key in ranked for _ in range(weights[key])]


class AnchorStore:
    """``DIR/index/anchors.db``: every indexed page's links with their words."""

    def __init__(self, path: Path) -> None:
        try:
            self._conn = sqlite3.connect(path, isolation_level=None)
            self._conn.executescript(_SCHEMA)
            old = self._conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'anchors'"
            ).fetchone()
            if old is not None:
                self._conn.executescript(f"BEGIN; {_UPGRADE} COMMIT;")
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot open the anchor store {path}: {exc}") from exc
        self._path = path
        # Redirecting URL -> where it leads (``redirects.py``): links to the first are filed
        # under the second, which has the document.
        self.aliases: dict[str, str] = {}

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

    def _ids(self, names: set[str]) -> dict[str, int]:
        """Each name's id, interned first when new."""
        conn = self._conn
        conn.executemany("INSERT OR IGNORE INTO names (name) VALUES (?)", [(n,) for n in names])
        found: dict[str, int] = {}
        listed = list(names)
        for start in range(0, len(listed), 500):
            chunk = listed[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(
                (name, id_)
                for id_, name in conn.execute(
                    f"SELECT id, name FROM names WHERE name IN ({marks})",
                    chunk,
                )
            )
        return found

    def replace(self, source: str, host: str, anchors: Sequence[Anchor]) -> None:
        """Make ``anchors`` the links of the page ``source`` (a url_id), marking their targets."""
        conn = self._conn
        if self.aliases:
            anchors = [Anchor(self.aliases.get(a.target, a.target), a.text) for a in anchors]
        try:
            ids = self._ids({source, host, *(a.target for a in anchors)})
            me = ids[source]
            conn.execute(
                "INSERT OR IGNORE INTO anchor_dirty"
                " SELECT target FROM anchor_links WHERE source = ?",
                (me,),
            )
            conn.execute("DELETE FROM anchor_links WHERE source = ?", (me,))
            rows = [(ids[a.target], me, ids[host], a.text) for a in anchors]
            conn.executemany("INSERT OR IGNORE INTO anchor_links VALUES (?, ?, ?, ?)", rows)
            conn.executemany(
                "INSERT OR IGNORE INTO anchor_dirty VALUES (?)", [(ids[a.target],) for a in anchors]
            )
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot write the anchor store {self._path}: {exc}") from exc

    def move_aliases(self) -> int:
        """File the links to each redirecting URL in ``aliases`` under the URL it leads to,
        marking those targets; how many link rows moved (links read in earlier runs, before
        the redirect was known)."""
        if not self.aliases:
            return 0
        conn = self._conn
        try:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS alias (src TEXT, dst TEXT)")
            conn.execute("DELETE FROM temp.alias")
            conn.executemany("INSERT INTO temp.alias VALUES (?, ?)", self.aliases.items())
            conn.execute("INSERT OR IGNORE INTO names (name) SELECT dst FROM temp.alias")
            conn.execute("DROP TABLE IF EXISTS temp.moves")
            conn.execute(
                "CREATE TEMP TABLE moves AS SELECT s.id AS src, d.id AS dst FROM temp.alias AS a"
                " JOIN names AS s ON s.name = a.src JOIN names AS d ON d.name = a.dst"
                " WHERE EXISTS (SELECT 1 FROM anchor_links WHERE target = s.id)"
            )
            conn.execute(
                "INSERT OR IGNORE INTO anchor_links SELECT m.dst, l.source, l.host, l.text"
                " FROM temp.moves AS m JOIN anchor_links AS l ON l.target = m.src"
            )
            conn.execute("INSERT OR IGNORE INTO anchor_dirty SELECT DISTINCT dst FROM temp.moves")
            gone = conn.execute(
                "DELETE FROM anchor_links WHERE target IN (SELECT src FROM temp.moves)"
            )
            return gone.rowcount
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot write the anchor store {self._path}: {exc}") from exc

    def values_for(self, target: str, target_host: str) -> list[str]:
        """The anchor field of ``target`` as of now; its ``dirty`` mark is cleared."""
        try:
            found = self._conn.execute("SELECT id FROM names WHERE name = ?", (target,)).fetchone()
            if found is None:
                return []
            rows = self._conn.execute(
                "SELECT h.name, l.text FROM anchor_links AS l JOIN names AS h ON h.id = l.host"
                " WHERE l.target = ?",
                found,
            ).fetchall()
            self._conn.execute("DELETE FROM anchor_dirty WHERE target = ?", found)
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot read the anchor store {self._path}: {exc}") from exc
        return anchor_values(target_host, rows)

    def dirty(self) -> list[str]:
        """Targets whose anchors changed since their document was last written."""
        try:
            query = "SELECT n.name FROM anchor_dirty AS d JOIN names AS n ON n.id = d.target"
            return [row[0] for row in self._conn.execute(query)]
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot read the anchor store {self._path}: {exc}") from exc

    def clear_dirty(self) -> None:
        self._run("DELETE FROM anchor_dirty")

    def _run(self, sql: str) -> None:
        try:
            self._conn.execute(sql)
        except sqlite3.Error as exc:
            raise IndexingError(f"cannot write the anchor store {self._path}: {exc}") from exc
