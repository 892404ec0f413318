"""Content-Encoding removal with a hard cap on the decoded size.

The fetcher hands over the body exactly as received; this module undoes gzip, deflate, br and
zstd (in reverse order of the header, for layered encodings) and refuses to produce more than
``limit`` bytes, so a compression bomb costs at most ``limit`` bytes of memory.

A stream that stops before its end marker was cut short on the way (a dropped connection, a
Content-Length that lied): it is a ``bad_encoding`` error, since what it held is not what the
server meant to send. Two flags relax that for robots.txt, which RFC 9309 lets a crawler cut at
500 KiB: ``keep_prefix`` (a stream that decodes to more than ``limit`` bytes yields its first
``limit`` bytes, not a ``decompression_bomb``) and ``cut`` (the fetcher itself stopped reading
the body at its cap, so an early end is expected, not a fault). ``partial`` sets both.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass

import brotli
import zstandard

from gossamer.errors import FetchError


class DecodeError(FetchError):
    """The body could not be decoded; ``kind`` is the statistics key."""


@dataclass(frozen=True, slots=True)
class _Bounds:
    limit: int  # decoded bytes allowed
    keep_prefix: bool  # more than ``limit``: keep the first ``limit`` bytes instead of refusing
    cut: bool  # the body was cut short by the fetcher's own cap: an early end is no fault


def _bounded(out: bytes, bounds: _Bounds) -> bytes:
    if len(out) <= bounds.limit:
        return out
    if bounds.keep_prefix:
        return out[: bounds.limit]
    raise DecodeError("decompression_bomb", f"decoded body exceeds {bounds.limit} bytes")


def _truncated(coding: str) -> DecodeError:
    return DecodeError("bad_encoding", f"{coding} stream is truncated")


def _inflate(data: bytes, bounds: _Bounds, wbits: int, coding: str) -> bytes:
    decoder = zlib.decompressobj(wbits)
    out = decoder.decompress(data, bounds.limit + 1)
    # A stream with more to give than the limit stops early with input left: not a cut.
    full = len(out) > bounds.limit or decoder.unconsumed_tail
    out = _bounded(out, bounds)
    if not decoder.eof and not full and not bounds.cut:
        # The stream stopped before its end marker: a truncated transfer.
        raise _truncated(coding)
    return out


def _gunzip(data: bytes, bounds: _Bounds) -> bytes:
    try:
        return _inflate(data, bounds, zlib.MAX_WBITS | 16, "gzip")
    except zlib.error as exc:
        raise DecodeError("bad_encoding", f"corrupt gzip stream: {exc}") from exc


def _deflate(data: bytes, bounds: _Bounds) -> bytes:
    # Servers disagree on whether "deflate" means a zlib wrapper or raw deflate; accept both.
    try:
        return _inflate(data, bounds, zlib.MAX_WBITS, "deflate")
    except zlib.error:
        try:
            return _inflate(data, bounds, -zlib.MAX_WBITS, "deflate")
        except zlib.error as exc:
            raise DecodeError("bad_encoding", f"corrupt deflate stream: {exc}") from exc


def _unbrotli(data: bytes, bounds: _Bounds) -> bytes:
    try:
        decoder = brotli.Decompressor()
        out = bytes(decoder.process(data, output_buffer_limit=bounds.limit + 1))
    except brotli.error as exc:
        raise DecodeError("bad_encoding", f"corrupt brotli stream: {exc}") from exc
    full = len(out) > bounds.limit
    out = _bounded(out, bounds)
    if not decoder.is_finished() and not full and not bounds.cut:
        raise _truncated("brotli")
    return out


def _unzstd(data: bytes, bounds: _Bounds) -> bytes:
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(data), read_across_frames=True
        )
        out = reader.read(bounds.limit + 1)
        # The reader ends a cut frame as if it were whole; ask each frame whether it ended.
        # Safe to decode again: the whole output is known to be within the limit.
        if len(out) <= bounds.limit and not bounds.cut and not _zstd_frames_end(data):
            raise _truncated("zstd")
    except zstandard.ZstdError as exc:
        raise DecodeError("bad_encoding", f"corrupt zstd stream: {exc}") from exc
    return _bounded(out, bounds)


def _zstd_frames_end(data: bytes) -> bool:
    """Whether every zstd frame in ``data`` reaches its end."""
    rest = data
    while rest:
        frame = zstandard.ZstdDecompressor().decompressobj()
        frame.decompress(rest)
        if not frame.eof:
            return False
        rest = frame.unused_data
    return True


_DECODERS = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _deflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}

ACCEPT_ENCODING = "gzip, deflate, br, zstd"


def decode_body(
    body: bytes,
    content_encoding: str | None,
    limit: int,
    *,
    partial: bool = False,
    keep_prefix: bool = False,
    cut: bool = False,
) -> bytes:
    """Return ``body`` with every listed content coding removed, at most ``limit`` bytes.

    ``keep_prefix``, ``cut`` and ``partial`` (both) as the module docstring says.
    """
    if not content_encoding:
        return body
    bounds = _Bounds(limit, keep_prefix or partial, cut or partial)
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    data = body
    for coding in reversed(codings):
        if coding == "identity":
            continue
        decoder = _DECODERS.get(coding)
        if decoder is None:
            raise DecodeError("bad_encoding", f"unsupported content coding {coding!r}")
        data = decoder(data, bounds)
        if bounds.keep_prefix and len(data) >= limit:
            # Kept to its first ``limit`` bytes: an inner coding then ends early by our hand.
            bounds = _Bounds(limit, keep_prefix=True, cut=True)
    return data
