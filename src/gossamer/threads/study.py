"""``gossamer study``: seeds 000 and 004's experiments, run on the local test web.

Data flow: a :class:`StudyPlan` -> one test web (``gossamer.testweb``), served afresh for every
run so that no run sees another's server state -> for each frontier strategy, thread count and
repeat a threaded crawl limited to T seconds (``threads/engine.py``), then seed 000's pipeline
with 1, 3 and 6 buffers against the plain engine with as many crawler threads
(``threads/study_pipeline.py``) -> each run's figures and the server's audit -> ``frontier.csv``,
``frontier-summary.csv``, ``pipeline.csv``, ``pipeline-summary.csv`` and the plots
(``threads/study_plots.py``). Each run's crawl folder lives under ``runs/`` only until its
figures are read.

The test web answers with some latency, so that crawler threads overlap their waits on I/O as
they would on the real web; the switch interval (CPython hands the GIL over every 5 ms unless
told otherwise) is shortened so that threads interleave about as finely as on many cores.
"""

from __future__ import annotations

import csv
import logging
import shutil
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gossamer import extras
from gossamer.config import CrawlConfig, PolitenessConfig, ScopeConfig
from gossamer.seeds import parse_seeds
from gossamer.testweb import ThreadedTestWeb, Web, WebSpec, build_web
from gossamer.threads.engine import ThreadedOutcome, ThreadOptions, run_threaded
from gossamer.threads.frontiers import STRATEGIES

__all__ = [
    "FRONTIER_FIELDS",
    "PIPELINE_FIELDS",
    "StudyPlan",
    "StudyResult",
    "run_study",
    "summarise",
]

log = logging.getLogger(__name__)

RESOLVE = "*.web.test:127.0.0.1"
FRONTIER_FIELDS = (
    "strategy",
    "threads",
    "repeat",
    "pages",
    "links",
    "collisions",
    "taken_twice",
    "lost",
    "seconds",
    "concurrent_violations",
    "robots_violations",
)
PIPELINE_FIELDS = (
    "buffers",
    "crawlers",
    "builders",
    "repeat",
    "pages",
    "links",
    "filed",
    "seconds",
)
PIPELINE_SYNC = "monitor"  # the frontier the pipeline's crawlers share; the buffers are seed 000's


@dataclass(frozen=True, slots=True)
class StudyPlan:
    """What to run; the defaults are the full study's."""

    out: Path
    threads: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
    seconds: float = 3.0  # the crawl's time limit, as in seed 004
    repeats: int = 3
    latency: float = 0.02  # the test web's delay per response
    switch_interval: float = 1e-5
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    buffers: tuple[int, ...] = (1, 3, 6)  # seed 000's Figures 7-8, two crawlers per buffer
    buffer_size: int = 100
    hosts: int = 200
    pages_per_host: int = 100
    seed_hosts: int = 20
    web_seed: int = 14


Row = dict[str, object]


@dataclass(slots=True)
class StudyResult:
    frontier: list[Row]
    pipeline: list[Row]
    summary_frontier: list[Row]
    summary_pipeline: list[Row]
    plots: list[Path]
    seconds: float


def run_study(plan: StudyPlan, progress: Callable[[str], None] = log.info) -> StudyResult:
    """Run every experiment of ``plan`` and write its CSVs and plots into ``plan.out``."""
    extras.require("gossamer study", "charts")  # before the runs, not after minutes of them
    started = time.monotonic()
    plan.out.mkdir(parents=True, exist_ok=True)
    web = build_web(
        WebSpec(
            seed=plan.web_seed,
            hosts=plan.hosts,
            pages_per_host=plan.pages_per_host,
            seed_hosts=plan.seed_hosts,
            latency=plan.latency,
        )
    )
    runner = _Runner(plan, web)
    frontier = [
        runner.frontier_run(sync, threads, repeat, progress)
        for sync in plan.strategies
        for threads in plan.threads
        for repeat in range(plan.repeats)
    ]
    pipeline = [
        runner.pipeline_run(buffers, builders, repeat, progress)
        for buffers in plan.buffers
        for builders in (True, False)
        for repeat in range(plan.repeats)
    ]
    shutil.rmtree(plan.out / "runs", ignore_errors=True)
    _write_csv(plan.out / "frontier.csv", FRONTIER_FIELDS, frontier)
    _write_csv(plan.out / "pipeline.csv", PIPELINE_FIELDS, pipeline)
    frontier_summary = summarise(
        frontier, ("strategy", "threads"), ("pages", "links", "collisions")
    )
    pipeline_summary = summarise(pipeline, ("buffers", "crawlers", "builders"), ("pages",))
    _write_csv(
        plan.out / "frontier-summary.csv",
        tuple(frontier_summary[0]) if frontier else (),
        frontier_summary,
    )
    _write_csv(
        plan.out / "pipeline-summary.csv",
        tuple(pipeline_summary[0]) if pipeline else (),
        pipeline_summary,
    )
    from gossamer.threads.study_plots import draw_plots  # noqa: PLC0415 (matplotlib is slow)

    plots = draw_plots(plan.out, frontier_summary, pipeline_summary, plan.seconds)
    return StudyResult(
        frontier, pipeline, frontier_summary, pipeline_summary, plots, time.monotonic() - started
    )


class _Runner:
    """One crawl per call, each against a freshly started server over the same web."""

    def __init__(self, plan: StudyPlan, web: Web) -> None:
        self.plan = plan
        self.web = web
        self.count = 0

    def _options(self, threads: int, sync: str) -> ThreadOptions:
        return ThreadOptions(threads=threads, sync=sync, switch_interval=self.plan.switch_interval)

    def frontier_run(
        self, sync: str, threads: int, repeat: int, progress: Callable[[str], None]
    ) -> Row:
        def crawl(config: CrawlConfig, site: ThreadedTestWeb, folder: Path) -> ThreadedOutcome:
            seeds = parse_seeds("\n".join(site.seeds()))
            return run_threaded(config, seeds, self._options(threads, sync))

        outcome, report = self._crawl(crawl)
        figures = outcome.figures
        row: Row = {
            "strategy": sync,
            "threads": threads,
            "repeat": repeat,
            "pages": outcome.stats.pages,
            "links": outcome.stats.discovered,
            "collisions": figures["collisions"],
            "taken_twice": figures["taken_twice"],
            "lost": figures["lost"],
            "seconds": figures["seconds"],
            "concurrent_violations": report[0],
            "robots_violations": report[1],
        }
        progress(f"{sync:>14} threads={threads:<3} repeat={repeat} pages={row['pages']}")
        return row

    def pipeline_run(
        self, buffers: int, builders: bool, repeat: int, progress: Callable[[str], None]
    ) -> Row:
        crawlers = 2 * buffers

        def crawl(config: CrawlConfig, site: ThreadedTestWeb, folder: Path) -> ThreadedOutcome:
            from gossamer.threads.study_pipeline import run_pipeline  # noqa: PLC0415

            seeds = parse_seeds("\n".join(site.seeds()))
            options = self._options(crawlers, PIPELINE_SYNC)
            if not builders:
                return run_threaded(config, seeds, options)
            return run_pipeline(
                config,
                seeds,
                options,
                buffers=buffers,
                size=self.plan.buffer_size,
                tree=folder / "tree",
                period=3600.0,
            )

        outcome, _ = self._crawl(crawl)
        pipeline = outcome.figures.get("pipeline")
        filed = pipeline.get("filed", 0) if isinstance(pipeline, dict) else 0
        row: Row = {
            "buffers": buffers,
            "crawlers": crawlers,
            "builders": "yes" if builders else "no",
            "repeat": repeat,
            "pages": outcome.stats.pages,
            "links": outcome.stats.discovered,
            "filed": filed,
            "seconds": outcome.figures["seconds"],
        }
        progress(f"pipeline buffers={buffers} builders={row['builders']} pages={row['pages']}")
        return row

    def _crawl(
        self, crawl: Callable[[CrawlConfig, ThreadedTestWeb, Path], ThreadedOutcome]
    ) -> tuple[ThreadedOutcome, tuple[int, int]]:
        """A fresh folder and server for one run; the folder is gone once it is read."""
        self.count += 1
        folder = self.plan.out / "runs" / f"run-{self.count:04d}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            with ThreadedTestWeb(self.web) as site:
                outcome = crawl(self._config(folder), site, folder)
                report = site.report()
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return outcome, (report.concurrent_violations, report.robots_violations)

    def _config(self, folder: Path) -> CrawlConfig:
        """Loopback politeness (no base delay; robots.txt, Crawl-delay, one fetch per host)."""
        return CrawlConfig(
            seeds=folder / "seeds.txt",
            out=folder / "crawl",
            resolve=(RESOLVE,),
            progress=False,
            time_limit=self.plan.seconds,
            politeness=PolitenessConfig(delay=0.0, robots_retry_delay=0.2, robots_retries=1),
            scope=ScopeConfig(max_depth=25),
        )


def summarise(rows: Sequence[Row], keys: tuple[str, ...], values: tuple[str, ...]) -> list[Row]:
    """Mean and standard deviation of ``values`` over the rows sharing ``keys``, in order."""
    groups: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in keys), []).append(row)
    summary: list[Row] = []
    for key, group in groups.items():
        line: Row = dict(zip(keys, key, strict=True))
        line["runs"] = len(group)
        for name in values:
            numbers = [float(str(row[name])) for row in group]
            line[f"{name}_mean"] = round(statistics.fmean(numbers), 2)
            line[f"{name}_stdev"] = round(statistics.stdev(numbers), 2) if len(numbers) > 1 else 0.0
        summary.append(line)
    return summary


def _write_csv(path: Path, fields: Iterable[str], rows: Sequence[Row]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)
