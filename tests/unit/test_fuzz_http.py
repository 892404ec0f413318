"""Fuzzing the fetch stage: any bytes a server sends become a FetchResult, never an exception.

A hostile server on 127.0.0.1 sends each generated answer verbatim and hangs up; the real
Fetcher (aiohttp's parser, our caps, our decoders) reads it. Generated answers range from raw
noise to nearly valid HTTP with mangled status lines, lengths, chunking and content codings.
Each example uses a host name of its own, so no pooled connection carries one answer into the
next. The decoders are fuzzed directly as well, since the wire tests reach them only sometimes.
"""

from __future__ import annotations

import asyncio
import gzip
import itertools
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import brotli
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gossamer.fetch.decode import DecodeError, decode_body
from gossamer.fetch.fetcher import Fetcher, FetchLimits
from gossamer.fetch.resolver import parse_resolve
from gossamer.fetch.result import FetchResult
from gossamer.testweb.hostile import HOSTILE_RESOLVE, HostileServer

LIMITS = FetchLimits(
    connect_timeout=1.0,
    read_timeout=0.5,
    total_timeout=1.0,
    max_body=4096,
    max_decoded=8192,
    keep_types=("text/html", "text/plain"),
)
# Every kind the fetcher may report; "other" (an exception nobody mapped) is not among them.
KINDS = {
    "",
    "bad_body",
    "bad_encoding",
    "bad_response",
    "connection_reset",
    "decompression_bomb",
    "disconnected",
    "skipped_type",
    "timeout",
    "too_large",
    "total_timeout",
}


@dataclass(slots=True)
class Wire:
    """A server and a fetcher that live on one event loop for the whole module."""

    loop: asyncio.AbstractEventLoop
    server: HostileServer
    fetcher: Fetcher
    names: Iterator[int]

    def fetch(self, answer: bytes) -> tuple[str, FetchResult]:
        case = f"fuzz-{next(self.names)}"
        self.server.raw[case] = answer
        url = self.server.url(case)
        try:
            return url, self.loop.run_until_complete(self.fetcher.fetch(url))
        finally:
            del self.server.raw[case]


@pytest.fixture(scope="module")
def wire() -> Iterator[Wire]:
    loop = asyncio.new_event_loop()
    server = HostileServer()
    fetcher = Fetcher(
        user_agent="gossamer-fuzz/1.0",
        limits=LIMITS,
        resolve=(parse_resolve(HOSTILE_RESOLVE),),
        allow_private=False,
        connections=8,
    )
    loop.run_until_complete(server.start())
    loop.run_until_complete(fetcher.__aenter__())
    try:
        yield Wire(loop, server, fetcher, itertools.count())
    finally:
        loop.run_until_complete(fetcher.__aexit__(None, None, None))
        loop.run_until_complete(server.stop())
        loop.close()


_status_line = st.one_of(
    st.builds(
        "{} {} {}\r\n".format,
        st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/2", "HTTP/0.9", "HTTX/1.1", "http/1.1", ""]),
        st.one_of(st.integers(-5, 1200), st.sampled_from([200, 204, 301, 304, 429, 503])),
        st.text(max_size=12),
    ).map(lambda line: line.encode("utf-8", "surrogatepass")),
    st.binary(max_size=40),
)
_header_names = [
    "Content-Length",
    "Transfer-Encoding",
    "Content-Encoding",
    "Content-Type",
    "Location",
    "Connection",
    "Retry-After",
    "X-Any",
]
_header_values = [
    "chunked",
    "gzip",
    "br",
    "zstd",
    "deflate, gzip",
    "identity",
    "-1",
    "0",
    "10",
    "99999999999999999999",
    "text/html",
    "text/html; charset=utf-16",
    "text/plain",
    "image/png",
    "close",
    "",
]
_header = st.one_of(
    st.builds(
        "{}: {}\r\n".format,
        st.sampled_from(_header_names),
        st.one_of(st.sampled_from(_header_values), st.text(max_size=20)),
    ).map(lambda line: line.encode("utf-8", "surrogatepass")),
    st.binary(max_size=30).map(lambda raw: raw + b"\r\n"),
)


def _chunked(parts: list[bytes], size_text: str | None) -> bytes:
    pieces = [f"{len(p):x}".encode() + b"\r\n" + p + b"\r\n" for p in parts]
    end = b"0\r\n\r\n" if size_text is None else size_text.encode("utf-8", "replace") + b"\r\n"
    return b"".join(pieces) + end


_payload = st.binary(max_size=300)
_body = st.one_of(
    _payload,
    st.builds(_chunked, st.lists(st.binary(max_size=40), max_size=5), st.none() | st.text()),
    st.builds(lambda data, cut: gzip.compress(data, mtime=0)[:cut], _payload, st.integers(0, 400)),
    _payload.map(zlib.compress),
    _payload.map(brotli.compress),
    _payload.map(zstandard.ZstdCompressor().compress),
    st.just(gzip.compress(b"<p>" * 100_000, mtime=0)),  # decodes far beyond max_decoded
)
_good_header = st.builds(
    "{}: {}\r\n".format, st.sampled_from(_header_names), st.sampled_from(_header_values)
).map(str.encode)
_answer = st.one_of(
    st.binary(max_size=500),
    # Well-formed heads over any body: lengths, chunking and codings that lie or clash.
    st.builds(
        lambda status, version, headers, body: (
            f"HTTP/{version} {status} Reason\r\n".encode()
            + b"Content-Type: text/html\r\n"
            + b"".join(headers)
            + b"\r\n"
            + body
        ),
        st.integers(200, 599),
        st.sampled_from(["1.1", "1.0"]),
        st.lists(_good_header, max_size=5),
        _body,
    ),
    # Anything goes: status lines, header lines and separators mangled too.
    st.builds(
        lambda status, headers, gap, body: status + b"".join(headers) + gap + body,
        _status_line,
        st.lists(_header, max_size=8),
        st.sampled_from([b"\r\n", b"\n", b""]),
        _body,
    ),
)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(answer=_answer)
def test_any_bytes_from_a_server_become_a_fetch_result(wire: Wire, answer: bytes) -> None:
    url, result = wire.fetch(answer)
    assert isinstance(result, FetchResult)
    assert result.url == url
    assert result.error in KINDS, f"{result.error}: {result.error_detail}"
    if result.status == 0:
        assert result.error
    else:
        assert 100 <= result.status <= 999
    assert len(result.body) <= LIMITS.max_body
    assert len(result.content) <= LIMITS.max_decoded
    # Counted, not timed (the limits that bound a fetch's time are tested by error kind in
    # fetch/test_hostile_fetch.py): one request per example, or two when the server hung up
    # without a status line and aiohttp sent the GET again, as RFC 9112 9.3.1 allows once.
    case = url.split("//", 1)[1].split(".", 1)[0]
    assert 1 <= len(wire.server.hits(case)) <= (2 if result.status == 0 else 1)


_codings = st.lists(
    st.sampled_from(["gzip", "x-gzip", "deflate", "br", "zstd", "identity", "compress", ""]),
    max_size=3,
).map(", ".join)


@settings(max_examples=300, deadline=None)
@given(body=st.one_of(_payload, _body), coding=_codings, partial=st.booleans())
def test_decoding_never_raises_anything_but_decode_error(
    body: bytes, coding: str, partial: bool
) -> None:
    try:
        out = decode_body(body, coding, 8192, partial=partial)
    except DecodeError as exc:
        assert exc.kind in {"bad_encoding", "decompression_bomb"}
        assert not (partial and exc.kind == "decompression_bomb")
    else:
        assert len(out) <= max(8192, len(body))  # identity passes the body through as is
