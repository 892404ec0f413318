"""Helpers shared by the test web's tests: a hand-moved clock, a loopback client session, and
an independent robots.txt matcher used to check the generator's ground truth.

The matcher here is deliberately separate from ``gossamer.robots``: it exists so the test web
can be checked without trusting the crawler's own parser (RFC 9309 longest match, '*' and '$',
the product token's group replacing '*').
"""

from __future__ import annotations

import re
import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

SMALL_HOSTS = 12
SMALL_PAGES = 10


class ManualClock:
    """A clock that moves only when a test moves it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class LoopbackResolver(AbstractResolver):
    """Resolves every name to 127.0.0.1, so redirects across test hosts can be followed."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host="127.0.0.1",
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
        ]

    async def close(self) -> None:
        return None


def loopback_session(**kwargs: Any) -> aiohttp.ClientSession:
    """A client session whose every connection goes to 127.0.0.1."""
    connector = aiohttp.TCPConnector(resolver=LoopbackResolver(), limit=32)
    return aiohttp.ClientSession(connector=connector, **kwargs)


def robots_allows(text: str, agent: str, target: str) -> bool:
    """May ``agent`` fetch ``target`` (path and query) under robots.txt ``text``?"""
    groups: list[tuple[list[str], list[tuple[bool, str]]]] = []
    collecting_agents = False
    for raw in text.splitlines():
        key, sep, value = raw.split("#", 1)[0].partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if not collecting_agents:
                groups.append(([], []))
            groups[-1][0].append(value.lower())
            collecting_agents = True
            continue
        collecting_agents = False
        if key in ("allow", "disallow") and groups:
            groups[-1][1].append((key == "allow", value))
    mine = [rules for agents, rules in groups if agent.lower() in agents]
    chosen = mine or [rules for agents, rules in groups if "*" in agents]
    best: tuple[int, bool] | None = None
    for rules in chosen:
        for allow, pattern in rules:
            if pattern and _pattern_matches(pattern, target):
                candidate = (len(pattern), allow)  # longer wins; on a tie, allow wins
                best = candidate if best is None or candidate > best else best
    return best is None or best[1]


def _pattern_matches(pattern: str, target: str) -> bool:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = "".join(".*" if char == "*" else re.escape(char) for char in body)
    return re.match(regex + ("$" if anchored else ""), target) is not None


def robots_delay(text: str) -> float:
    """The Crawl-delay of the test web's robots files (they only set it in the '*' group)."""
    found = re.search(r"(?im)^crawl-delay:\s*([0-9.]+)", text)
    return float(found[1]) if found else 0.0
