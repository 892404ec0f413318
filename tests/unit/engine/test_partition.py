"""Splitting a crawl across workers by host: who owns a URL, what is forwarded, and when."""

from __future__ import annotations

import asyncio
import queue
from typing import Any

from gossamer.engine.partition import FLUSH_AT, Discovery, Part, host_owner, owner
from gossamer.urls import host_of


def make_part(index: int = 0, count: int = 3) -> tuple[Part, queue.Queue[Any], queue.Queue[Any]]:
    up: queue.Queue[Any] = queue.Queue()
    inbox: queue.Queue[Any] = queue.Queue()
    return Part(index=index, count=count, up=up, inbox=inbox), up, inbox  # type: ignore[arg-type]


def drain(channel: queue.Queue[Any]) -> list[Any]:
    items = []
    while not channel.empty():
        items.append(channel.get_nowait())
    return items


def hosts_of_owner(wanted: int, count: int, how_many: int) -> list[str]:
    """Host names that worker ``wanted`` of ``count`` owns."""
    found = []
    n = 0
    while len(found) < how_many:
        host = f"h{n}.test"
        if host_owner(host, count) == wanted:
            found.append(host)
        n += 1
    return found


def test_every_scheme_and_port_of_a_host_belong_to_one_worker() -> None:
    forms = [
        "http://a.test/",
        "https://a.test/x",
        "http://a.test:8080/y",
        "https://a.test:8443/robots.txt",
    ]
    for workers in (1, 2, 3, 7):
        owners = {owner(url, workers) for url in forms}
        assert len(owners) == 1
        assert owners == {host_owner("a.test", workers)}


def test_ownership_is_stable_and_spread_over_every_worker() -> None:
    hosts = [f"site{n}.test" for n in range(300)]
    first = [host_owner(host, 4) for host in hosts]
    host_owner.cache_clear()
    assert [host_owner(host, 4) for host in hosts] == first  # not tied to one process
    assert set(first) == {0, 1, 2, 3}
    assert all(0 <= k < 4 for k in first)


def test_mine_agrees_with_owner() -> None:
    part, _, _ = make_part(index=1, count=3)
    for n in range(50):
        url = f"http://h{n}.test/p"
        assert part.mine(url) == (owner(url, 3) == 1)
        assert part.mine_host(host_of(url)) == part.mine(url)


def test_forwarded_urls_are_sent_in_batches_per_destination() -> None:
    part, up, _ = make_part(index=0, count=3)
    [other] = hosts_of_owner(2, 3, 1)
    for n in range(FLUSH_AT - 1):
        part.forward(f"http://{other}/{n}", 2, "http://mine.test/")
    assert drain(up) == []  # held until the batch is full
    part.forward(f"http://{other}/last", 2, None)
    [message] = drain(up)
    kind, dest, batch = message
    assert (kind, dest, len(batch)) == ("urls", 2, FLUSH_AT)
    assert batch[0] == (f"http://{other}/0", 2, "http://mine.test/")
    assert batch[-1] == (f"http://{other}/last", 2, None)


def test_flush_sends_what_is_held_and_nothing_twice() -> None:
    part, up, _ = make_part(index=0, count=3)
    one, two = hosts_of_owner(1, 3, 1)[0], hosts_of_owner(2, 3, 1)[0]
    part.forward(f"http://{one}/a", 1, None)
    part.forward(f"http://{two}/b", 1, None)
    part.flush()
    sent = {dest: batch for _, dest, batch in drain(up)}
    assert sent == {1: [(f"http://{one}/a", 1, None)], 2: [(f"http://{two}/b", 1, None)]}
    part.flush()
    assert drain(up) == []


def test_idle_is_reported_once_per_idle_spell_after_a_flush() -> None:
    part, up, _ = make_part(index=0, count=2)
    [other] = hosts_of_owner(1, 2, 1)
    part.forward(f"http://{other}/", 1, None)
    part.processed = 4
    part.report_idle(0)
    assert drain(up) == [("urls", 1, [(f"http://{other}/", 1, None)]), ("idle", 0, 4, 0, 0)]
    part.report_idle(0)
    assert drain(up) == []  # still the same idle spell
    part.busy()
    part.report_idle(0)
    assert drain(up) == [("idle", 0, 4, 0, 0)]
    part.forward(f"http://{other}/again", 1, None)  # new work also ends the spell
    part.report_idle(0)
    assert drain(up) == [
        ("urls", 1, [(f"http://{other}/again", 1, None)]),
        ("idle", 0, 4, 0, 0),
    ]


def test_a_worker_asks_for_pages_before_it_runs_out_and_gives_back_the_rest() -> None:
    up: queue.Queue[Any] = queue.Queue()
    inbox: queue.Queue[Any] = queue.Queue()
    part = Part(index=1, count=2, up=up, inbox=inbox, allowance=10)  # type: ignore[arg-type]
    part.base = 3  # stored by an earlier run
    assert part.limit() == 13
    assert part.want(stored=3, dispatched=4)  # 6 left: no need to ask yet
    assert drain(up) == []
    assert part.want(stored=5, dispatched=3)  # 5 left, half a grant: ask, once
    assert part.want(stored=6, dispatched=3)
    assert drain(up) == [("ask", 1, 1, False)]
    assert not part.want(stored=10, dispatched=3)  # none left to dispatch
    assert not part.want(stored=13, dispatched=0)  # all stored: it says it is full
    assert drain(up) == [("ask", 1, 1, True)]
    part.granted(4)
    assert part.limit() == 17
    assert part.want(stored=13, dispatched=0)
    assert drain(up) == []  # 4 left: more than half of the last grant
    assert part.want(stored=15, dispatched=0)
    assert drain(up) == [("ask", 1, 2, False)]
    part.report_idle(stored=14)  # ran dry holding 3 it will not use
    assert drain(up) == [("idle", 1, 0, 2, 3)]
    assert part.limit() == 14
    part.granted(2)  # a grant sent before the coordinator saw it idle: given back at once
    part.report_idle(stored=14)
    assert drain(up) == [("idle", 1, 0, 3, 2)]


def test_without_a_page_target_a_worker_never_asks() -> None:
    part, up, _ = make_part(index=0, count=2)
    assert part.limit() is None
    assert part.want(stored=10**6, dispatched=10**6)
    assert drain(up) == []


def test_the_inbox_is_handed_to_the_event_loop_until_stop() -> None:
    part, _, inbox = make_part(index=0, count=2)
    received: list[list[Discovery]] = []
    grants: list[int] = []
    reasons: list[str] = []
    seeds: list[list[tuple[str, ...]]] = []

    async def listen() -> None:
        stopped = asyncio.Event()

        def on_stop(reason: str) -> None:
            reasons.append(reason)
            stopped.set()

        loop = asyncio.get_running_loop()
        thread = part.listen(loop, received.append, grants.append, on_stop, seeds.append)
        inbox.put(("urls", [("http://a.test/", 1, None)]))
        inbox.put(("seeds", [("https://b.test/", "http://b.test/")]))
        inbox.put(("grant", 7))
        inbox.put(("stop", "exhausted"))
        await stopped.wait()
        thread.join()
        assert not thread.is_alive()

    asyncio.run(listen())
    assert received == [[("http://a.test/", 1, None)]]
    assert seeds == [[("https://b.test/", "http://b.test/")]]
    assert grants == [7]
    assert reasons == ["exhausted"]
