"""Bounded series: response times in fixed buckets, a timeline that thins itself."""

from __future__ import annotations

from gossamer.monitor.series import CAPACITY, LATENCY_BOUNDS, Histogram, Timeline


def test_a_bound_belongs_to_its_own_bucket_and_slow_ones_to_the_last() -> None:
    histogram = Histogram()
    for seconds in (0.0, 0.005, 0.0051, 1.0, 99.0):
        histogram.observe(seconds)
    assert histogram.counts[0] == 2  # 0 and exactly 5 ms: le="0.005"
    assert histogram.counts[1] == 1
    assert histogram.counts[LATENCY_BOUNDS.index(1.0)] == 1
    assert histogram.counts[-1] == 1
    assert histogram.count == 5
    assert histogram.total == 0.0 + 0.005 + 0.0051 + 1.0 + 99.0


def test_histograms_add_and_survive_json() -> None:
    a, b = Histogram(), Histogram()
    a.observe(0.02)
    b.observe(0.02)
    b.observe(3.0)
    a.add(b)
    again = Histogram.from_json(a.to_json())
    assert again == a and again.count == 3
    assert Histogram.from_json({"counts": [1, 2], "bounds": [1.0]}) == Histogram()
    assert Histogram.from_json(None) == Histogram()


def test_the_timeline_keeps_its_size_by_doubling_its_step() -> None:
    timeline = Timeline()
    for second in range(CAPACITY * 4 + 1):
        timeline.sample(float(second), (second, 0, second, 0))
    assert CAPACITY // 2 <= len(timeline.times) <= CAPACITY
    assert timeline.step in (4.0, 8.0)
    assert timeline.times[-1] == CAPACITY * 4  # the newest sample is always kept
    gaps = {b - a for a, b in zip(timeline.times, timeline.times[1:], strict=False)}
    assert gaps == {timeline.step}


def test_a_sample_under_a_step_old_is_skipped() -> None:
    timeline = Timeline()
    timeline.sample(10.0, (1, 0, 1, 0))
    timeline.sample(10.5, (2, 0, 2, 0))
    timeline.sample(11.0, (3, 0, 3, 0))
    assert timeline.times == [10.0, 11.0]
    assert timeline.column("pages") == [1, 3]


def test_rate_over_the_last_minute() -> None:
    timeline = Timeline()
    for second in range(0, 121):
        timeline.sample(float(second), (second * 2, 0, 0, 0))  # 2 pages a second
    assert timeline.rate("pages", 120.0, 240) == 2.0
    # Faster lately: only the last minute counts.
    assert timeline.rate("pages", 121.0, 242 + 60) == (242 + 60 - 122) / 60
    assert Timeline().rate("pages", 5.0, 10) is None


def test_timeline_json_round_trip() -> None:
    timeline = Timeline()
    for second in range(5):
        timeline.sample(float(second), (second, 1, 2, 3))
    assert Timeline.from_json(timeline.to_json()) == timeline
    assert Timeline.from_json({"t": [1.0], "pages": []}) == Timeline()
