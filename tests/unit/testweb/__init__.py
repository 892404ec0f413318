"""Helpers shared by the test web's tests: a hand-moved clock, a loopback client session, a raw
blocking connection for exact control of request timing, and an independent robots.txt matcher
used to check the generator's ground truth.

The matcher here is deliberately separate from ``gossamer.robots``: it exists so the test web
can be checked without trusting the crawler's own parser (RFC 9309 longest match, '*' and '$',
the product token's group replacing '*').
"""

from __future__ import annotations

import http.client
import re
import socket
import ssl
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


def loopback_session(
    ssl_context: ssl.SSLContext | None = None, **kwargs: Any
) -> aiohttp.ClientSession:
    """A client session whose every connection goes to 127.0.0.1; ``ssl_context`` decides which
    certificates https trusts (the test web's CA, say)."""
    connector = aiohttp.TCPConnector(
        resolver=LoopbackResolver(), limit=32, ssl=ssl_context if ssl_context else True
    )
    return aiohttp.ClientSession(connector=connector, **kwargs)


class RawConnection:
    """One blocking keep-alive connection to a host of the test web on one of its ports.

    ``send`` and ``receive`` are separate so a test decides exactly when each request leaves;
    ``receive`` returns only once the whole response (Content-Length bytes) has arrived.
    """

    def __init__(self, host: str, port: int, context: ssl.SSLContext | None = None) -> None:
        self.host = host
        plain = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock = context.wrap_socket(plain, server_hostname=host) if context else plain

    def send(self, target: str, method: str = "GET") -> None:
        head = f"{method} {target} HTTP/1.1\r\nHost: {self.host}\r\nUser-Agent: raw/1.0\r\n\r\n"
        self.sock.sendall(head.encode("ascii"))

    def receive(self, method: str = "GET") -> tuple[int, bytes]:
        response = http.client.HTTPResponse(self.sock, method=method)
        response.begin()
        return response.status, response.read()

    def get(self, target: str, method: str = "GET") -> tuple[int, bytes]:
        self.send(target, method)
        return self.receive(method)

    def close(self) -> None:
        self.sock.close()


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
