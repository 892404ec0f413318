"""Command line, ``gossamer study``: the concurrency experiments of seeds 000 and 004.

Data flow: argv -> **cli.study** -> a ``StudyPlan`` -> ``threads.study`` (crawls of the local
test web, served in-process) -> CSV files and PNG plots in ``--out`` -> a short table here.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path
from typing import Any

from gossamer.cli.flags import path, positive_int, seconds
from gossamer.errors import ConfigError

__all__ = ["add_parser", "run_study_command"]

QUICK = {"threads": (1, 4, 16), "repeats": 1, "seconds": 2.0}
MAX_THREADS = 256


def thread_counts(text: str) -> tuple[int, ...]:
    """``1,2,4`` -> (1, 2, 4): thread counts from 1 to 256, in the order given."""
    counts: list[int] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part.isdigit() or not 1 <= int(part) <= MAX_THREADS:
            raise argparse.ArgumentTypeError(
                f"expected thread counts from 1 to {MAX_THREADS} such as 1,2,4: {text!r}"
            )
        counts.append(int(part))
    return tuple(dict.fromkeys(counts))


def _float_between(low: float, high: float) -> Any:
    """A type for a number of seconds from ``low`` to ``high``."""

    def checked(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}: {text!r}")
        return value

    return checked


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "study",
        help="run the threaded crawler's concurrency study on the local test web",
        description=(
            "Crawl an in-process test web for T seconds with each frontier synchronisation "
            "and thread count, then the buffered pipeline (--pipeline) with 1, 3 and 6 buffers;"
            " write CSVs and PNG plots."
        ),
    )
    p.set_defaults(run=run_study_command)
    p.add_argument("--out", type=path, required=True, metavar="DIR", help="where results go")
    p.add_argument(
        "--quick", action="store_true", help="threads 1,4,16, one repeat, 2 s (a few minutes)"
    )
    p.add_argument("--seconds", type=seconds, help="each crawl's time limit (default: 3s)")
    p.add_argument("--repeats", type=positive_int, help="runs per point (default: 3)")
    p.add_argument(
        "--threads",
        type=thread_counts,
        help="thread counts, comma-separated (default: 1,2,4,8,16,32,64)",
    )
    p.add_argument(
        "--latency",
        type=_float_between(0.0, 5.0),
        default=0.02,
        help="the test web's delay per response, in seconds",
    )
    p.add_argument(
        "--switch-interval",
        type=_float_between(1e-7, 1.0),
        default=1e-5,
        help=(
            "CPython's thread switch interval during the crawls, in seconds (CPython's own is"
            " 5 ms): finer switching interleaves threads as many cores would, so races show"
        ),
    )


# What a study writes in its folder: an earlier study's output may be overwritten, nothing else.
STUDY_FILES = frozenset(
    {
        "frontier.csv",
        "frontier-summary.csv",
        "pipeline.csv",
        "pipeline-summary.csv",
        "frontier.png",
        "collisions.png",
        "pipeline.png",
        "runs",
    }
)


def _check_out(out: Path) -> None:
    """Refuse a folder holding anything but an earlier study's files: the study replaces its
    CSVs and plots and clears ``runs/``, which must never be a user's."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} exists and is not a folder")
    try:
        others = sorted(e.name for e in out.iterdir() if e.name not in STUDY_FILES)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"--out {out} cannot be read: {exc.strerror}") from exc
    if others:
        raise ConfigError(
            f"--out {out} holds other files ({', '.join(others[:3])}"
            f"{', ...' if len(others) > 3 else ''}); give a new or empty folder, or an earlier"
            " study's"
        )


def run_study_command(args: argparse.Namespace) -> int:
    from gossamer.threads.study import StudyPlan, run_study  # noqa: PLC0415 (slow imports)

    _check_out(args.out)
    plan = StudyPlan(out=args.out, latency=args.latency, switch_interval=args.switch_interval)
    if args.quick:
        plan = dataclasses.replace(plan, **QUICK)  # type: ignore[arg-type]
    given = {"threads": args.threads, "repeats": args.repeats, "seconds": args.seconds}
    plan = dataclasses.replace(plan, **{k: v for k, v in given.items() if v is not None})

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = run_study(plan, progress)
    print(f"{'strategy':>14} {'threads':>7} {'pages':>8} {'stdev':>7} {'collisions':>10}")
    for row in result.summary_frontier:
        print(
            f"{row['strategy']!s:>14} {row['threads']!s:>7} {row['pages_mean']!s:>8} "
            f"{row['pages_stdev']!s:>7} {row['collisions_mean']!s:>10}"
        )
    print(f"{'buffers':>7} {'crawlers':>8} {'builders':>8} {'pages':>8} {'stdev':>7}")
    for row in result.summary_pipeline:
        print(
            f"{row['buffers']!s:>7} {row['crawlers']!s:>8} {row['builders']!s:>8} "
            f"{row['pages_mean']!s:>8} {row['pages_stdev']!s:>7}"
        )
    print(f"study done in {result.seconds:.0f} s: CSVs and plots in {plan.out}")
    return 0
