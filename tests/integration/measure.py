"""A crawl in a fresh child process, so that the peak memory it reports is the crawl's own.

Read in the test process, the peak resident size also holds whatever earlier tests peaked at,
so the growth over one crawl could read as 0 and prove nothing. A spawned child starts with
its imports only; it reads its own peak before and after the crawl and sends both back with
the outcome. One child per measurement.

The peak is the kernel's ``VmHWM`` (the high-water mark of this process's memory), not
``getrusage().ru_maxrss``: Linux carries ``ru_maxrss`` over fork and exec, so a spawned child
reports at least the peak its parent had when it was started (checked: a child of a parent
that had touched 600 MB reads 628 MB there, and 15 MB in ``VmHWM``).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from gossamer.config import CrawlConfig
from gossamer.engine import Crawler, CrawlOutcome
from gossamer.seeds import parse_seeds


@dataclass(frozen=True, slots=True)
class MeasuredCrawl:
    outcome: CrawlOutcome
    peak_before_kb: int  # the child's peak resident size once everything was imported
    peak_after_kb: int  # its peak once the crawl had ended

    @property
    def rss_growth_kb(self) -> int:
        return self.peak_after_kb - self.peak_before_kb


def crawl_in_child(config: CrawlConfig, seeds: str) -> MeasuredCrawl:
    """Run one crawl of ``seeds`` (a seeds file's text) in a new process; wait for it."""
    context = multiprocessing.get_context("spawn")  # a new process image, not a fork of this one
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as child:
        return child.submit(_measured_crawl, config, seeds).result()


def _peak_kb() -> int:
    """This process's peak resident size in KiB, from ``/proc/self/status``."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status: peak memory cannot be measured here")


def _measured_crawl(config: CrawlConfig, seeds: str) -> MeasuredCrawl:
    before = _peak_kb()
    outcome = asyncio.run(Crawler(config, parse_seeds(seeds)).run())
    return MeasuredCrawl(outcome, before, _peak_kb())
