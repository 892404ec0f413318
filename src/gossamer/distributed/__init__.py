"""A crawl across machines: the frontier, its leases and its settings shared in Redis.

Data flow: seeds -> **distributed** (Redis: per-host queues, ready schedule, seen-set, leases)
-> each worker's fetch -> parse -> store. The local :mod:`gossamer.frontier` keeps one
process's crawl; this package keeps one crawl for many processes on many machines.
"""

from gossamer.distributed.control import CrawlStatus, WorkerFigures, set_state, status
from gossamer.distributed.errors import SharedFrontierError
from gossamer.distributed.frontier import (
    Done,
    Finished,
    Halted,
    Idle,
    Lease,
    Leased,
    Lost,
    RedisFrontier,
    Wait,
)

__all__ = [
    "CrawlStatus",
    "Done",
    "Finished",
    "Halted",
    "Idle",
    "Lease",
    "Leased",
    "Lost",
    "RedisFrontier",
    "SharedFrontierError",
    "Wait",
    "WorkerFigures",
    "set_state",
    "status",
]
