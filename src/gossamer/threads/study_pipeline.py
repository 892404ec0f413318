"""Seed 000's pipeline on the threaded engine: ``gossamer crawl --engine threads --pipeline``.

Data flow: crawler threads (``threads/engine.py``) -> each crawled page's URL, its source and
a short data line into the thread's bounded buffer -> index builders -> the Indexed URL Tree
(``threads/builders.py``, ``threads/urltree.py``). The crawl's own outputs (WARC, CDXJ,
``crawl.db``, reports) are written as without the pipeline; the tree and the seed's
statistics files (``statistics.txt``, ``hourly_statistics.txt``, ``res.txt``) go to the tree's
folder. The pipeline's figures join ``reports/threads.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from gossamer.config import CrawlConfig
from gossamer.fetch import FetchResult
from gossamer.frontier import Job
from gossamer.seeds import SeedList
from gossamer.threads.builders import BuilderPipeline
from gossamer.threads.engine import ThreadedOutcome, ThreadOptions, run_threaded
from gossamer.threads.urltree import IndexedUrlTree

__all__ = ["run_pipeline"]


def run_pipeline(
    config: CrawlConfig,
    seeds: SeedList,
    options: ThreadOptions,
    *,
    buffers: int,
    size: int,
    tree: Path,
    period: float,
) -> ThreadedOutcome:
    """Crawl with the buffers and builders running beside the crawler threads."""
    pipeline = BuilderPipeline(
        IndexedUrlTree(tree), buffers=buffers, size=size, stats_dir=tree, stats_period=period
    )

    def sink(index: int, job: Job, result: FetchResult) -> None:
        data = f"{result.status} {result.content_type or '-'}"
        pipeline.buffer_for(index).put((job.url, job.referrer or "", data))

    pipeline.start()
    try:
        outcome = run_threaded(config, seeds, options, page_sink=sink)
    finally:
        report = pipeline.close()  # the crawler threads have joined: builders, then cleaner
    figures = {
        "buffers": buffers,
        "buffer_size": size,
        "tree": str(tree),
        "filed": report.filed,
        "filed_by_cleaner": report.filed_by_cleaner,
        "url_files": report.url_files,
        "duplicate_files": report.duplicate_files,
    }
    outcome.figures["pipeline"] = figures
    path = config.out / "reports" / "threads.json"
    path.write_text(json.dumps(outcome.figures, indent=2) + "\n", encoding="utf-8")
    return outcome
