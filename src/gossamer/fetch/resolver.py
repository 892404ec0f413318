"""Name resolution for the fetcher: ``--resolve`` overrides plus the SSRF guard.

Every connection the fetcher opens to a host name goes through :class:`GuardedResolver`, so
the guard applies after DNS, to the first request and to every redirect hop alike; IP literals
never reach a resolver, so the fetcher puts them through :func:`check_literal` before each
request. ``--resolve`` entries (like curl's) map a host name, or a ``*.suffix`` wildcard, to an
address; mapped names are trusted and may point at loopback, which is how the local test web is
crawled.

A proxy the user named is trusted as a ``--resolve`` name is: the fetcher registers it with
:meth:`GuardedResolver.trust_proxy` before its first use, and a failure to resolve it is the
route's fault (``proxy_error``), not the target host's. Through a proxy, the target's own name
is put through this resolver by the fetcher beforehand, so the guard still judges it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
from dataclasses import dataclass

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from gossamer.errors import BlockedAddressError, ConfigError, FetchError


@dataclass(frozen=True, slots=True)
class ResolveRule:
    """One ``--resolve`` entry: ``pattern`` is a host name or ``*.suffix``; ``port`` 0 = any."""

    pattern: str
    port: int
    address: str

    def matches(self, host: str, port: int) -> bool:
        if self.port and port and self.port != port:
            return False
        if self.pattern.startswith("*."):
            return host.endswith(self.pattern[1:]) or host == self.pattern[2:]
        return host == self.pattern


def parse_resolve(entry: str) -> ResolveRule:
    """Parse ``HOST:IP``, ``HOST:PORT:IP`` or ``*.domain:IP`` (IPv6 in brackets)."""
    text = entry.strip()
    if text.endswith("]") and ":[" in text:
        head, _, address = text.rpartition(":[")
        address = address[:-1]
    else:
        head, _, address = text.rpartition(":")
    host, _, port_text = head.partition(":")
    try:
        ipaddress.ip_address(address)
        port = int(port_text) if port_text else 0
    except ValueError as exc:
        raise ConfigError(
            f"invalid --resolve entry {entry!r} (use HOST:IP or HOST:PORT:IP)"
        ) from exc
    if not host or not 0 <= port <= 65535:
        raise ConfigError(f"invalid --resolve entry {entry!r} (use HOST:IP or HOST:PORT:IP)")
    return ResolveRule(host.lower().rstrip("."), port, address)


def is_public(address: str) -> bool:
    """True for globally routable unicast addresses: the only ones fetched by default."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_literal(host: str, rules: tuple[ResolveRule, ...], allow_private: bool) -> None:
    """Apply the guard to a URL whose host is an IP literal (no resolver call happens).

    A rule opts in the names it maps, not the address it maps them to: ``*.web.test:127.0.0.1``
    must not make ``http://127.0.0.1/`` fetchable, or any page of the test web could redirect
    the crawler into the machine it runs on. Only a rule naming the literal itself opts it in.
    """
    bare = host.strip("[]")
    if ":" not in bare and not bare.replace(".", "").isdigit():
        # A name: an IPv4 literal is digits and dots only, an IPv6 one has colons. Checked
        # first because every fetch asks, and a failed ip_address() costs an exception.
        return
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return
    if allow_private or is_public(bare):
        return
    for rule in rules:
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(rule.pattern.strip("[]")) == ip:
                return
    raise BlockedAddressError(f"refusing non-public address {bare}")


class GuardedResolver(AbstractResolver):
    """Resolves through ``--resolve`` rules first, then the system; refuses private targets."""

    def __init__(
        self,
        rules: tuple[ResolveRule, ...],
        *,
        allow_private: bool,
        system: AbstractResolver | None = None,
    ) -> None:
        self._rules = rules
        self._allow_private = allow_private
        self._system = system if system is not None else ThreadedResolver()
        self._proxies: set[tuple[str, int]] = set()  # (name, port) of the proxies in use

    def trust_proxy(self, host: str, port: int) -> None:
        """Resolve ``host`` unguarded when asked with ``port``: a proxy the user named (a
        corporate proxy often has a private address)."""
        self._proxies.add((host.lower().rstrip("."), port))

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        name = host.lower().rstrip(".")
        for rule in self._rules:
            if rule.matches(name, port):
                fam = socket.AF_INET6 if ":" in rule.address else socket.AF_INET
                return [
                    ResolveResult(
                        hostname=host,
                        host=rule.address,
                        port=port,
                        family=fam,
                        proto=0,
                        flags=socket.AI_NUMERICHOST,
                    )
                ]
        proxy = (name, port) in self._proxies
        try:
            results = await self._system.resolve(host, port, family)
        except (OSError, UnicodeError) as exc:
            if proxy:
                raise FetchError("proxy_error", f"cannot resolve the proxy {host}: {exc}") from exc
            # UnicodeError: the name cannot even be IDNA-encoded (a label over 63 octets), which
            # the system resolver reports before asking any server.
            raise FetchError("dns", f"cannot resolve {host}: {exc}") from exc
        if self._allow_private or proxy:
            return results
        allowed = [r for r in results if is_public(r["host"])]
        if not allowed:
            raise BlockedAddressError(f"{host} resolves only to non-public addresses")
        return allowed

    async def close(self) -> None:
        await self._system.close()
