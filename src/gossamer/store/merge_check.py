"""Store stage, before a merge: the archived pages a source's ``crawl.db`` does not list.

Data flow: a source's WARC files + its ``crawl.db`` (read-only) -> **merge_check** -> merge
goes on, or refuses the source. A crawl killed with ``kill -9`` can leave response records in
its WARC files (and lines in its CDXJ) whose rows never reached ``crawl.db``: the batch that
would have listed them was lost with the process. Merging the databases as they are would
drop those pages without a word, although the WARC files carried into OUT still hold them.
A resume or ``gossamer recover DIR`` replays such records into ``crawl.db``
(``engine.replay``); a merge only reads its sources, so it refuses one that needs it and
names the command.

The rule is the replay's: a response or revisit record is listed when a ``pages`` row points
at it, or when its URL's row points at a later record (a refetch replaced it; later by
WARC-Date, then file order, then offset). Damaged stretches are not counted: ``recover``
reports them, and no row can point into them.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gossamer.errors import StoreError
from gossamer.store.connect import faults
from gossamer.store.records import EPOCH, warc_time
from gossamer.store.warcscan import Member, crawl_files, order_key, scan

__all__ = ["require_listed", "unlisted_records"]

_RESPONSES = frozenset({"response", "revisit"})
_Key = tuple[int, tuple[str, int, str], int]  # (microseconds, file order, offset)


def require_listed(folder: Path, database_uri: str) -> None:
    """Refuse, naming ``gossamer recover``, a source whose WARC files hold pages its
    ``crawl.db`` (opened by ``database_uri``, read-only) does not list."""
    missing = unlisted_records(folder, database_uri)
    if missing:
        raise StoreError(
            f"{folder}'s WARC files hold {missing} archived record(s) its crawl.db does not"
            f" list (its crawl was killed?): run 'gossamer recover {folder}' before merging"
            " it, which replays them"
        )


def unlisted_records(folder: Path, database_uri: str) -> int:
    """How many response and revisit records of ``folder``'s own WARC files no row lists."""
    with faults("read", folder / "crawl.db"):
        conn = sqlite3.connect(database_uri, uri=True)
        try:
            rows = _rows(conn)
            files = crawl_files(folder / "warc", {name for name, _ in rows})
            missing = 0
            for path in files.ours:
                try:
                    missing += _unlisted_in(path, rows, conn)
                except OSError as exc:
                    raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
        finally:
            conn.close()
    return missing


def _rows(conn: sqlite3.Connection) -> dict[tuple[str, int], tuple[str, int]]:
    """(file, offset) -> (url, length) of every row pointing at a record."""
    sql = "SELECT warc_file, warc_offset, url, warc_length FROM pages WHERE warc_file IS NOT NULL"
    return {
        (str(name), int(offset)): (str(url), int(length or 0))
        for name, offset, url, length in conn.execute(sql)
    }


def _unlisted_in(
    path: Path, rows: dict[tuple[str, int], tuple[str, int]], conn: sqlite3.Connection
) -> int:
    name = path.name
    missing = 0
    for item in scan(path):
        if not isinstance(item, Member) or item.headers.get("warc-type") not in _RESPONSES:
            continue
        url = item.headers.get("warc-target-uri", "")
        if rows.get((name, item.offset)) == (url, item.length):
            continue
        when = _usec(warc_time(item.headers.get("warc-date", "")))
        current = _current(conn, url)
        if current is None or current < (when, order_key(name), item.offset):
            missing += 1
    return missing


def _current(conn: sqlite3.Connection, url: str) -> _Key | None:
    """When the record ``url``'s row points at was made, as the replay orders records."""
    sql = "SELECT fetched_at, warc_file, warc_offset FROM pages WHERE url = ?"
    row = conn.execute(sql, (url,)).fetchone()
    if row is None:
        return None
    fetched_at, name, offset = row
    when = _usec(datetime.fromtimestamp(float(fetched_at or 0.0), tz=UTC))
    return (when, order_key(name or ""), -1 if offset is None else int(offset))


def _usec(moment: datetime) -> int:
    return (moment - EPOCH) // timedelta(microseconds=1)
