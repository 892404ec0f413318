"""The fetch stage, bodies: how much of an answer's body is read, decoded and kept.

Data flow: ``Fetcher`` (an answer's head is in) -> **body** -> the ``FetchResult``'s body,
content and type. A page's body is read only if its type is kept and its size allowed (a 2xx
body without a usable type is read and sniffed, ``fetch/sniff.py``); a robots.txt body is cut
only by RFC 9309's 500 KiB cap, and then at a line end; every read stops at its cap.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from gossamer.fetch.decode import DecodeError, decode_body
from gossamer.fetch.sniff import RESOURCE_HEADER, computed_type, media_type, needs_sniffing
from gossamer.robots.parser import MAX_ROBOTS_BYTES, whole_lines

__all__ = ["Answer", "Chunks", "Payload", "read_capped", "read_page", "read_robots"]


class Chunks(Protocol):
    """A body stream: aiohttp's ``StreamReader``, or the HTTP/2 transport's (``fetch/http2.py``)."""

    def iter_chunked(self, n: int, /) -> AsyncIterator[bytes]: ...


class Answer(Protocol):
    """What the readers need of an answer: aiohttp's ``ClientResponse`` has it, and so does
    the HTTP/2 transport's ``H2Answer``."""

    @property
    def status(self) -> int: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def content_length(self) -> int | None: ...
    @property
    def content(self) -> Chunks: ...


@dataclass(frozen=True, slots=True)
class Payload:
    """What was read of a response's body, and the type the crawl goes by."""

    body: bytes = b""
    content: bytes = b""
    content_type: str = ""
    error: str = ""
    truncated: bool = False
    skipped: bool = False


async def read_page(
    resp: Answer,
    *,
    max_body: int,
    max_decoded: int,
    keep_types: tuple[str, ...],
    any_type: bool,
) -> Payload:
    """The body of a page (or, ``any_type``, a sitemap), if its type is kept and its size
    allowed; a 2xx body without a usable type is read and sniffed (``fetch/sniff.py``)."""

    def kept(content_type: str) -> bool:
        return media_type(content_type) in keep_types

    declared = resp.headers.get("Content-Type", "")
    success = 200 <= resp.status < 300
    sniffed = success and not any_type
    if sniffed and not needs_sniffing(declared) and not kept(declared):
        return Payload(content_type=declared, error="skipped_type", skipped=True)
    if resp.content_length is not None and resp.content_length > max_body:
        return Payload(content_type=declared, error="too_large", skipped=True)
    body, truncated = await read_capped(resp.content, max_body)
    error = "too_large" if truncated else ""
    content = b""
    if body:
        try:
            content = decode_body(body, resp.headers.get("Content-Encoding"), max_decoded)
        except DecodeError as exc:
            error = error or exc.kind
    if not sniffed or (body and not content):  # nothing decoded to look at
        return Payload(body, content, declared, error, truncated)
    nosniff = resp.headers.get("X-Content-Type-Options", "").strip().lower() == "nosniff"
    computed = computed_type(declared, content[:RESOURCE_HEADER], no_sniff=nosniff)
    if not kept(computed):
        # The same outcome as if the server had named that type: nothing archived.
        return Payload(content_type=computed, error="skipped_type", skipped=True)
    return Payload(body, content, computed, error, truncated)


async def read_robots(resp: Answer) -> Payload:
    """A robots.txt body: cut by the 500 KiB cap of RFC 9309 only, and then at a line end.

    One byte past the cap is read, to tell whether the cut falls at a line end. A body the
    network cut short is not cut by us: a compressed stream that stops early is a
    ``bad_encoding`` (aiohttp already fails a short Content-Length or broken chunking), an
    incomplete answer the robots status calls unavailable.
    """
    declared = resp.headers.get("Content-Type", "")
    body, truncated = await read_capped(resp.content, MAX_ROBOTS_BYTES + 1)
    try:
        content = decode_body(
            body,
            resp.headers.get("Content-Encoding"),
            MAX_ROBOTS_BYTES + 1,
            keep_prefix=True,
            cut=truncated,
        )
    except DecodeError as exc:
        return Payload(body, b"", declared, exc.kind, truncated)
    if truncated or len(content) > MAX_ROBOTS_BYTES:
        content = whole_lines(content, MAX_ROBOTS_BYTES, cut=truncated)
        return Payload(body, content, declared, "too_large", truncated)
    return Payload(body, content, declared)


async def read_capped(stream: Chunks, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the body, and whether there was more."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in stream.iter_chunked(65_536):
        if size + len(chunk) > limit:
            # Cut the last chunk before joining, so a huge body costs one copy of the cap.
            chunks.append(chunk[: limit - size])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False
