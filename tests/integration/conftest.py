"""Helpers for crawling the local test web in-process."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.engine import Crawler, CrawlOutcome
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb

RESOLVE = "*.web.test:127.0.0.1"


def local_config(seeds: Path, out: Path, **changes: object) -> CrawlConfig:
    """Politeness for loopback: no base delay; robots.txt, Crawl-delay and one-per-host kept."""
    config = CrawlConfig(
        seeds=seeds,
        out=out,
        concurrency=16,
        resolve=(RESOLVE,),
        progress=False,
        politeness=PolitenessConfig(delay=0.0, robots_retry_delay=0.2, robots_retries=1),
        scope=ScopeConfig(max_depth=25),
    )
    return dataclasses.replace(config, **changes)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class CrawlRun:
    outcome: CrawlOutcome
    out: Path


def crawl(site: ThreadedTestWeb, tmp: Path, **changes: object) -> CrawlRun:
    seeds = tmp / "seeds.txt"
    seeds.write_text("\n".join(site.seeds()) + "\n", encoding="utf-8")
    out = tmp / "out"
    config = local_config(seeds, out, **changes)
    outcome = asyncio.run(Crawler(config, parse_seeds(seeds.read_text())).run())
    return CrawlRun(outcome, out)


def query(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def signal_after_fetches(proc: subprocess.Popen[str], count: int, sig: int) -> None:
    """Send ``sig`` to a running ``gossamer -vv crawl`` once its log has told of ``count``
    fetches: the crawler's own log lines are the event waited on, no sleeping. (Workers share
    their coordinator's stderr, so a ``--workers`` crawl counts all of them.)"""
    assert proc.stderr is not None
    fetched = 0
    for line in proc.stderr:
        if "fetched url=" in line:
            fetched += 1
            if fetched == count:
                proc.send_signal(sig)
                return
