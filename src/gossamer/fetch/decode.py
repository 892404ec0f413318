"""Content-Encoding removal with a hard cap on the decoded size.

The fetcher hands over the body exactly as received; this module undoes gzip, deflate, br and
zstd (in reverse order of the header, for layered encodings) and refuses to produce more than
``limit`` bytes, so a compression bomb costs at most ``limit`` bytes of memory.

With ``partial=True`` (robots.txt, which RFC 9309 lets a crawler cut at 500 KiB) a stream that
decodes to more than ``limit`` bytes yields its first ``limit`` bytes, and a stream cut short
yields what it held, instead of an error.
"""

from __future__ import annotations

import io
import zlib

import brotli
import zstandard

from gossamer.errors import FetchError


class DecodeError(FetchError):
    """The body could not be decoded; ``kind`` is the statistics key."""


def _bounded(out: bytes, limit: int, partial: bool) -> bytes:
    if len(out) <= limit:
        return out
    if partial:
        return out[:limit]
    raise DecodeError("decompression_bomb", f"decoded body exceeds {limit} bytes")


def _inflate(data: bytes, limit: int, wbits: int, partial: bool) -> bytes:
    decoder = zlib.decompressobj(wbits)
    out = _bounded(decoder.decompress(data, limit + 1), limit, partial)
    if not decoder.eof and not decoder.unconsumed_tail and not partial:
        # The stream stopped before its end marker: a truncated transfer.
        raise DecodeError("bad_encoding", "compressed stream is truncated")
    return out


def _gunzip(data: bytes, limit: int, partial: bool) -> bytes:
    try:
        return _inflate(data, limit, zlib.MAX_WBITS | 16, partial)
    except zlib.error as exc:
        raise DecodeError("bad_encoding", f"corrupt gzip stream: {exc}") from exc


def _deflate(data: bytes, limit: int, partial: bool) -> bytes:
    # Servers disagree on whether "deflate" means a zlib wrapper or raw deflate; accept both.
    try:
        return _inflate(data, limit, zlib.MAX_WBITS, partial)
    except zlib.error:
        try:
            return _inflate(data, limit, -zlib.MAX_WBITS, partial)
        except zlib.error as exc:
            raise DecodeError("bad_encoding", f"corrupt deflate stream: {exc}") from exc


def _unbrotli(data: bytes, limit: int, partial: bool) -> bytes:
    try:
        decoder = brotli.Decompressor()
        out = decoder.process(data, output_buffer_limit=limit + 1)
    except brotli.error as exc:
        raise DecodeError("bad_encoding", f"corrupt brotli stream: {exc}") from exc
    out = _bounded(bytes(out), limit, partial)
    if not decoder.is_finished() and not partial:
        raise DecodeError("bad_encoding", "brotli stream is truncated")
    return out


def _unzstd(data: bytes, limit: int, partial: bool) -> bytes:
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(
            io.BytesIO(data), read_across_frames=True
        )
        out = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise DecodeError("bad_encoding", f"corrupt zstd stream: {exc}") from exc
    return _bounded(out, limit, partial)


_DECODERS = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _deflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}

ACCEPT_ENCODING = "gzip, deflate, br, zstd"


def decode_body(
    body: bytes, content_encoding: str | None, limit: int, *, partial: bool = False
) -> bytes:
    """Return ``body`` with every listed content coding removed, at most ``limit`` bytes."""
    if not content_encoding:
        return body
    codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
    data = body
    for coding in reversed(codings):
        if coding == "identity":
            continue
        decoder = _DECODERS.get(coding)
        if decoder is None:
            raise DecodeError("bad_encoding", f"unsupported content coding {coding!r}")
        data = decoder(data, limit, partial)
    return data
