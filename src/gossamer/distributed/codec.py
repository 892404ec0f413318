"""How a queued job and a URL's fingerprint are written into Redis, and read back checked.

Data flow: engine -> **codec** -> Redis lists and sets -> **codec** -> engine.
A job is a short JSON object (no pickle: nothing read from Redis is run as code), checked
field by field on the way out, so a value someone else wrote into the crawl's keys is refused
with a clear error instead of reaching the fetcher. A fingerprint is the 64-bit BLAKE2b value
of :mod:`gossamer.frontier.seen`, stored as a *signed* 64-bit decimal so that Redis keeps each
seen-set shard as a compact integer set (8 bytes per member).
"""

from __future__ import annotations

import json
import math
from typing import Any

from gossamer.distributed.errors import SharedFrontierError
from gossamer.errors import shortened
from gossamer.frontier.hosts import Job, Revisit
from gossamer.frontier.seen import fingerprint

__all__ = ["SHARD_BITS", "decode_job", "encode_job", "seen_member"]

SHARD_BITS = 16  # 65,536 seen-set shards: compact integer sets up to ~25M URLs (issue 12 notes)
_MAX_URL = 65_536
_MAX_COUNT = 1_000_000
_CONDITIONS = ("If-None-Match", "If-Modified-Since")


def encode_job(job: Job) -> str:
    """``job`` as compact JSON; the host is the key of the list it is pushed on."""
    data: dict[str, Any] = {"u": job.url}
    if job.depth:
        data["d"] = job.depth
    if job.referrer is not None:
        data["r"] = job.referrer
    if job.retries:
        data["t"] = job.retries
    if job.hops:
        data["h"] = job.hops
    if job.robots:
        data["b"] = True
    if job.fallbacks:
        data["f"] = list(job.fallbacks)
    if job.revisit is not None:
        data["v"] = _revisit_data(job.revisit)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _revisit_data(revisit: Revisit) -> dict[str, Any]:
    """A recrawl's revisit as JSON: conditions, stored content's SHA-1 and length, the
    schedule's interval and last change, the stored record a 304 names."""
    data: dict[str, Any] = {"c": [list(pair) for pair in revisit.conditions]}
    if revisit.doc_id is not None:
        data["s"] = revisit.doc_id
    if revisit.length:
        data["n"] = revisit.length
    if revisit.interval:
        data["i"] = revisit.interval
        data["a"] = revisit.changed_at
    if revisit.refers is not None:
        data["o"] = list(revisit.refers)
    return data


def _decode_revisit(value: Any) -> Revisit | None:
    """The revisit of a job's ``v`` field; None when it is malformed."""
    if not isinstance(value, dict) or not set(value) <= set("csniao"):
        return None
    pairs = value.get("c", [])
    refers = value.get("o")
    valid = (
        isinstance(pairs, list)
        and all(
            isinstance(pair, list) and len(pair) == 2 and pair[0] in _CONDITIONS
            and _text(pair[1])
            for pair in pairs
        )
        and _text(value.get("s"), optional=True)
        and _seconds(value.get("n", 0))
        and isinstance(value.get("n", 0), int)
        and all(_seconds(value.get(key, 0.0)) for key in "ia")
        and (refers is None or (isinstance(refers, list) and len(refers) == 4
                                and all(isinstance(item, str) for item in refers)))
    )  # fmt: skip
    if not valid:
        return None
    return Revisit(
        conditions=tuple((str(name), str(text)) for name, text in pairs),
        doc_id=value.get("s"),
        length=value.get("n", 0),
        interval=float(value.get("i", 0.0)),
        changed_at=float(value.get("a", 0.0)),
        refers=None if refers is None else (refers[0], refers[1], refers[2], refers[3]),
    )


def _seconds(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _text(value: Any, *, optional: bool = False) -> bool:
    if value is None:
        return optional
    return isinstance(value, str) and 0 < len(value) <= _MAX_URL


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def decode_job(raw: str | bytes, host: str) -> Job:
    """The job stored as ``raw`` in ``host``'s queue; SharedFrontierError if malformed."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SharedFrontierError(f"a queued job of host {host!r} is not JSON: {exc}") from exc
    shown = shortened(repr(raw), 80)
    if not isinstance(data, dict) or not set(data) <= set("udrthbfv"):
        raise SharedFrontierError(f"a queued job of host {host!r} is malformed: {shown}")
    fallbacks = data.get("f", [])
    valid = (
        _text(data.get("u"))
        and _text(data.get("r"), optional=True)
        and all(_count(data.get(key, 0)) for key in "dth")
        and isinstance(data.get("b", False), bool)
        and isinstance(fallbacks, list)
        and all(_text(item) for item in fallbacks)
    )
    revisit = _decode_revisit(data["v"]) if "v" in data else None
    if not valid or ("v" in data and revisit is None):
        raise SharedFrontierError(f"a queued job of host {host!r} is malformed: {shown}")
    return Job(
        url=data["u"],
        host=host,
        depth=data.get("d", 0),
        referrer=data.get("r"),
        retries=data.get("t", 0),
        hops=data.get("h", 0),
        robots=data.get("b", False),
        fallbacks=tuple(fallbacks),
        revisit=revisit,
    )


def seen_member(url: str) -> tuple[str, str]:
    """``(shard, member)`` of ``url`` in the seen-set: the shard is the fingerprint's top
    :data:`SHARD_BITS` bits in hex, the member the fingerprint as a signed 64-bit decimal."""
    fp = fingerprint(url)
    signed = fp - (1 << 64) if fp >= 1 << 63 else fp
    return format(fp >> (64 - SHARD_BITS), "x"), str(signed)
