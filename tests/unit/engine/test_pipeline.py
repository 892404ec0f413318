"""Small pure pieces of the pipeline."""

from __future__ import annotations

import email.utils

from gossamer.engine.pipeline import origin_of, retry_after


def test_origin_of() -> None:
    assert origin_of("http://a.test:8080/x/y?q") == "http://a.test:8080"
    assert origin_of("https://a.test/") == "https://a.test"


def test_retry_after_forms() -> None:
    assert retry_after("120", 0.0) == 120.0
    assert retry_after(None, 0.0) is None
    assert retry_after("soon", 0.0) is None
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    value = retry_after(date, now)
    assert value is not None and 29.0 <= value <= 31.0
