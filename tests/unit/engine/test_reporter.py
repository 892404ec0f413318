"""Reporter: the domain registry in crawl.db says which hosts are in visit, until the end."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from gossamer.engine.reporter import Reporter
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB


def in_visit(db_path: Path) -> dict[str, int]:
    conn = sqlite3.connect(db_path)
    try:
        return dict(conn.execute("SELECT host, in_visit FROM domains").fetchall())
    finally:
        conn.close()


def test_hosts_in_visit_are_flagged_while_the_crawl_runs_and_not_after(tmp_path: Path) -> None:
    stats = CrawlStats()
    stats.host("a.test").pages = 1
    stats.host("b.test")
    visiting = {"a.test"}

    async def report_twice(db: MetadataDB) -> dict[str, int]:
        with Reporter(tmp_path, db, stats, lambda: visiting) as reporter:
            await reporter.write()
            db.flush()
            during = in_visit(db.path)
            await reporter.write(ended=True)
        return during

    with MetadataDB(tmp_path / "crawl.db") as db:
        db.start_writer()
        during = asyncio.run(report_twice(db))
    assert during == {"a.test": 1, "b.test": 0}
    assert in_visit(tmp_path / "crawl.db") == {"a.test": 0, "b.test": 0}
    tsv = (tmp_path / "reports" / "domains.tsv").read_text().splitlines()
    assert [line.rsplit("\t", 1)[1] for line in tsv[1:]] == ["0", "0"]
