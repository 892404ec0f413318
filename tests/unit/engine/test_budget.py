"""The page target of a --workers crawl, granted to the workers where the work is."""

from __future__ import annotations

from gossamer.engine.budget import GRANT_MAX, PageBudget, grant_size


def test_grants_are_a_few_per_worker_and_bounded() -> None:
    assert grant_size(80, 2) == 10
    assert grant_size(3, 4) == 1  # never 0 while pages are left
    assert grant_size(10**9, 2) == GRANT_MAX


def test_the_first_grants_never_exceed_the_target() -> None:
    budget = PageBudget(left=3, workers=4)
    assert budget.first_grants() == [1, 1, 1, 0]
    assert budget.left == 0


def test_a_worker_with_work_gets_what_another_gave_back() -> None:
    budget = PageBudget(left=16, workers=2)
    assert budget.first_grants() == [2, 2]
    assert budget.ask(0, seen=1, full=False) == 1  # 12 left: grants of 1 (12 // 8)
    for _ in range(11):
        budget.ask(0, seen=budget.sent[0], full=False)
    assert budget.left == 0
    assert budget.ask(0, seen=budget.sent[0], full=True) == 0  # nothing left: it waits
    assert budget.waiting == [0]
    assert not budget.reached([False, False])
    # Worker 1 runs dry holding its 2 pages: they go to worker 0 at once.
    assert budget.give_back(1, 2) == [(0, 1)]
    assert budget.waiting == []  # granted: it asks again when it needs more
    assert budget.left == 1
    assert budget.ask(0, seen=budget.sent[0], full=False) == 1


def test_the_target_is_reached_when_every_worker_is_full_or_idle() -> None:
    budget = PageBudget(left=4, workers=2)
    budget.first_grants()  # 1 each, 2 left
    budget.ask(0, seen=1, full=False)
    budget.ask(1, seen=1, full=False)
    assert budget.left == 0
    assert not budget.reached([False, False])
    budget.ask(0, seen=2, full=True)
    assert not budget.reached([False, False])  # worker 1 may still store what it holds
    budget.give_back(1, 0)
    assert budget.reached([False, True])


def test_a_full_worker_that_had_not_seen_its_last_grant_is_not_full() -> None:
    budget = PageBudget(left=8, workers=1)
    budget.first_grants()  # 2 sent, 6 left
    assert budget.ask(0, seen=1, full=False) == 1
    budget.left = 0  # every page granted
    budget.ask(0, seen=1, full=True)  # said before the grant reached it
    assert not budget.reached([False])
    budget.ask(0, seen=2, full=True)
    assert budget.reached([False])
