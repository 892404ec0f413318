"""Test web, origins: the sockets one server answers on, and how a link names one of them.

Role in the data flow: the generator writes each absolute link with a :class:`Via` (which of the
server's listening sockets it points at) because ports are not known until the server binds;
the server, once bound, describes its sockets as :class:`Origins` and the renderer, the seeds and
the expected set turn every ``Via`` into a concrete ``scheme://host:port`` through it.

A ``Via`` the server does not listen on falls back to the main http port, so a web that links
across origins is still served, and still judged consistently, by a single-port server.

URLs are written the way a crawler canonicalises them: lowercase host, the port left out only
when it is the scheme's default (never the case for the ephemeral ports tests bind).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

DEFAULT_PORTS = {"http": 80, "https": 443}


class Via(Enum):
    """Which of the server's sockets an absolute link points at."""

    MAIN = "main"  # plain http on the server's first port
    SECOND = "second"  # plain http on the first of its extra ports
    TLS = "tls"  # https


@dataclass(frozen=True, slots=True)
class Origins:
    """Where a running server listens: its main http port, extra http ports, an https port."""

    http: int
    extra_http: tuple[int, ...] = ()
    https: int | None = None

    @classmethod
    def of(cls, where: int | Origins) -> Origins:
        """A bare port means a single-port server."""
        return where if isinstance(where, Origins) else cls(where)

    def resolve(self, via: Via) -> tuple[str, int]:
        """(scheme, port) for a link; a socket the server lacks falls back to the main one."""
        if via is Via.SECOND and self.extra_http:
            return "http", self.extra_http[0]
        if via is Via.TLS and self.https is not None:
            return "https", self.https
        return "http", self.http

    def all(self) -> list[tuple[str, int]]:
        """Every (scheme, port) the server answers on, main port first."""
        found = [("http", self.http), *(("http", port) for port in self.extra_http)]
        return found + ([("https", self.https)] if self.https is not None else [])


def make_url(scheme: str, host: str, port: int, target: str) -> str:
    """``scheme://host:port/target`` with the port left out when it is the default."""
    netloc = host if DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    return f"{scheme}://{netloc}{target}"
