"""Reporter: the domain registry in crawl.db says which hosts are in visit, until the end;
the periodic reports space out once rewriting them takes long."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from gossamer.crawling.reports import report_period
from gossamer.engine import reporter as reporter_module
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


def test_the_period_grows_once_a_rewrite_takes_more_than_a_tenth_of_it() -> None:
    assert report_period(30.0, 0.4) == 30.0
    assert report_period(30.0, 3.0) == 30.0  # 3 s of 30: exactly the share
    assert report_period(30.0, 10.0) == pytest.approx(90.0)  # 10 s of 100
    assert report_period(0.1, 0.0) == 0.1


def test_every_waits_the_grown_period_after_a_slow_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rewrites take 1 s, then 20 s, then 1 s (of a clock the test moves); the waits
    # before each rewrite are recorded instead of slept.
    clock = [0.0]
    durations = iter([1.0, 20.0, 1.0])
    waits: list[float] = []

    class Clock:
        @staticmethod
        def monotonic() -> float:
            return clock[0]

    async def fake_set_within(event: asyncio.Event, seconds: float) -> bool:
        waits.append(seconds)
        if len(waits) == 4:
            event.set()
        return event.is_set()

    async def slow_write(self: Reporter, *, ended: bool = False) -> None:
        clock[0] += next(durations)

    monkeypatch.setattr(reporter_module, "time", Clock)
    monkeypatch.setattr(reporter_module, "set_within", fake_set_within)
    monkeypatch.setattr(Reporter, "write", slow_write)

    async def run_every(db: MetadataDB) -> None:
        with Reporter(tmp_path, db, CrawlStats()) as reporter:
            await reporter.every(30.0, asyncio.Event())

    with MetadataDB(tmp_path / "crawl.db") as db:
        asyncio.run(run_every(db))
    assert waits == [30.0, 30.0, pytest.approx(180.0), 30.0]
