"""Admission: a URL met again (the same link on many pages) gets the same verdict, counted the
same way, whether its facts come from the rules or from memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import pairwise
from pathlib import Path

import pytest

from gossamer.config import ScopeConfig
from gossamer.crawling import admission
from gossamer.crawling.admission import Admitter
from gossamer.engine.partition import Part, host_owner
from gossamer.frontier import Admission, Job
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.urls.traps import TrapFamilies


class Queue:
    """A frontier that records what it is asked."""

    def __init__(self) -> None:
        self.urls: set[str] = set()
        self.added: list[Job] = []

    def seen(self, url: str) -> bool:
        return url in self.urls

    def add(self, job: Job, *, host_budget: int | None = None) -> Admission:
        self.added.append(job)
        if job.url in self.urls:
            return Admission.DUPLICATE
        self.urls.add(job.url)
        return Admission.QUEUED


@pytest.fixture
def db(tmp_path: Path) -> Iterator[MetadataDB]:
    with MetadataDB(tmp_path / "crawl.db") as opened:
        yield opened


def test_a_refused_url_met_again_is_refused_and_counted_again(db: MetadataDB) -> None:
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(ScopeConfig(), frontier=queue, stats=stats, db=db)
    deep = "http://a.test/" + "x/" * 40
    for round_ in range(3):
        assert not admitter.admit(deep, 1, None)
        # Stripped of its session id, then queued the first time only.
        assert admitter.admit("http://a.test/p?sid=1&q=1", 1, None) is (round_ == 0)
    assert stats.errors["trap_too_deep"] == 3
    # A stripped session id is counted as what it is, a normalisation, not as an error.
    assert stats.session_ids_stripped == 3
    assert "trap_session_id" not in stats.errors
    assert stats.host("a.test").errors == 3  # the three too-deep refusals only
    assert stats.skipped_other == 3
    # The session id was stripped before dedup: the URL without it was queued, once.
    assert [job.url for job in queue.added] == ["http://a.test/p?q=1"]


def test_a_url_met_again_is_queued_once_and_asks_the_queue_once(db: MetadataDB) -> None:
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(ScopeConfig(), frontier=queue, stats=stats, db=db)
    assert admitter.admit("http://a.test/", 0, None)
    for depth in range(1, 5):
        assert not admitter.admit("http://a.test/", depth, "http://a.test/x")
    assert len(queue.added) == 1
    assert stats.discovered == 1
    # A URL another admitter queued is found seen by asking the queue.
    other = Admitter(ScopeConfig(), frontier=queue, stats=stats, db=db)
    assert not other.admit("http://a.test/", 1, None)
    assert len(queue.added) == 1


def test_verdicts_hold_when_the_memory_starts_over(
    db: MetadataDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(admission, "KNOWN_URLS", 4)
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(ScopeConfig(max_depth=3), frontier=queue, stats=stats, db=db)
    urls = [f"http://a.test/{n}" for n in range(10)]
    assert all(admitter.admit(url, 1, None) for url in urls)
    assert not any(admitter.admit(url, 1, None) for url in urls)
    assert not any(admitter.admit(url, 4, None) for url in urls)  # too deep, counted
    assert stats.skipped_other == 10
    assert len(queue.added) == 10


def test_a_calendar_is_cut_as_the_family_rule_says(db: MetadataDB) -> None:
    stats, queue = CrawlStats(), Queue()
    admitter = Admitter(ScopeConfig(max_family=3), frontier=queue, stats=stats, db=db)
    month = [f"http://a.test/cal/2026/{m:02d}" for m in range(1, 13)]
    queued = []
    for depth, (here, onward) in enumerate(pairwise(month), start=1):
        queued.append(admitter.admit(onward, depth + 1, here))
        # The same link met again on the same page is never queued twice.
        assert not admitter.admit(onward, depth + 1, here)
    # The family reaches depth 1 (the first month, as a referrer); the chain stops 3 hops on.
    assert queued == [True, True] + [False] * 9
    # Each refusal of a URL never queued counts, the second meeting on a page as well.
    assert stats.errors["trap_family"] == 18


# -- trap families kept in crawl.db (issue 27) ----------------------------------------------
MONTHS = [f"http://a.test/cal/2026/{m:02d}" for m in range(1, 13)]


def test_a_new_admitter_goes_on_from_the_families_crawl_db_keeps(db: MetadataDB) -> None:
    scope = ScopeConfig(max_family=3)
    first = Admitter(scope, frontier=Queue(), stats=CrawlStats(), db=db)
    assert first.admit(MONTHS[1], 2, MONTHS[0])  # the family reaches depth 1: kept
    assert first.admit(MONTHS[2], 3, MONTHS[1])  # the same family, no deeper: nothing kept
    assert list(db.trap_families()) == [("a.test/cal/#/#", "a.test", 1)]
    # A resumed crawl: a new admitter, the frontier restored (month 4 waits in it).
    stats = CrawlStats()
    resumed = Admitter(scope, frontier=Queue(), stats=stats, db=db)
    assert not resumed.admit(MONTHS[3], 4, MONTHS[2])  # 3 hops below depth 1, as before
    assert stats.errors["trap_family"] == 1
    assert list(db.trap_families()) == [("a.test/cal/#/#", "a.test", 1)]


def test_without_a_family_limit_nothing_is_kept(db: MetadataDB) -> None:
    admitter = Admitter(ScopeConfig(max_family=None), frontier=Queue(), stats=CrawlStats(), db=db)
    for depth, (here, onward) in enumerate(pairwise(MONTHS), start=1):
        assert admitter.admit(onward, depth + 1, here)
    assert list(db.trap_families()) == []


def test_a_worker_restores_the_families_of_the_hosts_it_owns(
    db: MetadataDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    hosts = [f"h{n}.test" for n in range(20)]
    for host in hosts:
        db.add_family(f"{host}/cal/#", host, 1)
    restored: list[str] = []

    class Spy(TrapFamilies):
        def restore(self, families: Iterable[tuple[str, int]]) -> None:
            pairs = list(families)
            restored.extend(family for family, _ in pairs)
            super().restore(pairs)

    monkeypatch.setattr(admission, "TrapFamilies", Spy)
    part = Part(index=1, count=2, up=None, inbox=None)  # type: ignore[arg-type]
    Admitter(ScopeConfig(), frontier=Queue(), stats=CrawlStats(), db=db, part=part)
    mine = [host for host in hosts if host_owner(host, 2) == 1]
    assert 0 < len(mine) < len(hosts)
    assert restored == [f"{host}/cal/#" for host in mine]
