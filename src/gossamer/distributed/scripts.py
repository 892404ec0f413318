"""Lua scripts sent to Redis by their SHA-1, in one pipeline per round.

Data flow: ``frontier.py`` (a round's script calls) -> **Scripts.run** -> Redis, one write per
node -> the answers in the order of the calls. Each script is loaded once per client (SCRIPT
LOAD goes to every master of a cluster) and again where a node lost it: a restarted Redis
has no scripts, and a pipeline answers NOSCRIPT instead of loading them. EVALSHA is sent as a
plain command with its one key: a cluster's pipeline refuses redis-py's own helper, and the
key is what routes the call to the master of its slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoScriptError

from gossamer.distributed.batch import text
from gossamer.distributed.errors import redis_errors

__all__ = ["Call", "Scripts"]

Call = tuple[str, str, Sequence[str | float | int]]  # script, its one key, its arguments


class Scripts:
    """The scripts of one client, by SHA-1."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._shas: dict[str, str] = {}

    async def _sha(self, script: str) -> str:
        sha = self._shas.get(script)
        if sha is None:
            sha = text(await self.redis.script_load(script))
            self._shas[script] = sha
        return sha

    async def run(self, calls: Sequence[Call]) -> list[Any]:
        """The answers of ``calls``, sent in one pipeline (one round trip per node)."""
        for attempt in range(2):
            with redis_errors("run a frontier step"):
                try:
                    shas = [await self._sha(script) for script, _, _ in calls]
                    if len(calls) == 1:
                        (_, key, args), sha = calls[0], shas[0]
                        answer = await self.redis.execute_command(  # type: ignore[no-untyped-call]
                            "EVALSHA", sha, 1, key, *args
                        )
                        return [answer]
                    async with self.redis.pipeline(transaction=False) as pipe:
                        for (_, key, args), sha in zip(calls, shas, strict=True):
                            pipe.execute_command("EVALSHA", sha, 1, key, *args)
                        return list(await pipe.execute())
                except NoScriptError:
                    if attempt:
                        raise
                    self._shas.clear()
        raise AssertionError("unreachable")
