"""The per-address cap of the fetch stage: at most N exchanges in flight to one server address.

The frontier limits requests per host name, but on shared hosting hundreds of names point at one
machine. With ``max_per_ip`` set, the fetcher asks this gate for the first address a URL's host
resolves to (through the same :class:`~gossamer.fetch.resolver.GuardedResolver` as the
connector, so ``--resolve`` rules and the SSRF guard apply, with the connector's 300 s cache
lifetime) and holds a slot of that address for the whole exchange, body included.

Slots are counted per address only while someone holds or awaits one, so the table holds the
addresses in use, not every address seen; the name cache is bounded in entries and time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp.abc import AbstractResolver

from gossamer.errors import FetchError

DNS_TTL = 300.0  # seconds, as the connector's ttl_dns_cache
DNS_CACHE_SIZE = 10_000  # host names remembered; far above the names in flight at once


class ResolvedNames:
    """The first address each host name resolves to, through the guarded resolver, cached.

    Also how a request sent through a proxy has its target checked by the SSRF guard: the
    proxy resolves the name itself, so the fetcher resolves it first, to refuse it.
    """

    def __init__(
        self,
        resolver: AbstractResolver,
        *,
        ttl: float = DNS_TTL,
        cache_size: int = DNS_CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._resolver = resolver
        self._ttl = ttl
        self._cache_size = cache_size
        self._clock = clock
        self._names: OrderedDict[tuple[str, int], tuple[str, float]] = OrderedDict()

    async def address(self, host: str, port: int) -> str:
        """The first address ``host`` resolves to (a literal: itself).

        Raises what the resolver raises (``FetchError`` kinds ``dns``, ``blocked_address``);
        failures are not cached, as in the connector.
        """
        bare = host.strip("[]")
        try:
            return str(ipaddress.ip_address(bare))  # a literal: the guard ran before
        except ValueError:
            pass
        key = (bare.lower().rstrip("."), port)
        now = self._clock()
        cached = self._names.get(key)
        if cached is not None and cached[1] > now:
            self._names.move_to_end(key)
            return cached[0]
        results = await self._resolver.resolve(bare, port, family=socket.AF_UNSPEC)
        if not results:
            raise FetchError("dns", f"cannot resolve {host}: no addresses")
        address = str(ipaddress.ip_address(results[0]["host"]))
        self._names[key] = (address, now + self._ttl)
        self._names.move_to_end(key)
        while len(self._names) > self._cache_size:
            self._names.popitem(last=False)
        return address

    def __len__(self) -> int:
        return len(self._names)


@dataclass(slots=True)
class _Slot:
    semaphore: asyncio.Semaphore
    users: int = 0  # exchanges holding or awaiting the semaphore


class AddressGate:
    """Counts exchanges per server address; ``acquire`` waits while ``limit`` are in flight."""

    def __init__(
        self,
        resolver: AbstractResolver,
        limit: int,
        *,
        ttl: float = DNS_TTL,
        cache_size: int = DNS_CACHE_SIZE,
        clock: Callable[[], float] = time.monotonic,
        names: ResolvedNames | None = None,
    ) -> None:
        """``names``: the cache to share with the fetcher's other uses of it (a new one if
        None, built from ``resolver``, ``ttl``, ``cache_size`` and ``clock``)."""
        if limit < 1:
            raise ValueError(f"per-address limit must be at least 1, not {limit}")
        self._limit = limit
        if names is None:
            names = ResolvedNames(resolver, ttl=ttl, cache_size=cache_size, clock=clock)
        self._names = names
        self._slots: dict[str, _Slot] = {}

    async def address(self, host: str, port: int) -> str:
        """The address an exchange with ``host`` counts against: the first one it resolves to.

        Raises what the resolver raises (``FetchError`` kinds ``dns``, ``blocked_address``);
        failures are not cached, as in the connector.
        """
        return await self._names.address(host, port)

    async def acquire(self, address: str) -> None:
        """Wait for a slot of ``address``; pair every successful call with :meth:`release`."""
        slot = self._slots.get(address)
        if slot is None:
            slot = self._slots[address] = _Slot(asyncio.Semaphore(self._limit))
        slot.users += 1
        try:
            await slot.semaphore.acquire()
        except BaseException:
            # Cancelled while waiting: no slot is held, but the count must still drop.
            self._leave(address, slot)
            raise

    def release(self, address: str) -> None:
        slot = self._slots[address]
        slot.semaphore.release()
        self._leave(address, slot)

    def _leave(self, address: str, slot: _Slot) -> None:
        slot.users -= 1
        if slot.users == 0:
            del self._slots[address]

    def in_flight(self) -> dict[str, int]:
        """Exchanges holding or awaiting a slot, per address in use (for tests and reports)."""
        return {address: slot.users for address, slot in self._slots.items()}

    @property
    def cached_names(self) -> int:
        return len(self._names)
