"""Web UI, the shard server's side: a folder's index shards answering a front over HTTP.

Data flow: front (``gossamer serve DIR --shard URL``, ``search.scatter``) -> **shardapi**
(``POST /shard/K/search``, ``/freqs``, ``/explain``, ``/docs``: JSON in, JSON out) ->
the folder's engine. Every ``gossamer serve`` answers them: a sharded index as its shards
0..N-1, an unsharded one as shard 0. The work (tantivy searches, explanations) runs in a
thread, so the server's other requests go on meanwhile. Faults come back as ``{"error":
...}`` with status 400 (a bad request) or 503 (no complete index here yet).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from gossamer.errors import GossamerError
from gossamer.search.engine import SearchEngine
from gossamer.search.scatter import answer_docs, answer_explain, answer_freqs, answer_search

__all__ = ["add_shard_api"]

_MAX_BODY = 1 << 20
Answer = Callable[[SearchEngine, int, dict[str, Any]], dict[str, Any]]


def add_shard_api(app: web.Application, engine: Callable[[], object]) -> None:
    """Route ``/shard/K/...`` of ``app`` to the engine ``engine()`` returns (it raises 503
    while there is no complete index)."""

    def route(answer: Answer) -> Callable[[web.Request], Any]:
        async def handle(request: web.Request) -> web.StreamResponse:
            try:
                shard = int(request.match_info["shard"])
                body = json.loads(await request.content.read(_MAX_BODY))
                if not isinstance(body, dict):
                    raise ValueError("the body is not a JSON object")
            except ValueError as exc:
                return web.json_response({"error": f"bad request: {exc}"}, status=400)
            opened = engine()
            if not isinstance(opened, SearchEngine):
                return web.json_response({"error": "this server's shards are remote"}, status=400)
            try:
                answered = await asyncio.to_thread(answer, opened, shard, body)
            except (GossamerError, KeyError, TypeError, ValueError) as exc:
                return web.json_response({"error": str(exc)}, status=400)
            return web.json_response(answered)

        return handle

    app.router.add_post(r"/shard/{shard:\d+}/search", route(answer_search))
    app.router.add_post(r"/shard/{shard:\d+}/freqs", route(answer_freqs))
    app.router.add_post(r"/shard/{shard:\d+}/docs", route(answer_docs))
    app.router.add_post(r"/shard/{shard:\d+}/explain", route(answer_explain))
