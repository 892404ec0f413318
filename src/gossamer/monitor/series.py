"""Monitor, bounded series: the crawl's figures over time and its response times, in fixed
memory whatever the length of the crawl.

Data flow: the crawl loop -> **series** (held by ``CrawlStats``) -> the live status, the
dashboard's charts, ``/metrics`` and ``reports/report.html``.

:class:`Histogram` counts response times in fixed buckets (the bounds are Prometheus' ``le``
values), so a response costs one bisection and two additions, never a list entry.
:class:`Timeline` keeps cumulative figures (pages, errors, requests, bytes) sampled by the
crawl's one-second tick, not per page. It holds at most ``capacity`` samples: when full, every
other sample is dropped and the step doubles, so a day-long crawl keeps the same number of
points as a minute-long one, at a coarser step.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["COLUMNS", "LATENCY_BOUNDS", "Histogram", "Timeline"]

# Upper bounds (seconds) of the response-time buckets; one more bucket holds the slower ones.
LATENCY_BOUNDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
COLUMNS = ("pages", "errors", "requests", "bytes")  # the cumulative figures a Timeline keeps
CAPACITY = 1024


@dataclass(slots=True)
class Histogram:
    """Response times in the buckets of ``LATENCY_BOUNDS``; ``counts[-1]`` is above the last."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BOUNDS) + 1))
    total: float = 0.0  # sum of the observed seconds

    def observe(self, seconds: float) -> None:
        # bisect_left: a value equal to a bound falls in that bound's bucket (``le``).
        self.counts[bisect.bisect_left(LATENCY_BOUNDS, seconds)] += 1
        self.total += seconds

    @property
    def count(self) -> int:
        return sum(self.counts)

    def add(self, other: Histogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.total += other.total

    def copy(self) -> Histogram:
        return Histogram(list(self.counts), self.total)

    def to_json(self) -> dict[str, object]:
        return {"bounds": list(LATENCY_BOUNDS), "counts": list(self.counts), "sum": self.total}

    @classmethod
    def from_json(cls, data: object) -> Histogram:
        """The histogram a ``to_json`` dict describes; empty for anything else."""
        if isinstance(data, Mapping):
            counts = data.get("counts")
            if (
                isinstance(counts, list)
                and len(counts) == len(LATENCY_BOUNDS) + 1
                and list(data.get("bounds", ())) == list(LATENCY_BOUNDS)
            ):
                return cls([int(n) for n in counts], float(data.get("sum", 0.0)))
        return cls()


@dataclass(slots=True)
class Timeline:
    """Cumulative figures at crawl times ``times`` (seconds of crawl, resumed runs included)."""

    step: float = 1.0
    capacity: int = CAPACITY
    times: list[float] = field(default_factory=list)
    rows: list[tuple[int, ...]] = field(default_factory=list)  # one value per COLUMNS name

    def sample(self, at: float, values: Sequence[int]) -> None:
        """Keep ``values`` at crawl time ``at`` unless the last sample is under a step old."""
        if self.times and at - self.times[-1] < self.step * 0.999:
            return
        self.times.append(at)
        self.rows.append(tuple(values))
        if len(self.times) > self.capacity:
            # Keep the newest sample and every other one before it; the step doubles.
            start = (len(self.times) - 1) % 2
            self.times = self.times[start::2]
            self.rows = self.rows[start::2]
            self.step *= 2

    def rate(self, column: str, at: float, value: int, window: float = 60.0) -> float | None:
        """Per second over about the last ``window`` seconds, up to the live ``value`` at crawl
        time ``at``; None before there is a sample a second old."""
        index = COLUMNS.index(column)
        position = max(0, bisect.bisect_left(self.times, at - window))
        if position >= len(self.times):
            return None
        span = at - self.times[position]
        if span < 1.0:
            return None
        return (value - self.rows[position][index]) / span

    def column(self, name: str) -> list[int]:
        index = COLUMNS.index(name)
        return [row[index] for row in self.rows]

    def copy(self) -> Timeline:
        return Timeline(self.step, self.capacity, list(self.times), list(self.rows))

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"step": self.step, "t": [round(t, 3) for t in self.times]}
        for name in COLUMNS:
            data[name] = self.column(name)
        return data

    @classmethod
    def from_json(cls, data: object) -> Timeline:
        """The timeline a ``to_json`` dict describes; empty for anything else."""
        if not isinstance(data, Mapping) or not isinstance(data.get("t"), list):
            return cls()
        times = [float(t) for t in data["t"]]
        columns = [data.get(name) for name in COLUMNS]
        if not all(isinstance(c, list) and len(c) == len(times) for c in columns):
            return cls()
        rows = [tuple(int(c[i]) for c in columns) for i in range(len(times))]  # type: ignore[index]
        return cls(float(data.get("step", 1.0)), CAPACITY, times, rows)
