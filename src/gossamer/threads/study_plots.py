"""``gossamer study``'s plots: the summaries of ``threads/study.py`` -> PNG files.

Data flow: frontier and pipeline summaries (mean and standard deviation per point) ->
matplotlib on the Agg backend (no display needed) -> ``frontier.png`` (pages in T seconds
against threads, one line per strategy), ``collisions.png`` and ``pipeline.png`` (seed 000's
Figures 7-8: pages with and without the builders, per buffer count).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["draw_plots"]

Row = dict[str, object]


def _number(value: object) -> float:
    return float(str(value))


def _pyplot() -> Any:
    import matplotlib  # noqa: PLC0415 (slow to import; only the study needs it)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def draw_plots(
    out: Path, frontier: Sequence[Row], pipeline: Sequence[Row], seconds: float
) -> list[Path]:
    """Draw the study's three plots into ``out``; their paths."""
    plt = _pyplot()
    written = [
        _lines(plt, out / "frontier.png", frontier, "pages", f"pages crawled in {seconds:g} s"),
        _lines(plt, out / "collisions.png", frontier, "collisions", "collisions per crawl"),
        _pipeline(plt, out / "pipeline.png", pipeline, seconds),
    ]
    return written


def _lines(plt: Any, path: Path, rows: Sequence[Row], value: str, label: str) -> Path:
    fig, ax = plt.subplots(figsize=(8, 5))
    strategies = list(dict.fromkeys(str(row["strategy"]) for row in rows))
    for strategy in strategies:
        mine = [row for row in rows if row["strategy"] == strategy]
        ax.errorbar(
            [_number(row["threads"]) for row in mine],
            [_number(row[f"{value}_mean"]) for row in mine],
            yerr=[_number(row[f"{value}_stdev"]) for row in mine],
            marker="o",
            capsize=3,
            label=strategy,
        )
    ax.set_xscale("log", base=2)
    ticks = sorted({_number(row["threads"]) for row in rows})
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.set_xlabel("crawler threads")
    ax.set_ylabel(label)
    ax.set_title(f"{label} against threads, per frontier synchronisation")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _pipeline(plt: Any, path: Path, rows: Sequence[Row], seconds: float) -> Path:
    fig, ax = plt.subplots(figsize=(8, 5))
    buffers = list(dict.fromkeys(_number(row["buffers"]) for row in rows))
    width = 0.38
    for shift, builders, label in ((-0.5, "yes", "with builders"), (0.5, "no", "without")):
        mine = {_number(r["buffers"]): r for r in rows if r["builders"] == builders}
        xs = [i + shift * width for i in range(len(buffers))]
        ax.bar(
            xs,
            [_number(mine[b]["pages_mean"]) if b in mine else 0.0 for b in buffers],
            width,
            yerr=[_number(mine[b]["pages_stdev"]) if b in mine else 0.0 for b in buffers],
            capsize=3,
            label=label,
        )
    ax.set_xticks(range(len(buffers)))
    ax.set_xticklabels([f"{b:g} buffers\n{2 * b:g} crawlers" for b in buffers])
    ax.set_ylabel(f"pages crawled in {seconds:g} s")
    ax.set_title("seed 000's pipeline: crawlers with and without index builders")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
