"""Jobs and fingerprints as written into Redis, and refused when malformed (no Redis needed)."""

from __future__ import annotations

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.distributed.codec import SHARD_BITS, decode_job, encode_job, seen_member
from gossamer.distributed.errors import SharedFrontierError
from gossamer.frontier.hosts import Job
from gossamer.frontier.seen import fingerprint


def test_jobs_round_trip() -> None:
    plain = Job(url="http://a.test/", host="a.test")
    full = Job(
        url="https://a.test/é?q=1",
        host="a.test",
        depth=3,
        referrer="http://b.test/",
        retries=2,
        hops=1,
        robots=True,
        fallbacks=("http://a.test/",),
    )
    for job in (plain, full):
        assert decode_job(encode_job(job), "a.test") == job
        assert decode_job(encode_job(job).encode(), "a.test") == job
    assert encode_job(plain) == '{"u":"http://a.test/"}'  # defaults are left out


@pytest.mark.parametrize(
    "raw",
    [
        '{"u": 5}',
        '{"u": "http://a/", "x": 1}',
        '{"u": "http://a/", "d": -1}',
        '{"u": "http://a/", "d": true}',
        '{"u": "http://a/", "f": "http://b/"}',
        '{"u": ""}',
        "[1, 2]",
    ],
)
def test_malformed_jobs_are_refused(raw: str) -> None:
    with pytest.raises(SharedFrontierError, match="malformed"):
        decode_job(raw, "a.test")


def test_seen_member_is_the_signed_fingerprint_and_its_top_bits() -> None:
    for url in ("http://a.test/", "http://b.test/x", "https://c.test/?y=2"):
        shard, member = seen_member(url)
        fp = fingerprint(url)
        assert int(member) % (1 << 64) == fp
        assert -(1 << 63) <= int(member) < 1 << 63  # Redis keeps it in a compact intset
        assert int(shard, 16) == fp >> (64 - SHARD_BITS)
