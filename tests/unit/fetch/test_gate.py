"""The per-address cap: many host names on one server address share ``max_per_ip`` slots.

The Fetcher tests run a real aiohttp server on 127.0.0.1 that counts the requests it is
answering at once; three host names are mapped to it by ``--resolve`` rules.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from gossamer.errors import BlockedAddressError, FetchError
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.gate import AddressGate
from gossamer.fetch.resolver import GuardedResolver, ResolveRule, parse_resolve

from .loopback import StubResolver, serve

LIMITS = FetchLimits(
    connect_timeout=2.0,
    read_timeout=2.0,
    total_timeout=5.0,
    max_body=1_000_000,
    max_decoded=1_000_000,
    keep_types=("text/html",),
)
SHARED = ("a.shared.test", "b.shared.test", "c.shared.test")
RULES = tuple(parse_resolve(f"{name}:127.0.0.1") for name in SHARED)
FETCHES = 9


class Recorder:
    """Answers pages, counting the requests it is answering at once.

    Each answer sends its head and the start of its body, then waits: for the test to release
    it (``hold``), or until two requests are in flight at once (``crowd``).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.in_flight = 0
        self.peak = 0
        self.arrived: asyncio.Queue[asyncio.Event] = asyncio.Queue()
        self.crowded = asyncio.Event()
        self.hang = asyncio.Event()

    async def page(self, request: web.Request) -> web.StreamResponse:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        release = asyncio.Event()
        self.arrived.put_nowait(release)
        if self.in_flight >= 2:
            self.crowded.set()
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<html><p>")  # the exchange goes on while the body is read
        await (release.wait() if self.mode == "hold" else self.crowded.wait())
        self.in_flight -= 1  # before the last bytes, so the client cannot finish first
        await response.write_eof(b"</p></html>")
        return response

    async def hanging(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<html>")
        await self.hang.wait()
        return response

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/hang", self.hanging)
        app.router.add_get("/{name}.html", self.page)
        return app


class Ticks:
    """An injected clock that reads 1, 2, 3, ...: it tells when it was read, in order."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def run(
    recorder: Recorder,
    scenario: Callable[[int, Fetcher], Awaitable[None]],
    *,
    max_per_ip: int | None,
    limits: FetchLimits = LIMITS,
    clock: Callable[[], float] = time.time,
) -> None:
    async def main() -> None:
        async with (
            serve(recorder.app()) as port,
            Fetcher(
                user_agent="gossamer-test/1.0",
                limits=limits,
                resolve=RULES,
                allow_private=False,
                connections=16,
                max_per_ip=max_per_ip,
                clock=clock,
            ) as fetcher,
        ):
            try:
                await scenario(port, fetcher)
            finally:
                recorder.hang.set()

    asyncio.run(main())


def urls(port: int) -> list[str]:
    return [f"http://{SHARED[n % len(SHARED)]}:{port}/{n}.html" for n in range(FETCHES)]


def test_one_request_at_a_time_reaches_an_address_shared_by_three_names() -> None:
    recorder = Recorder("hold")

    async def scenario(port: int, fetcher: Fetcher) -> None:
        tasks = [asyncio.create_task(fetcher.fetch(url)) for url in urls(port)]
        try:
            for done in range(FETCHES):
                release = await recorder.arrived.get()
                # Every unfinished fetch is at the gate: one holds the slot (its request is at
                # the server, its body half sent), the others wait for it, so none can reach it.
                assert fetcher.in_flight_per_address() == {"127.0.0.1": FETCHES - done}
                assert recorder.in_flight == 1
                release.set()
        except BaseException:
            for task in tasks:
                task.cancel()  # a failed check must not leave fetches running
            raise
        results = await asyncio.gather(*tasks)
        assert [(r.status, r.error, r.content) for r in results] == [
            (200, "", b"<html><p></p></html>")
        ] * FETCHES
        assert recorder.peak == 1
        assert fetcher.in_flight_per_address() == {}  # nothing is kept for an idle address

    run(recorder, scenario, max_per_ip=1)


def test_two_slots_let_two_requests_in_at_once() -> None:
    recorder = Recorder("crowd")

    async def scenario(port: int, fetcher: Fetcher) -> None:
        results = await asyncio.gather(*(fetcher.fetch(url) for url in urls(port)))
        assert {r.status for r in results} == {200}
        assert recorder.peak == 2

    run(recorder, scenario, max_per_ip=2)


def test_without_a_cap_the_server_sees_concurrent_requests() -> None:
    recorder = Recorder("crowd")

    async def scenario(port: int, fetcher: Fetcher) -> None:
        results = await asyncio.gather(*(fetcher.fetch(url) for url in urls(port)))
        assert {r.status for r in results} == {200}
        assert recorder.peak >= 2
        assert fetcher.in_flight_per_address() == {}

    run(recorder, scenario, max_per_ip=None)


def test_waiting_for_a_slot_does_not_count_against_the_total_time_limit() -> None:
    recorder = Recorder("crowd")  # a lone request is never crowded: it must not be the second
    limits = FetchLimits(
        connect_timeout=1.0,
        read_timeout=5.0,
        total_timeout=1.0,
        max_body=1_000,
        max_decoded=1_000,
        keep_types=("text/html",),
    )

    async def scenario(port: int, fetcher: Fetcher) -> None:
        hanging = asyncio.create_task(fetcher.fetch(f"http://a.shared.test:{port}/hang"))
        waiting = asyncio.create_task(fetcher.fetch(f"http://b.shared.test:{port}/ok.html"))
        stuck = await hanging
        assert (stuck.status, stuck.error) == (0, "total_timeout")
        recorder.crowded.set()  # let the second answer through as soon as it arrives
        served = await waiting
        # It waited a whole total_timeout for its slot, then had a full budget of its own.
        assert (served.status, served.error) == (200, "")
        # Each fetch reads the clock as it begins and again once it holds a slot: the served
        # exchange is stamped by the last reading, taken when the stuck one let its slot go.
        assert stuck.started_at < served.started_at == clock.now == 4.0

    clock = Ticks()
    run(recorder, scenario, max_per_ip=1, limits=limits, clock=clock)


def test_resolution_failures_keep_their_error_kinds() -> None:
    async def main() -> None:
        async with Fetcher(
            user_agent="gossamer-test/1.0",
            limits=LIMITS,
            resolve=RULES,
            allow_private=False,
            connections=4,
            system_resolver=StubResolver({"rebound.example": "127.0.0.1"}),
            max_per_ip=1,
        ) as fetcher:
            nowhere = await fetcher.fetch("http://nowhere.example/")
            rebound = await fetcher.fetch("http://rebound.example/")
            literal = await fetcher.fetch("http://127.0.0.1/")
            assert (nowhere.status, nowhere.error) == (0, "dns")
            assert (rebound.status, rebound.error) == (0, "blocked_address")
            assert (literal.status, literal.error) == (0, "blocked_address")
            assert fetcher.in_flight_per_address() == {}

    asyncio.run(main())


class CountingResolver(AbstractResolver):
    """The system's DNS for the gate tests: every name is 192.0.2.<n>; counts the questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        return [
            ResolveResult(
                hostname=host,
                host=f"192.0.2.{len(self.asked)}",
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


def gate_for(
    rules: tuple[ResolveRule, ...] = RULES,
    *,
    limit: int = 1,
    cache_size: int = 100,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[AddressGate, CountingResolver]:
    system = CountingResolver()
    resolver = GuardedResolver(rules, allow_private=True, system=system)
    gate = AddressGate(resolver, limit, ttl=300.0, cache_size=cache_size, clock=clock)
    return gate, system


def test_the_address_table_holds_only_the_addresses_in_use() -> None:
    async def scenario() -> None:
        gate, _ = gate_for(limit=2)
        held = [f"10.0.0.{n}" for n in range(3)]
        for address in held:
            await gate.acquire(address)
        for n in range(10_000):  # a long crawl over many servers, three of them busy throughout
            address = f"10.{n // 250 + 1}.{n % 250}.1"
            await gate.acquire(address)
            await gate.acquire(address)
            assert len(gate.in_flight()) == 4
            gate.release(address)
            gate.release(address)
        assert gate.in_flight() == dict.fromkeys(held, 1)
        for address in held:
            gate.release(address)
        assert gate.in_flight() == {}

    asyncio.run(scenario())


def test_a_cancelled_wait_leaves_no_trace() -> None:
    async def scenario() -> None:
        gate, _ = gate_for()
        await gate.acquire("10.0.0.1")
        started = asyncio.Event()

        async def wait_for_slot() -> None:
            started.set()
            await gate.acquire("10.0.0.1")  # runs on to its wait before the test resumes

        waiter = asyncio.create_task(wait_for_slot())
        await started.wait()
        assert gate.in_flight() == {"10.0.0.1": 2}
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert gate.in_flight() == {"10.0.0.1": 1}
        gate.release("10.0.0.1")
        assert gate.in_flight() == {}

    asyncio.run(scenario())


def test_addresses_follow_the_rules_and_literals() -> None:
    rules = (parse_resolve("p.test:8080:127.0.0.2"), parse_resolve("p.test:127.0.0.3"))

    async def scenario() -> None:
        gate, system = gate_for(rules)
        assert await gate.address("p.test", 8080) == "127.0.0.2"
        assert await gate.address("p.test", 80) == "127.0.0.3"
        assert await gate.address("[::1]", 80) == "::1"
        assert await gate.address("::0001", 80) == "::1"  # one key per address, however written
        assert await gate.address("Example.ORG.", 80) == "192.0.2.1"
        assert await gate.address("example.org", 80) == "192.0.2.1"  # cached under one name
        assert system.asked == ["Example.ORG."]

    asyncio.run(scenario())


def test_the_name_cache_is_bounded_in_size_and_time() -> None:
    now = [0.0]

    async def scenario() -> None:
        gate, system = gate_for(cache_size=3, clock=lambda: now[0])
        for n in range(10):
            await gate.address(f"h{n}.example", 80)
        assert gate.cached_names == 3
        assert await gate.address("h9.example", 80) == "192.0.2.10"  # still cached
        now[0] = 299.0
        assert await gate.address("h9.example", 80) == "192.0.2.10"
        now[0] = 301.0
        assert await gate.address("h9.example", 80) == "192.0.2.11"  # asked again
        assert len(system.asked) == 11

    asyncio.run(scenario())


def test_the_gate_raises_the_resolvers_errors() -> None:
    async def scenario() -> None:
        guarded = GuardedResolver(
            (), allow_private=False, system=StubResolver({"rebound.example": "127.0.0.1"})
        )
        gate = AddressGate(guarded, 1)
        with pytest.raises(BlockedAddressError):
            await gate.address("rebound.example", 80)
        with pytest.raises(FetchError) as info:
            await gate.address("nowhere.example", 80)
        assert info.value.kind == "dns"
        assert gate.cached_names == 0  # failures are asked again next time

    asyncio.run(scenario())


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        gate_for(limit=0)
