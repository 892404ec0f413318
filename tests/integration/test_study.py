"""``gossamer study`` end to end on a tiny test web: every strategy and thread count gets its
rows, the summaries their means, the plots are real PNG files, and the runs' crawl folders are
gone afterwards. The synchronised strategies stay collision-free and polite while measured."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import pytest

from gossamer.cli.study import thread_counts
from gossamer.threads.frontiers import STRATEGIES
from gossamer.threads.study import StudyPlan, run_study

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_tiny_study_writes_every_row_and_plot(tmp_path: Path) -> None:
    plan = StudyPlan(
        out=tmp_path / "study",
        threads=(1, 2),
        seconds=1.0,  # 0.5 s left a pipeline run with no page twice in CI (row in the message)
        repeats=1,
        latency=0.005,
        buffers=(1, 2),
        hosts=12,
        pages_per_host=20,
        seed_hosts=4,
    )
    result = run_study(plan, progress=lambda line: None)
    out = plan.out

    frontier = rows(out / "frontier.csv")
    assert {(r["strategy"], r["threads"]) for r in frontier} == {
        (s, t) for s in STRATEGIES for t in ("1", "2")
    }
    assert len(frontier) == len(STRATEGIES) * 2
    assert all(int(r["pages"]) > 0 for r in frontier)
    for row in frontier:
        assert int(row["concurrent_violations"]) == int(row["robots_violations"]) == 0
        if row["strategy"] != "unsynchronised":
            assert int(row["collisions"]) == 0
        assert int(row["collisions"]) == int(row["taken_twice"]) + int(row["lost"])

    summary = rows(out / "frontier-summary.csv")
    assert len(summary) == len(STRATEGIES) * 2
    assert all(float(r["pages_mean"]) > 0 and r["runs"] == "1" for r in summary)

    pipeline = rows(out / "pipeline.csv")
    assert {(r["buffers"], r["crawlers"], r["builders"]) for r in pipeline} == {
        ("1", "2", "yes"),
        ("1", "2", "no"),
        ("2", "4", "yes"),
        ("2", "4", "no"),
    }
    for row in pipeline:
        assert int(row["pages"]) > 0, row
        # The builders file every fetched page (2xx or not); the plain engine files none.
        if row["builders"] == "yes":
            assert int(row["filed"]) >= int(row["pages"])
        else:
            assert int(row["filed"]) == 0
    assert len(rows(out / "pipeline-summary.csv")) == 4

    for name in ("frontier.png", "collisions.png", "pipeline.png"):
        assert (out / name).read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in result.plots) == [
        "collisions.png",
        "frontier.png",
        "pipeline.png",
    ]
    assert not (out / "runs").exists()


def test_thread_counts_are_checked_at_the_command_line() -> None:
    assert thread_counts("1, 4,16,4") == (1, 4, 16)
    for bad in ("0", "1,,2", "two", "1,999"):
        with pytest.raises(argparse.ArgumentTypeError):
            thread_counts(bad)
