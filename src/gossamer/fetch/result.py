"""Values produced by the fetch stage and consumed by parse and store."""

from __future__ import annotations

from dataclasses import dataclass, field

Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One HTTP exchange, as seen on the wire.

    ``body`` holds the payload exactly as received after de-chunking (still content-encoded);
    ``content`` holds the decoded entity (gzip, br, ... removed). ``error`` is set, with
    ``status`` 0, when the fetch failed below HTTP; then no WARC record is written.
    """

    url: str
    status: int
    reason: str = ""
    http_version: str = "1.1"
    request_headers: Headers = ()
    response_headers: Headers = ()
    body: bytes = b""
    content: bytes = b""
    content_type: str = ""
    started_at: float = 0.0  # wall clock, seconds since the epoch
    elapsed: float = 0.0  # seconds from request to last byte
    remote_ip: str = ""
    error: str = ""  # error kind for statistics, e.g. "timeout", "too_large", "dns"
    error_detail: str = ""
    truncated: bool = False
    skipped_body: bool = False  # body not read: type not kept or too large by headers
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def header(self, name: str) -> str | None:
        """First value of a response header, case-insensitively."""
        lname = name.lower()
        for key, value in self.response_headers:
            if key.lower() == lname:
                return value
        return None

    @property
    def is_redirect(self) -> bool:
        return self.status in (301, 302, 303, 307, 308)
