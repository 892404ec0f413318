"""Store stage, archive: the bytes of the three records written for every exchange.

Data flow: ``WarcStore.write`` (``store/warc.py``) -> **warcbytes** -> one gzip member each.
A request, a response and a metadata record are written for every page, so their bytes are
built here in one pass: the header block joined once, each digest computed once (the payload
digest is handed in, the block digest hashes the HTTP header block and then the payload), and
no record object or stream in between. The bytes are exactly those warcio's ``WARCWriter``
writes for the same record (same fields, order, digests and framing); a test holds the two
side by side. Rare records (warcinfo, revisit) and headers that are not plain ASCII, which
warcio percent-encodes, still go through warcio (``can_build`` says which).
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterable, Mapping

__all__ = [
    "EMPTY_DIGEST",
    "RecordIds",
    "can_build",
    "digest_text",
    "http_block",
    "metadata_record",
    "record_ids",
    "request_record",
    "response_record",
]

_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
# Two base32 characters per 10 bits: a SHA-1 (160 bits) is 16 table lookups.
_PAIRS = tuple(a + b for a in _B32 for b in _B32)
_SHIFTS = tuple(range(150, -1, -10))


def digest_text(sha1: bytes) -> str:
    """``sha1:`` + the base32 of a SHA-1 digest, as WARC-*-Digest fields spell it."""
    if len(sha1) != 20:
        return "sha1:" + base64.b32encode(sha1).decode("ascii")
    number = int.from_bytes(sha1, "big")
    return "sha1:" + "".join([_PAIRS[(number >> shift) & 1023] for shift in _SHIFTS])


EMPTY_DIGEST = digest_text(hashlib.sha1(b"").digest())


def record_ids(count: int) -> list[str]:
    """``count`` fresh WARC-Record-IDs: random (version 4) UUIDs as ``<urn:uuid:...>``."""
    raw = bytearray(os.urandom(16 * count))
    ids = []
    for start in range(0, 16 * count, 16):
        raw[start + 6] = (raw[start + 6] & 0x0F) | 0x40  # version 4
        raw[start + 8] = (raw[start + 8] & 0x3F) | 0x80  # the RFC 4122 variant
        h = raw[start : start + 16].hex()
        ids.append(f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>")
    return ids


class RecordIds:
    """A source of fresh record ids that asks the system for random bytes once per
    ``batch`` ids (three are used per page)."""

    def __init__(self, batch: int = 256) -> None:
        self._batch = batch
        self._ready: list[str] = []

    def __call__(self) -> str:
        if not self._ready:
            self._ready = record_ids(self._batch)
            self._ready.reverse()
        return self._ready.pop()


def can_build(first_line: str, headers: Iterable[tuple[str, str]]) -> bool:
    """Whether an HTTP header block is plain ASCII (otherwise warcio percent-encodes it)."""
    return first_line.isascii() and all((name + value).isascii() for name, value in headers)


def http_block(first_line: str | bytes, headers: Iterable[tuple[str, str]]) -> bytes:
    """An HTTP header block: the first line, each header, a blank line (ASCII headers).

    A first line given as bytes is kept as it is (a status line with the server's own
    reason phrase, which may hold bytes 0x80-0xFF)."""
    if isinstance(first_line, bytes):
        lines = ["", *(f"{name}: {value}" for name, value in headers), "", ""]
        return first_line + "\r\n".join(lines).encode("ascii")
    lines = [first_line, *(f"{name}: {value}" for name, value in headers), "", ""]
    return "\r\n".join(lines).encode("ascii")


def _record(warc_fields: list[tuple[str, str]], block: bytes, payload: bytes) -> bytes:
    """A whole record: WARC/1.1, the fields, a blank line, the block, two CRLFs."""
    lines = ["WARC/1.1", *(f"{name}: {value}" for name, value in warc_fields), "", ""]
    return b"".join(("\r\n".join(lines).encode("utf-8"), block, payload, b"\r\n\r\n"))


def response_record(
    first: Mapping[str, str], payload_digest: str, truncated: bool, head: bytes, body: bytes
) -> bytes:
    """A ``response`` record: ``first`` are its leading WARC fields (``exchange_headers``),
    ``head`` the HTTP header block (``http_block``), ``body`` the payload."""
    block_digest = hashlib.sha1(head)
    block_digest.update(body)
    fields = [*first.items(), ("WARC-Payload-Digest", payload_digest)]
    if truncated:
        fields.append(("WARC-Truncated", "length"))
    fields += [
        ("WARC-Block-Digest", digest_text(block_digest.digest())),
        ("Content-Type", "application/http; msgtype=response"),
        ("Content-Length", str(len(head) + len(body))),
    ]
    return _record(fields, head, body)


def request_record(first: Mapping[str, str], head: bytes) -> bytes:
    """A ``request`` record (GET, no body): ``first`` are its leading WARC fields."""
    fields = [
        *first.items(),
        ("WARC-Payload-Digest", EMPTY_DIGEST),
        ("WARC-Block-Digest", digest_text(hashlib.sha1(head).digest())),
        ("Content-Type", "application/http; msgtype=request"),
        ("Content-Length", str(len(head))),
    ]
    return _record(fields, head, b"")


def metadata_record(first: Mapping[str, str], body: bytes) -> bytes:
    """A ``metadata`` record of ``application/warc-fields``; its block is its payload."""
    digest = digest_text(hashlib.sha1(body).digest())
    fields = [
        *first.items(),
        ("WARC-Payload-Digest", digest),
        ("WARC-Block-Digest", digest),
        ("Content-Type", "application/warc-fields"),
        ("Content-Length", str(len(body))),
    ]
    return _record(fields, b"", body)
