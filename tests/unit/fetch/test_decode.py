"""Content-Encoding removal, including the bombs and broken streams of the conformance set."""

from __future__ import annotations

import gzip
import random
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


# Text that compresses but not to nothing, so half of each stream still decodes to something.
_WORDS = random.Random(4)
TEXT = b" ".join(b"word%d" % _WORDS.randrange(5000) for _ in range(20_000))
_STREAMS = [
    ("gzip", gzip.compress(TEXT)),
    ("deflate", zlib.compress(TEXT)),
    ("deflate", zlib.compress(TEXT, wbits=-zlib.MAX_WBITS)),
    ("br", brotli.compress(TEXT)),
    ("zstd", zstandard.ZstdCompressor().compress(TEXT)),
    # Two zstd frames, the second one cut.
    ("zstd", zstandard.ZstdCompressor().compress(TEXT) + zstandard.ZstdCompressor().compress(TEXT)),
]


@pytest.mark.parametrize(("encoding", "encoded"), _STREAMS)
def test_a_stream_cut_short_is_a_bad_encoding(encoding: str, encoded: bytes) -> None:
    for cut in (len(encoded) // 3, len(encoded) - 1):
        with pytest.raises(DecodeError) as info:
            decode_body(encoded[:cut], encoding, LIMIT)
        assert info.value.kind == "bad_encoding"
        # Relaxing the size cap does not excuse a stream the network cut.
        with pytest.raises(DecodeError):
            decode_body(encoded[:cut], encoding, LIMIT, keep_prefix=True)


@pytest.mark.parametrize(("encoding", "encoded"), _STREAMS)
def test_a_stream_cut_by_our_own_cap_gives_what_it_holds(encoding: str, encoded: bytes) -> None:
    out = decode_body(encoded[: len(encoded) // 2], encoding, LIMIT, cut=True)
    assert (TEXT + TEXT).startswith(out)


def test_whole_multi_frame_zstd_decodes() -> None:
    two = zstandard.ZstdCompressor().compress(b"one ") + zstandard.ZstdCompressor().compress(b"two")
    assert decode_body(two, "zstd", LIMIT) == b"one two"


@pytest.mark.parametrize(("encoding", "encoded"), _STREAMS[:5])
def test_keep_prefix_gives_the_first_bytes_of_a_larger_stream(
    encoding: str, encoded: bytes
) -> None:
    assert decode_body(encoded, encoding, 1000, keep_prefix=True) == TEXT[:1000]
    with pytest.raises(DecodeError) as info:
        decode_body(encoded, encoding, 1000)
    assert info.value.kind == "decompression_bomb"


def test_an_inner_coding_cut_by_the_outer_ones_prefix_is_no_fault() -> None:
    layered = zlib.compress(gzip.compress(TEXT))  # "gzip, deflate": deflate was applied last
    out = decode_body(layered, "gzip, deflate", 5000, keep_prefix=True)
    assert TEXT.startswith(out)
