"""Store stage, times: the spelling of an exchange's time shared by its WARC records and its
CDXJ line.

Data flow: ``FetchResult.started_at`` -> **stamps** -> ``WARC-Date`` (``store/warc.py``) and
the 14-digit CDXJ timestamp (``store/cdxj.py``). Both spell the same second, and a crawl
fetches many pages a second, so the second's ``YYYY-MM-DDTHH:MM:SS`` is worked out once and
kept; the microseconds are rounded as ``datetime.fromtimestamp`` rounds them, so every
spelling is the one ``datetime`` gives.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

__all__ = ["iso_second", "split_time"]


def split_time(epoch_seconds: float) -> tuple[int, int]:
    """Whole seconds and microseconds of a time, rounded as ``datetime.fromtimestamp`` rounds
    them (the fraction's microseconds half to even; 1,000,000 of them carry to the second)."""
    fraction, whole = math.modf(epoch_seconds)
    micro = round(fraction * 1e6)
    if micro >= 1_000_000:
        return int(whole) + 1, micro - 1_000_000
    if micro < 0:
        return int(whole) - 1, micro + 1_000_000
    return int(whole), micro


_last_second: tuple[int | None, str] = (None, "")  # the last second spelt, and its spelling


def iso_second(second: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` (UTC) of a whole second since the epoch (before it too). The
    exchanges of one second share it, so the last one is kept."""
    global _last_second  # noqa: PLW0603 - a one-entry cache; a stale entry is only a miss
    last = _last_second
    if last[0] == second:
        return last[1]
    text = datetime.fromtimestamp(second, tz=UTC).replace(tzinfo=None).isoformat()
    _last_second = (second, text)
    return text
