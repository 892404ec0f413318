"""One worker process of a ``gossamer crawl --workers N`` crawl: its entry point and uplink.

Data flow: the coordinator (``engine/workers.py``) starts each worker ahead of its orders
(``spawning.start_workers``: tied to the coordinator, it imports this module while the
coordinator prepares), then sends them (the crawl's settings, the seeds, its index):
**worker_main** runs the same ``Crawler`` as a lone crawl, with a ``Part``
(``engine/partition.py``) for its share of the hosts, and ends by sending the coordinator its
statistics ("done"). Its own control socket (``DIR/control-wK.sock``) is the crawler's, which
the coordinator's fleet (``engine/fleet.py``) follows.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, cast

from gossamer import logs
from gossamer.config import config_from_json
from gossamer.crawling.folder import carried_fields
from gossamer.engine.collector import crawl_collector
from gossamer.engine.crawler import Crawler
from gossamer.engine.partition import Part
from gossamer.errors import GossamerError
from gossamer.seeds import SeedList
from gossamer.spawning import FAILED, tie_to_coordinator

__all__ = ["FAILED", "worker_main"]

log = logging.getLogger(__name__)

# The death tie a started worker makes first (``spawning.tie_to_coordinator``), by its old name.
_die_with_parent = tie_to_coordinator


def worker_main(  # noqa: PLR0917 - a process target takes its arguments positionally
    config_data: dict[str, Any],
    out: str,
    seeds: SeedList,
    index: int,
    count: int,
    link: Connection,
    inbox: multiprocessing.Queue[Any],
    allowance: int | None,
    log_level: int = logging.WARNING,
) -> None:
    """Entry point of one worker process; ``allowance``: its first grant of the page target
    (``engine/budget.py``), None without one."""
    # A spawned process starts without the CLI's logging set-up: the same one, at the
    # coordinator's level, each line saying which worker it comes from.
    logs.configure(log_level, worker=index)
    # Ctrl-C reaches the whole process group; the coordinator decides what it means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    config = config_from_json(config_data, Path(out))
    config = replace(config, progress=False)
    up = _Uplink(link)
    # Part only ever calls put(): the uplink stands in for the queue it is typed with.
    uplink = cast("multiprocessing.Queue[Any]", up)
    part = Part(index=index, count=count, up=uplink, inbox=inbox, allowance=allowance)
    error = ""
    snapshot: dict[str, object] = {}
    try:
        with crawl_collector():
            outcome = asyncio.run(Crawler(config, seeds, part=part).run())
        snapshot = outcome.stats.snapshot() | carried_fields(outcome.stats)
        snapshot["reason"] = outcome.reason
    except GossamerError as exc:
        error = str(exc)
    except Exception as exc:  # a bug: reported in one line, and the crawl stops
        log.debug("worker %d failed", index, exc_info=True)
        snapshot = {"reason": FAILED}
        error = f"worker {index} failed: {type(exc).__name__}: {exc}"
    up.put(("done", index, snapshot, error))
    link.close()


class _Uplink:
    """A worker's channel to the coordinator: a pipe of its own. A worker killed in the middle
    of a message damages only its own pipe, where a queue shared by all workers would be left
    with its lock held, and every other writer blocked for ever."""

    def __init__(self, link: Connection) -> None:
        self._link = link

    def put(self, message: tuple[Any, ...]) -> None:
        self._link.send(message)
