"""Seeds added to a running shared crawl (``gossamer ctl add-seeds``, the Crawl page) obey the
crawl's scope rules, as a local crawl's admission makes them (issue 30)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.config import ScopeConfig
from gossamer.distributed.seeding import add_seed_list
from gossamer.seeds import parse_seeds
from tests.unit.distributed.redis_rig import RedisServer, closed, crawl_config, created


def test_live_seeds_out_of_scope_are_not_queued(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    scope = ScopeConfig(exclude=("/private/",))
    config = dataclasses.replace(crawl_config(tmp_path), scope=scope)

    async def main() -> int:
        [front] = await created(redis_server, crawl_name, config)
        seeds = parse_seeds("http://a.test/\nhttp://a.test/private/x\nhttp://b.test/\n")
        try:
            return await add_seed_list(front.redis, crawl_name, seeds)
        finally:
            await closed([front])

    assert asyncio.run(main()) == 2
