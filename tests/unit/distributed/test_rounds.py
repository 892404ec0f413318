"""A worker's rounds (``distributed/rounds.py``) on a real redis-server, the frontier split in
three partitions as on a cluster: two workers' loops take leases from their pools and hand
back completions and links in batches. Every page is fetched once, the end is seen by both
(two whole looks, epochs unmoved), and a page target is stored exactly. (How many pages a
round carries depends on timing: benchmarks/redis_frontier.py measures it.)"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.distributed import Finished, Halted, RedisFrontier
from gossamer.distributed.frontier import Completion
from gossamer.distributed.patience import Patience
from gossamer.distributed.rounds import Rounds
from gossamer.frontier.hosts import Job
from gossamer.frontier.politeness import Answer, Outcome
from tests.unit.distributed.redis_rig import RedisServer, closed, crawl_config, created

PAGES, HOSTS = 90, 12
OK = Outcome(Answer.OK)


def page(i: int) -> Job:
    host = f"h{i % HOSTS}.test"
    return Job(url=f"http://{host}/p{i}", host=host)


async def work(
    front: RedisFrontier, fetched: Counter[str], stored: list[int], loops: int
) -> Rounds:
    """One worker: ``loops`` loops "fetch" each page at once; page i links to 3i+1 .. 3i+3."""
    rounds = Rounds(
        front,
        concurrency=loops,
        patience=Patience(10.0, "test"),
        on_lost=lambda host: pytest.fail(f"a lease of {host} was lost"),
        clock_offset=lambda: 0.0,
    )

    async def loop() -> None:
        while (lease := await rounds.take()) is not None:
            fetched[lease.job.url] += 1
            i = int(lease.job.url.rsplit("p", 1)[1])
            links = [page(k) for k in (3 * i + 1, 3 * i + 2, 3 * i + 3) if k < PAGES]
            rounds.complete(Completion(lease, OK, count_page=True), links)
            stored[0] += 1

    pump = asyncio.create_task(rounds.run())
    await asyncio.gather(*(loop() for _ in range(loops)))
    await rounds.close()
    await pump
    await rounds.give_back()
    return rounds


def _crawl(
    server: RedisServer, name: str, tmp: Path, target: int | None, loops: int = 4
) -> tuple[Counter[str], list[Rounds], int]:
    async def main() -> tuple[Counter[str], list[Rounds], int]:
        config = dataclasses.replace(crawl_config(tmp, delay=0.0), max_pages=target)
        fronts = await created(server, name, config, 2, parts=3)
        assert all(front.parts == 3 for front in fronts)
        await fronts[0].add([page(0)])
        fetched: Counter[str] = Counter()
        stored = [0]
        done = await asyncio.wait_for(
            asyncio.gather(*(work(front, fetched, stored, loops) for front in fronts)), 60
        )
        pages = await fronts[0].pages()
        await closed(fronts)
        return fetched, list(done), pages

    return asyncio.run(main())


@pytest.mark.parametrize("loops", [1, 4])  # one loop: leases wanted from one partition a round
def test_rounds_fetch_every_page_once_and_both_see_the_end(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path, loops: int
) -> None:
    fetched, rounds, pages = _crawl(redis_server, crawl_name, tmp_path, None, loops)
    assert set(fetched) == {page(i).url for i in range(PAGES)}
    assert max(fetched.values()) == 1
    assert pages == PAGES
    assert all(r.ended == Finished() for r in rounds)


def test_rounds_store_the_page_target_exactly(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    fetched, rounds, pages = _crawl(redis_server, crawl_name, tmp_path, 25)
    assert sum(fetched.values()) == pages == 25
    assert all(r.ended == Halted("target") for r in rounds)
