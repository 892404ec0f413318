"""Content-Encoding removal, including the bombs and broken streams of the conformance set."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import brotli
import pytest
import zstandard

from gossamer.fetch.decode import DecodeError, decode_body

SAMPLES = Path(__file__).resolve().parents[2] / "conformance" / "compression"
LIMIT = 10_000_000
PAYLOAD = b"<html><title>x</title>" + b"hello " * 1000


def sample(name: str) -> bytes:
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"conformance sample {path} not found (vendored in tests/conformance)")
    return path.read_bytes()


@pytest.mark.parametrize(
    ("encoding", "encoded"),
    [
        ("gzip", gzip.compress(PAYLOAD)),
        ("x-gzip", gzip.compress(PAYLOAD)),
        ("deflate", zlib.compress(PAYLOAD)),
        ("br", brotli.compress(PAYLOAD)),
        ("zstd", zstandard.ZstdCompressor().compress(PAYLOAD)),
        ("identity", PAYLOAD),
        (None, PAYLOAD),
    ],
)
def test_each_coding_round_trips(encoding: str | None, encoded: bytes) -> None:
    assert decode_body(encoded, encoding, LIMIT) == PAYLOAD


@pytest.mark.parametrize(
    ("name", "encoding"),
    [
        ("bomb-gzip.bin", "gzip"),
        ("bomb-deflate.bin", "deflate"),
        ("bomb-br.bin", "br"),
        ("bomb-zstd.bin", "zstd"),
    ],
)
def test_bombs_are_refused_at_the_limit(name: str, encoding: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode_body(sample(name), encoding, LIMIT)
    assert info.value.kind == "decompression_bomb"


@pytest.mark.parametrize(
    ("name", "encoding"),
    [
        ("html-gzip-deflate-gzip.bin", "gzip, deflate, gzip"),
        ("html-rawdeflate.bin", "deflate"),
        ("html-zlibdeflate.bin", "deflate"),
    ],
)
def test_valid_layered_and_raw_encodings_decode(name: str, encoding: str) -> None:
    assert decode_body(sample(name), encoding, LIMIT).lstrip().lower().startswith(b"<!doctype html")


@pytest.mark.parametrize("name", ["truncated-crc-error.gz", "unexpected-eof.gz"])
def test_broken_gzip_is_a_bad_encoding(name: str) -> None:
    with pytest.raises(DecodeError) as info:
        decode_body(sample(name), "gzip", LIMIT)
    assert info.value.kind == "bad_encoding"


def test_unknown_coding_is_reported() -> None:
    with pytest.raises(DecodeError) as info:
        decode_body(b"abc", "compress", LIMIT)
    assert info.value.kind == "bad_encoding"
