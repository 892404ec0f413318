"""The crawl's settings in Redis: stored once, read back checked, never loosened by a joiner."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis", reason="the redis client is not installed (pip install 'redis>=5')")

from gossamer.config import CrawlConfig, FetchConfig, PolitenessConfig, ScopeConfig
from gossamer.distributed import robots_cache, settings
from gossamer.errors import ConfigError
from tests.unit.distributed.redis_rig import RedisServer, closed, created


def stored_config(tmp: Path) -> CrawlConfig:
    return CrawlConfig(
        seeds=tmp / "seeds.txt",
        out=tmp / "out",
        max_pages=500,
        resolve=("*.web.test:127.0.0.1",),
        politeness=PolitenessConfig(delay=2.0, max_per_ip=4),
        fetch=FetchConfig(user_agent="testbot/1.0", keep_types=("text/html",)),
        scope=ScopeConfig(max_depth=5),
    )


def test_settings_round_trip_through_redis(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    config = stored_config(tmp_path)

    async def main() -> bytes | str | None:
        [front] = await created(redis_server, crawl_name, config)
        later = dataclasses.replace(config, max_pages=9)
        assert not await front.create(later)  # the first creator's settings stay
        raw = await front.stored_settings()
        await closed([front])
        return raw

    raw = asyncio.run(main())
    assert raw is not None
    joiner = tmp_path / "joiner"
    back = settings.from_json(raw, joiner / "seeds.txt", joiner / "out")
    assert back == dataclasses.replace(config, seeds=joiner / "seeds.txt", out=joiner / "out")


def _tampered(tmp: Path, **changes: Any) -> str:
    data = json.loads(settings.to_json(stored_config(tmp)))
    data["settings"].update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "are not JSON"),
        ('{"format": 99, "settings": {}}', "not in Gossamer's format"),
        ('{"format": 1, "settings": []}', "no table of settings"),
    ],
)
def test_malformed_stored_settings_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        settings.from_json(text, tmp_path / "s", tmp_path / "o")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"politeness.delay": -1.0}, "politeness.delay stored in Redis must not be negative"),
        ({"politeness.delay": "1; os.system('x')"}, "must be a number of seconds"),
        ({"fetch.user_agent": "bot\r\nX-Evil: 1"}, "must not contain control characters"),
        ({"scope.max_depth": True}, "must be an integer"),
        ({"__import__": 1}, "unknown setting '__import__'"),
    ],
)
def test_out_of_range_stored_settings_are_refused(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        settings.from_json(_tampered(tmp_path, **changes), tmp_path / "s", tmp_path / "o")


def test_missing_stored_setting_is_refused(tmp_path: Path) -> None:
    data = json.loads(settings.to_json(stored_config(tmp_path)))
    del data["settings"]["politeness.delay"]
    with pytest.raises(ConfigError, match=r"setting 'politeness.delay' is missing"):
        settings.from_json(json.dumps(data), tmp_path / "s", tmp_path / "o")


def test_joiner_keeps_local_settings_and_cannot_loosen_politeness(tmp_path: Path) -> None:
    stored = stored_config(tmp_path)
    labels = {"politeness.delay": "--delay", "politeness.max_per_ip": "--max-per-ip"}
    mine = settings.joined(stored, {"concurrency": 8, "politeness.delay": None}, labels)
    assert mine.concurrency == 8
    assert mine.politeness == stored.politeness
    with pytest.raises(ConfigError, match=r"--delay 0\.5 is looser .* cannot loosen politeness"):
        settings.joined(stored, {"politeness.delay": 0.5}, labels)
    with pytest.raises(ConfigError, match="--max-per-ip 8 is looser"):
        settings.joined(stored, {"politeness.max_per_ip": 8}, labels)
    with pytest.raises(ConfigError, match=r"differs from the crawl's scope\.max_depth"):
        settings.joined(stored, {"scope.max_depth": 9}, labels)
    with pytest.raises(ConfigError, match="must be at least 1"):
        settings.joined(stored, {"concurrency": 0}, labels)


def test_politeness_hash_read_by_the_scripts(tmp_path: Path) -> None:
    fields = settings.politeness_fields(stored_config(tmp_path))
    assert fields["delay"] == "2.0"
    assert fields["per_host"] == "10000"


def test_robots_cache_round_trip_and_bad_entries(
    redis_server: RedisServer, crawl_name: str, tmp_path: Path
) -> None:
    async def main() -> None:
        [front] = await created(redis_server, crawl_name, stored_config(tmp_path))
        origin = "http://a.test"
        entry = robots_cache.RobotsEntry(200, b"User-agent: *\nDisallow: /x\n\xff")
        prefix = front.part_prefix(front.part("a.test"))
        await robots_cache.put(front.redis, prefix, origin, entry, ttl=60)
        assert await robots_cache.get(front.redis, prefix, origin) == entry
        ttl = await front.redis.pttl(robots_cache.key(prefix, origin))
        assert 0 < ttl <= 60_000
        key = robots_cache.key(prefix, "http://b.test")
        for bad in ("x", '{"s": "200", "b": ""}', '{"s": 200, "b": "%%%"}'):
            await front.redis.set(key, bad)
            assert await robots_cache.get(front.redis, prefix, "http://b.test") is None
        await closed([front])

    asyncio.run(main())
