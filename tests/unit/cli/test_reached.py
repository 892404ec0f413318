"""The line ``gossamer crawl`` prints after the summary: the concurrency reached."""

from __future__ import annotations

import json
from pathlib import Path

from gossamer.cli.crawl import reached_line


def test_the_reached_concurrency_beside_the_configured_one(tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    stats.write_text(json.dumps({"max_in_flight": 7, "concurrency": 16}))
    assert reached_line(stats) == "Concurrency reached: at most 7 requests at once (16 configured)"


def test_nothing_to_say_without_the_figure(tmp_path: Path) -> None:
    stats = tmp_path / "stats.json"
    assert reached_line(stats) == ""  # no file
    for text in ("[]", "{}", '{"max_in_flight": 0, "concurrency": 16}', "not json"):
        stats.write_text(text)
        assert reached_line(stats) == "", text  # --engine threads does not count it
