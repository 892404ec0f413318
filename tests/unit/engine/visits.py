"""The crawl loop's handling of a fetched job, driven by hand: the real loop, seam and
pipeline of one process, without the network (the test says what each fetch returned)."""

from __future__ import annotations

import asyncio

from gossamer.config import CrawlConfig
from gossamer.crawling.loop import CrawlLoop
from gossamer.engine.pipeline import Pipeline
from gossamer.engine.seam import LocalSeam
from gossamer.engine.steering import FetchGate
from gossamer.errors import StoreError
from gossamer.fetch import FetchResult
from gossamer.frontier import Frontier, Job
from gossamer.stats import CrawlStats


class Visits:
    """Settle jobs popped from ``frontier`` as the crawl loop does after their fetch."""

    def __init__(
        self, config: CrawlConfig, frontier: Frontier, pipeline: Pipeline, stats: CrawlStats
    ) -> None:
        self.admit = pipeline.admit
        self.seam = LocalSeam(
            config,
            frontier,
            stats=stats,
            admitter=pipeline.admitter,
            gate=FetchGate(stats),
            wake=asyncio.Event(),
            stop=lambda reason: None,
            stopping=lambda: "",
        )
        self.loop = CrawlLoop(
            self.seam,
            pipeline,
            stats,
            max_retries=config.politeness.max_retries,
            is_sitemap=pipeline.is_sitemap,
            on_fault=_raise,
        )

    def page(self, job: Job, result: FetchResult) -> None:
        asyncio.run(self.loop.page_fetched(self.seam.ticket(job), result))

    def robots(self, job: Job, hops: list[FetchResult]) -> None:
        asyncio.run(self.loop.robots_fetched(self.seam.ticket(job), hops))


def _raise(exc: StoreError) -> None:
    raise exc
