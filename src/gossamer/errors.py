"""The exception tree of Gossamer.

Expected outcomes (a 404, a robots.txt refusal, a non-HTML body) are values, not exceptions.
Exceptions are for faults, and every one raised by Gossamer descends from one root::

    GossamerError
    ├── ConfigError        bad configuration file, flag or environment value
    ├── SeedError          seeds file missing, unreadable, or without one valid seed
    ├── StoreError         the output folder cannot be written (permissions, full disk)
    └── FetchError         a fault below HTTP: DNS, connect, TLS, protocol, limits
        └── BlockedAddressError   the SSRF guard refused an address

Outside errors are wrapped where they enter, with ``raise ... from exc``.
"""


class GossamerError(Exception):
    """Root of every fault Gossamer raises on purpose."""


class ConfigError(GossamerError):
    """A configuration file, flag or environment value is invalid."""


class SeedError(GossamerError):
    """The seeds file cannot be used."""


class StoreError(GossamerError):
    """The crawl output cannot be written."""


class FetchError(GossamerError):
    """A fetch failed below the HTTP layer; ``kind`` names the error class for statistics."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class BlockedAddressError(FetchError):
    """The SSRF guard refused to connect to an address."""

    def __init__(self, message: str) -> None:
        super().__init__("blocked_address", message)
