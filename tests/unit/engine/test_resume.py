"""The recovery sequence: lock, cut torn tails, replay, recount, rebuild the frontier."""

from __future__ import annotations

import dataclasses
import gzip
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gossamer.config import CrawlConfig, FetchConfig, PolitenessConfig
from gossamer.crawling.folder import CrawlLock, carried_fields, load_snapshot, save_snapshot
from gossamer.engine.backlog import build_frontier, seed_fallbacks
from gossamer.engine.partition import Part, host_owner
from gossamer.engine.resume import (
    carry_runs,
    holds_crawl,
    level,
    rebuild_stats,
    repair_last_warc,
    repair_tails,
    restore_part,
    restore_robots,
    resume_crawl,
)
from gossamer.errors import StoreError
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.frontier.frontier import Admission
from gossamer.stats import CrawlStats
from gossamer.store import CdxjWriter, MetadataDB, WarcLocation, WarcStore, page_row
from gossamer.store.rows import PageRow
from gossamer.urls import host_of

NOW = 1_700_000_000.0
ROBOTS = b"User-agent: *\nDisallow: /private\nCrawl-delay: 2\n"


def page(url: str, at: float = NOW) -> FetchResult:
    body = b"<html><title>t</title><a href='/next'>n</a></html>"
    return FetchResult(
        url=url,
        status=200,
        response_headers=(("Content-Type", "text/html"),),
        body=body,
        content=body,
        content_type="text/html",
        started_at=at,
        elapsed=0.02,
    )


class Folder:
    """A crawl folder written as the live pipeline writes it: WARC, then CDXJ, then rows."""

    def __init__(self, root: Path) -> None:
        self.out = root
        self.config = CrawlConfig(
            seeds=root / "seeds.txt",
            out=root,
            concurrency=4,
            politeness=PolitenessConfig(delay=0.0, robots_ttl=3600.0),
        )
        self.db = MetadataDB(root / "crawl.db")
        self.cdxj = CdxjWriter(root / "index.cdxj")
        self.warc = WarcStore(root / "warc")
        self.last = WarcLocation("", 0, 0, "")  # where the last response record went

    def fetch(self, url: str, *, row: bool = True) -> None:
        """Archive one page; ``row=False`` is a crash before its row reached crawl.db."""
        host = host_of(url)
        fetched = page(url)
        fields = {"gossamer-purpose": "page", "gossamer-host": host, "gossamer-depth": "0"}
        location = self.warc.write(fetched, fields)
        self.last = location
        self.cdxj.add(fetched, location)
        self.db.add_discovered([(url, host, 0, None)])
        if row:
            self.db.add_page(page_row(fetched, location, depth=0, referrer=None, host=host))
        self.db.flush()

    def archive(self, fetched: FetchResult, purpose: str = "page") -> None:
        """Archive one exchange and crash before its CDXJ line and its row were written."""
        fields = {"gossamer-purpose": purpose, "gossamer-host": host_of(fetched.url)}
        self.last = self.warc.write(fetched, fields | {"gossamer-depth": "0"})

    def backlog(self, host: str) -> list[tuple[str, int, str | None]]:
        """``host``'s disk backlog in order: (url, depth, referrer)."""
        return [row[1:4] for row in self.db.backlog(host, 0, 100)]

    def queue(self, url: str) -> None:
        """A URL found and queued, never fetched."""
        self.db.add_discovered([(url, host_of(url), 1, None)])
        self.db.flush()

    def stop(self) -> None:
        self.warc.close()
        self.cdxj.close(sort=False)
        self.db.flush()

    def tear(self) -> Path:
        """What a kill in the middle of a write leaves: the start of one more record."""
        path = self.warc.files[-1]
        data = path.read_bytes()
        start = self.last.offset
        path.write_bytes(data + data[start : start + self.last.length // 2])
        return path


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    made = Folder(tmp_path)
    yield made
    made.db.close()


def test_a_second_crawl_of_a_folder_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    with CrawlLock(tmp_path):
        assert (tmp_path / ".gossamer.lock").read_text().strip() == str(os.getpid())
        with pytest.raises(StoreError, match=rf"in use by another crawl \(pid {os.getpid()}\)"):
            CrawlLock(tmp_path).__enter__()
    with CrawlLock(tmp_path):  # released on exit
        pass


def test_a_folder_holds_a_crawl_once_it_has_rows_or_its_own_warc_files(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db") as db:
        assert not holds_crawl(tmp_path, db)
        with WarcStore(tmp_path / "warc") as store:  # a crash before the first batch of rows
            store.write(page("http://a.test/"))
        assert holds_crawl(tmp_path, db)
    other = tmp_path / "other"
    with MetadataDB(other / "crawl.db") as db:
        db.add_discovered([("http://a.test/", "a.test", 0, None)])
        db.flush()
        assert holds_crawl(other, db)


def test_level_cuts_the_torn_tail_replays_what_the_rows_missed_and_makes_backlog(
    folder: Folder,
) -> None:
    folder.fetch("http://a.test/1")
    folder.fetch("http://a.test/2", row=False)
    folder.fetch("http://b.test/3", row=False)
    folder.queue("http://a.test/later")
    folder.stop()
    torn = folder.tear()
    leveled = level(folder.config, folder.db)
    [cut] = leveled.cuts
    assert cut.path == torn and cut.saved.exists()
    assert leveled.outcome.replayed == 2
    assert folder.db.page_count() == 3
    # Links of the replayed pages were queued, as the live crawl would have queued them.
    assert leveled.backlog == {"a.test": 2, "b.test": 1}
    index = (folder.out / "index.cdxj").read_text().splitlines()
    assert index == sorted(index)
    assert [line for line in index if '"url": "http://b.test/3"' in line]


def test_resume_crawl_recounts_carries_the_snapshot_and_restores_the_frontier(
    folder: Folder,
) -> None:
    folder.fetch("http://a.test/1")
    folder.fetch("http://a.test/2", row=False)
    folder.queue("http://a.test/later")
    saved = CrawlStats()
    saved.skipped_robots = 5
    saved.elapsed_before = 40.0
    saved.started = time.time() - 2.0
    save_snapshot(folder.db, saved)
    fresh = time.time() - 60
    folder.db.add_robots("http://a.test", 200, ROBOTS, fresh)
    folder.db.add_robots("http://gone.test", 200, ROBOTS, fresh - 2 * 3600)  # expired
    folder.stop()
    stats, frontier = resume_crawl(folder.config, folder.db)
    assert stats.pages == 2 and stats.requests == 2
    assert stats.skipped_robots == 5
    assert stats.elapsed_before == pytest.approx(42.0, abs=1.0)
    assert frontier.seen("http://a.test/1") and frontier.seen("http://a.test/later")
    assert frontier.pending == 2  # /later and /next, found on the replayed page
    rules = frontier.robots_rules("http://a.test")
    assert rules is not None and not rules.is_allowed("/private")
    assert frontier.robots_rules("http://gone.test") is None
    assert stats.hosts["a.test"].robots_status == "rules, crawl-delay 2"
    assert frontier.host("a.test").delay == 2.0


def test_a_worker_restores_only_the_hosts_it_owns(folder: Folder) -> None:
    mine, theirs = "mine.test", "theirs.test"
    for n in range(100):
        mine = f"m{n}.test"
        if host_owner(mine, 2) == 0:
            break
    for n in range(100):
        theirs = f"t{n}.test"
        if host_owner(theirs, 2) == 1:
            break
    folder.fetch(f"http://{mine}/")
    folder.fetch(f"http://{theirs}/")
    folder.queue(f"http://{mine}/later")
    folder.queue(f"http://{theirs}/later")
    folder.db.add_robots(f"http://{mine}", 404, b"", time.time())
    folder.db.add_robots(f"http://{theirs}", 404, b"", time.time())
    folder.stop()
    level(folder.config, folder.db)  # the coordinator's part
    part = Part(index=0, count=2, up=None, inbox=None)  # type: ignore[arg-type]
    stats, frontier = restore_part(folder.config, folder.db, part)
    assert set(stats.hosts) == {mine}
    assert frontier.seen(f"http://{mine}/") and not frontier.seen(f"http://{theirs}/")
    assert frontier.pending == 1
    assert frontier.robots_rules(f"http://{mine}") is not None
    assert frontier.robots_rules(f"http://{theirs}") is None


def test_robots_answers_come_back_with_the_lifetime_they_have_left(folder: Folder) -> None:
    folder.db.add_robots("https://a.test", 200, ROBOTS, NOW - 3000)  # 600 s left
    folder.db.add_robots("https://b.test", 404, b"", NOW - 4000)  # expired
    folder.db.add_robots("https://c.test", 404, b"", NOW - 10)
    folder.db.flush()
    stats = CrawlStats()
    frontier = build_frontier(folder.config.politeness, stats)
    restored = restore_robots(
        folder.config, folder.db, frontier, stats, keep=lambda o: o != "https://c.test", now=NOW
    )
    assert restored == 1
    left = frontier.host("a.test").origins["https://a.test"].expires - time.monotonic()
    assert 590 < left <= 600
    assert frontier.robots_rules("https://b.test") is None
    assert frontier.robots_rules("https://c.test") is None
    assert stats.hosts["a.test"].robots_status == "rules, crawl-delay 2"


def test_the_snapshot_round_trips_and_a_bad_one_is_ignored(folder: Folder) -> None:
    stats = CrawlStats()
    stats.skipped_other = 3
    stats.host("a.test").robots_status = "allow-all (404)"
    stats.sitemaps["a.test"] = ["https://a.test/sitemap.xml"]
    save_snapshot(folder.db, stats)
    saved = load_snapshot(folder.db)
    assert saved is not None
    rebuilt = rebuild_stats(folder.db, saved, 4)
    assert rebuilt.skipped_other == 3
    assert rebuilt.hosts["a.test"].robots_status == "allow-all (404)"
    assert rebuilt.sitemaps == {"a.test": ["https://a.test/sitemap.xml"]}
    for garbage in ("{not json", "[1, 2]", ""):
        folder.db.set_meta("stats", garbage)
        assert load_snapshot(folder.db) is None


def test_stripped_session_ids_carry_over_as_a_figure_not_an_error(folder: Folder) -> None:
    stats = CrawlStats()
    stats.session_ids_stripped = 4
    save_snapshot(folder.db, stats)
    assert rebuild_stats(folder.db, load_snapshot(folder.db), 4).session_ids_stripped == 4
    # A snapshot of an older version counted them as the error trap_session_id.
    old = {"errors": {"trap_session_id": 5, "trap_too_deep": 1}, "session_ids_stripped": 0}
    rebuilt = rebuild_stats(folder.db, old, 4)
    assert rebuilt.session_ids_stripped == 5
    assert dict(rebuilt.errors) == {"trap_too_deep": 1}
    runs = carry_runs(old, [{"session_ids_stripped": 2}], 1.0)
    assert rebuild_stats(folder.db, runs, 4).session_ids_stripped == 7


def test_stats_can_be_recounted_for_some_hosts_only(folder: Folder) -> None:
    folder.fetch("http://a.test/")
    folder.fetch("http://b.test/")
    folder.stop()
    stats = rebuild_stats(folder.db, None, 1, keep=lambda host: host == "a.test")
    assert (stats.pages, set(stats.hosts)) == (1, {"a.test"})


# -- found by mutation testing ---------------------------------------------------------------


def fact(
    url: str, status: int, *, body: bytes = b"", elapsed: float = 0.0, at: float = NOW, **kw: str
) -> PageRow:
    """A ``pages`` row with exactly the facts the statistics are counted from."""
    fetched = FetchResult(
        url=url, status=status, body=body, started_at=at, elapsed=elapsed, error=kw.get("error", "")
    )
    return page_row(
        fetched, None, depth=0, referrer=None, host=host_of(url), purpose=kw.get("purpose", "page")
    )


def test_every_counter_is_recounted_exactly_from_the_rows(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db", clock=lambda: NOW) as db:
        rows = [
            fact("http://skip.test/", 200, body=b"x" * 7, elapsed=9.0),  # not kept, and first
            fact("http://a.test/", 200, body=b"x" * 100, elapsed=0.5, at=NOW + 7201),
            fact("http://a.test/old", 200, body=b"x", elapsed=0.0, at=NOW - 100),
            fact("http://a.test/robots.txt", 200, body=b"x" * 10, elapsed=0.25, purpose="robots"),
            fact("http://a.test/gone", 404, body=b"x" * 5, elapsed=0.125),
            fact("http://b.test/moved", 300, elapsed=0.0625),
            fact("http://b.test/bad", 400, body=b"x" * 3),
            fact("http://b.test/slow", 0, elapsed=1.0, error="timeout"),
        ]
        for row in rows:
            db.add_page(row)
        db.add_discovered([(f"http://a.test/{n}", "a.test", 1, None) for n in range(3)])
        db.flush()
        stats = rebuild_stats(db, None, 4, keep=lambda host: host != "skip.test")
    assert stats.concurrency == 4
    assert (stats.requests, stats.responses, stats.robots_requests) == (7, 6, 1)
    assert (stats.pages, stats.redirects, stats.discovered) == (2, 1, 3)
    assert stats.statuses == {200: 3, 404: 1, 300: 1, 400: 1}
    assert stats.bytes == 119
    assert stats.fetch_time == 0.5 + 0.25 + 0.125 + 0.0625
    assert stats.errors == {"http_404": 1, "http_400": 1, "timeout": 1}
    assert stats.hourly == {2: 1, 0: 1}
    a, b = stats.hosts["a.test"], stats.hosts["b.test"]
    assert (a.pages, a.bytes, a.time_spent, a.errors) == (2, 116, 0.875, 1)
    assert (b.pages, b.bytes, b.time_spent, b.errors) == (0, 3, 1.0625, 2)
    assert "skip.test" not in stats.hosts


def test_a_snapshot_carries_only_what_the_rows_cannot_give(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db") as db:
        saved = {
            "errors": {"trap_depth": 3, "bad_redirect": 2, "timeout": 9},
            "robots_status": {"a.test": "allow-all (404)"},
            "sitemaps": {"a.test": ["https://a.test/s.xml"]},
        }
        stats = rebuild_stats(db, saved, 1)
        assert stats.errors == {"trap_depth": 3, "bad_redirect": 2}
        assert (stats.skipped_robots, stats.skipped_other, stats.elapsed_before) == (0, 0, 0.0)
        assert stats.hosts["a.test"].robots_status == "allow-all (404)"
        assert stats.sitemaps == {"a.test": ["https://a.test/s.xml"]}
        odd = {"errors": ["trap_x"], "robots_status": ["a"], "sitemaps": ["b"], "x": 1}
        stats = rebuild_stats(db, odd, 1)
        assert (stats.errors, stats.hosts, stats.sitemaps) == ({}, {}, {})


def test_carried_fields_keep_known_robots_status_only() -> None:
    stats = CrawlStats()
    stats.host("a.test").robots_status = "rules"
    stats.host("b.test")
    assert carried_fields(stats)["robots_status"] == {"a.test": "rules"}


def test_a_worker_carries_the_duration_of_earlier_runs(folder: Folder) -> None:
    part = Part(index=0, count=1, up=None, inbox=None)  # type: ignore[arg-type]
    folder.db.set_meta("stats", json.dumps({"duration_seconds": 40.0}))
    stats, _ = restore_part(folder.config, folder.db, part)
    assert (stats.elapsed_before, stats.concurrency) == (40.0, 4)
    folder.db.set_meta("stats", json.dumps({"pages": 1}))
    stats, _ = restore_part(folder.config, folder.db, part)
    assert stats.elapsed_before == 0.0


def test_every_robots_answer_is_looked_at_and_counted(folder: Folder) -> None:
    folder.db.add_robots("https://gone.test", 404, b"", NOW - 3600)  # no time left: first
    folder.db.add_robots("https://a.test", 404, b"", NOW - 3599.5)  # half a second left
    folder.db.add_robots("https://b.test", 404, b"", NOW)
    folder.db.flush()
    stats = CrawlStats()
    frontier = build_frontier(folder.config.politeness, stats)
    assert restore_robots(folder.config, folder.db, frontier, stats, now=NOW) == 2
    assert frontier.robots_rules("https://gone.test") is None
    assert frontier.robots_rules("https://a.test") is not None


def test_resume_keeps_the_index_unsorted_for_its_writer(folder: Folder) -> None:
    folder.fetch("http://b.test/1")
    folder.fetch("http://a.test/2")
    folder.stop()
    before = (folder.out / "index.cdxj").read_text()
    stats, _ = resume_crawl(folder.config, folder.db)
    assert (folder.out / "index.cdxj").read_text() == before
    assert stats.concurrency == 4


def test_repair_reports_each_file_it_cannot_cut_and_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "warc"
    torn: list[Path] = []
    for prefix in ("gossamer-w0", "gossamer-w1"):
        with WarcStore(folder, prefix=prefix, clock=lambda: NOW) as store:
            store.write(page("http://a.test/"))
        path = store.files[-1]
        path.write_bytes(path.read_bytes() + b"\x1f\x8b\x08\x00")
        torn.append(path)
    first, second = torn
    (folder / f"{first.name}.torn").symlink_to(tmp_path / "nowhere")  # the copy cannot be made
    size = second.stat().st_size
    with caplog.at_level(logging.WARNING, logger="gossamer.engine.resume"):
        cuts = repair_last_warc(folder, set())
    assert [cut.path for cut in cuts] == [second]
    assert [record.getMessage() for record in caplog.records] == [
        f"cannot repair WARC file {first.name}: File exists",
        f"cut a torn record of 4 bytes at offset {size - 4} off {second.name}"
        f" (kept in {second.name}.torn)",
    ]


def test_without_a_database_the_rows_are_read_from_crawl_db(folder: Folder) -> None:
    folder.fetch("http://a.test/1")
    folder.stop()
    torn = folder.tear()
    damaged = bytearray(torn.read_bytes())
    damaged[20:28] = b"JUNKJUNK"  # its warcinfo no longer says it is ours: only rows do
    torn.write_bytes(bytes(damaged))
    index = folder.out / "index.cdxj"
    index.write_bytes(index.read_bytes() + b"com,torn)/ 2023")
    cuts = repair_tails(folder.out)
    assert [cut.path for cut in cuts] == [torn]
    assert index.read_bytes().endswith(b"\n")


def html(
    url: str, markup: bytes, *, coded: bytes | None = None, coding: str | None = None
) -> FetchResult:
    """A 200 text/html response; ``coded`` is its body as sent with Content-Encoding ``coding``."""
    headers = (("Content-Type", "text/html"),) + ((("Content-Encoding", coding),) if coding else ())
    return FetchResult(
        url=url,
        status=200,
        response_headers=headers,
        body=markup if coded is None else coded,
        content=markup,
        content_type="text/html",
        started_at=NOW,
    )


def test_a_lock_file_that_cannot_be_created_is_reported_with_its_path(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "crawl"
    not_a_folder.write_text("")
    lock = not_a_folder / ".gossamer.lock"
    with pytest.raises(StoreError) as raised:
        CrawlLock(not_a_folder).__enter__()
    assert str(raised.value) == f"cannot create lock file {lock}: File exists"


def test_a_database_with_a_single_row_holds_a_crawl(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db") as db:
        db.add_page(fact("http://a.test/robots.txt", 404, purpose="robots"))  # no urls row
        db.flush()
        assert (db.discovered_count(), db.page_count()) == (0, 1)
        assert holds_crawl(tmp_path, db)


def test_counters_add_up_over_rows_of_the_same_kind(tmp_path: Path) -> None:
    with MetadataDB(tmp_path / "crawl.db", clock=lambda: NOW) as db:
        for row in (
            fact("http://a.test/robots.txt", 200, purpose="robots"),
            fact("http://b.test/robots.txt", 404, purpose="robots"),
            fact("http://a.test/old", 301),
            fact("http://a.test/older", 302),
            fact("http://a.test/1", 200, at=NOW + 10),
            fact("http://a.test/2", 200, at=NOW + 3599),
            fact("http://a.test/3", 200, at=NOW + 3600),
        ):
            db.add_page(row)
        db.flush()
        stats = rebuild_stats(db, None, 1)
    assert (stats.robots_requests, stats.redirects, stats.pages) == (2, 2, 3)
    assert stats.hourly == {0: 2, 1: 1}


def test_the_open_database_says_which_warc_files_are_ours_even_before_a_commit(
    folder: Folder,
) -> None:
    fetched = page("http://a.test/1")
    fields = {"gossamer-purpose": "page", "gossamer-host": "a.test", "gossamer-depth": "0"}
    folder.last = folder.warc.write(fetched, fields)
    # The row is buffered in this connection only: crawl.db on disk does not have it yet.
    folder.db.add_page(page_row(fetched, folder.last, depth=0, referrer=None, host="a.test"))
    folder.warc.close()
    folder.cdxj.close(sort=False)
    torn = folder.tear()
    damaged = bytearray(torn.read_bytes())
    damaged[20:28] = b"JUNKJUNK"  # its warcinfo no longer says it is ours: only the row does
    torn.write_bytes(bytes(damaged))
    leveled = level(folder.config, folder.db)
    assert [cut.path for cut in leveled.cuts] == [torn]


def test_level_writes_replayed_lines_into_the_crawls_own_index(folder: Folder) -> None:
    folder.archive(page("http://a.test/lost"))  # its CDXJ line and its row were lost
    folder.stop()
    index = folder.out / "index.cdxj"
    assert index.read_text() == ""
    level(folder.config, folder.db)
    [line] = index.read_text().splitlines()
    assert '"url": "http://a.test/lost"' in line
    assert sorted(path.name for path in folder.out.glob("*.cdxj")) == ["index.cdxj"]


@pytest.mark.parametrize("reindex", [True, False])
def test_level_indexes_every_record_only_when_asked_to_reindex(
    folder: Folder, reindex: bool
) -> None:
    folder.fetch("http://a.test/1")  # row and index line both there: nothing to replay
    folder.stop()
    rebuilt = folder.out / "rebuilt.cdxj"
    leveled = level(folder.config, folder.db, index=rebuilt, reindex=reindex)
    assert leveled.outcome.replayed == 0
    lines = rebuilt.read_text().splitlines()
    assert len(lines) == (1 if reindex else 0)
    assert all('"url": "http://a.test/1"' in line for line in lines)


def test_level_queues_the_seeds_first_with_depth_0(folder: Folder) -> None:
    folder.stop()
    seeds = [("https://s.test/", "http://s.test/"), ("http://t.test/a",)]
    leveled = level(folder.config, folder.db, seeds=seeds)
    assert leveled.backlog == {"s.test": 1, "t.test": 1}
    assert folder.backlog("s.test") == [("https://s.test/", 0, None)]
    assert folder.backlog("t.test") == [("http://t.test/a", 0, None)]


@pytest.mark.parametrize("max_redirects", [0, 1])
def test_a_replayed_redirect_follows_the_crawls_max_redirects(
    folder: Folder, max_redirects: int
) -> None:
    folder.config = dataclasses.replace(
        folder.config, fetch=FetchConfig(max_redirects=max_redirects)
    )
    moved = FetchResult(
        url="http://a.test/old",
        status=301,
        response_headers=(("Location", "/new"),),
        started_at=NOW,
    )
    folder.archive(moved)
    folder.stop()
    level(folder.config, folder.db)
    # One hop is allowed by max_redirects 1 and is one too many for max_redirects 0.
    queued = [("http://a.test/new", 0, "http://a.test/old")] if max_redirects else []
    assert folder.backlog("a.test") == queued


@pytest.mark.parametrize("respect", [True, False])
def test_a_replayed_page_follows_the_crawls_nofollow_setting(folder: Folder, respect: bool) -> None:
    politeness = dataclasses.replace(folder.config.politeness, respect_nofollow=respect)
    folder.config = dataclasses.replace(folder.config, politeness=politeness)
    markup = b"<html><a href='/ok'>o</a> <a href='/nf' rel='nofollow'>n</a></html>"
    folder.archive(html("http://a.test/", markup))
    folder.stop()
    level(folder.config, folder.db)
    urls = [url for url, _, _ in folder.backlog("a.test")]
    assert urls == (["http://a.test/ok"] if respect else ["http://a.test/ok", "http://a.test/nf"])


@pytest.mark.parametrize("room", [-1, 0])
def test_a_replayed_body_is_decoded_within_the_crawls_max_decoded(
    folder: Folder, room: int
) -> None:
    markup = b"<html><a href='/next'>n</a></html>"
    folder.config = dataclasses.replace(
        folder.config, fetch=FetchConfig(max_decoded=len(markup) + room)
    )
    folder.archive(html("http://a.test/", markup, coded=gzip.compress(markup), coding="gzip"))
    folder.stop()
    level(folder.config, folder.db)
    row = folder.db.page("http://a.test/")
    assert row is not None
    if room < 0:  # one byte too many: refused as the live crawl refused it
        assert (row.error, folder.backlog("a.test")) == ("decompression_bomb", [])
    else:
        assert (row.error, folder.backlog("a.test")) == (None, [("http://a.test/next", 1, row.url)])


@pytest.mark.parametrize("enabled", [True, False])
def test_a_replayed_robots_txt_names_its_sitemaps_only_when_sitemaps_are_on(
    folder: Folder, enabled: bool
) -> None:
    scope = dataclasses.replace(folder.config.scope, sitemaps=enabled)
    folder.config = dataclasses.replace(folder.config, scope=scope)
    body = ROBOTS + b"Sitemap: http://a.test/map.xml\n"
    robots = FetchResult(
        url="http://a.test/robots.txt",
        status=200,
        response_headers=(("Content-Type", "text/plain"),),
        body=body,
        content=body,
        content_type="text/plain",
        started_at=NOW,
    )
    folder.archive(robots, purpose="robots")
    folder.stop()
    level(folder.config, folder.db)
    assert [origin for origin, *_ in folder.db.robots_answers()] == ["http://a.test"]
    sitemap = "http://a.test/map.xml"
    assert list(folder.db.sitemaps()) == ([(sitemap, "a.test", 0)] if enabled else [])
    urls = [url for url, _, _ in folder.backlog("a.test")]
    assert urls == ([sitemap] if enabled else [])


def test_a_resumed_frontier_reads_its_backlog_and_skips_what_robots_txt_forbids(
    folder: Folder,
) -> None:
    folder.queue("http://a.test/private/x")
    folder.queue("http://a.test/later")
    folder.db.add_robots("http://a.test", 200, ROBOTS, time.time() - 60)
    folder.stop()
    stats, frontier = resume_crawl(folder.config, folder.db)
    assert (frontier.pending, stats.skipped_robots) == (2, 0)
    job = frontier.pop_ready()  # loads both from crawl.db; the first is disallowed
    assert job is not None
    assert (job.url, job.depth, job.robots) == ("http://a.test/later", 1, False)
    assert (frontier.pending, stats.skipped_robots) == (0, 1)


def test_resume_says_where_it_resumes_and_how_much_it_found(
    folder: Folder, caplog: pytest.LogCaptureFixture
) -> None:
    folder.fetch("http://a.test/1")
    folder.fetch("http://a.test/2", row=False)
    folder.queue("http://a.test/later")
    folder.stop()
    with caplog.at_level(logging.WARNING, logger="gossamer.engine.resume"):
        resume_crawl(folder.config, folder.db)
    ours = [r.getMessage() for r in caplog.records if r.name == "gossamer.engine.resume"]
    assert ours == [
        f"resuming crawl in {folder.out}: 2 pages so far, 2 URLs queued, 1 records replayed"
    ]


@pytest.mark.parametrize("respect", [False, True])
def test_a_link_handed_to_another_worker_and_lost_in_a_crash_is_queued_again(
    folder: Folder, respect: bool
) -> None:
    # Worker A fetched a page and recorded its links; the link to b.test went to worker B,
    # which was killed before it recorded the URL. Links the scope refused stay refused.
    folder.fetch("http://a.test/")
    folder.db.add_links("http://a.test/", ["http://b.test/lost", "http://a.test/" + "x/" * 40])
    folder.db.flush()
    folder.stop()
    config = dataclasses.replace(
        folder.config,
        workers=2,
        politeness=dataclasses.replace(folder.config.politeness, respect_nofollow=respect),
    )
    leveled = level(config, folder.db)
    if respect:  # the links table cannot tell a nofollow link from another: left alone
        assert "b.test" not in leveled.backlog
        return
    assert leveled.backlog == {"b.test": 1}
    assert folder.backlog("b.test") == [("http://b.test/lost", 1, "http://a.test/")]


def test_a_seed_still_queued_gets_its_fallbacks_back_on_resume(folder: Folder) -> None:
    """A bare-domain seed is https:// then http://; a crawl stopped before the https form was
    fetched must still fall back to http:// when it resumes (crawl.db keeps the URL only)."""
    folder.db.add_discovered([("https://a.test/", "a.test", 0, None)])
    folder.queue("https://a.test/deeper")  # depth 1: a link, never a seed form
    folder.db.add_robots("https://a.test", 200, b"", time.time() - 60)
    folder.stop()
    forms = [("https://a.test/", "http://a.test/"), ("https://b.test/",)]
    _, frontier = resume_crawl(folder.config, folder.db, seed_fallbacks(forms))
    job = frontier.pop_ready()  # the seed first: the disk backlog keeps crawl order
    assert job is not None
    assert (job.url, job.depth, job.fallbacks) == ("https://a.test/", 0, ("http://a.test/",))
    frontier.done(job, success=True)
    later = frontier.pop_ready()
    assert later is not None
    assert (later.url, later.fallbacks) == ("https://a.test/deeper", ())  # a link: none


def test_every_form_of_a_seed_but_the_last_has_the_rest_to_try() -> None:
    assert seed_fallbacks([("https://a.test/", "http://a.test/", "http://www.a.test/")]) == {
        "https://a.test/": ("http://a.test/", "http://www.a.test/"),
        "http://a.test/": ("http://www.a.test/",),
    }


def test_the_per_host_budget_holds_over_a_resume(folder: Folder) -> None:
    """A host given its budget of URLs before a stop gets no fresh share on resume."""
    budget = dataclasses.replace(
        folder.config, scope=dataclasses.replace(folder.config.scope, max_pages_per_host=2)
    )
    folder.queue("http://a.test/1")
    folder.queue("http://a.test/2")
    folder.queue("http://b.test/1")
    folder.stop()
    _, frontier = resume_crawl(budget, folder.db)
    assert frontier.add(Job("http://a.test/3", "a.test"), host_budget=2) is Admission.OVER_BUDGET
    assert (
        frontier.add(Job("http://b.test/2", "b.test"), host_budget=2) is not Admission.OVER_BUDGET
    )
    assert frontier.add(Job("http://b.test/3", "b.test"), host_budget=2) is Admission.OVER_BUDGET
