"""Where a shared crawl's keys live: one crawl-wide slot and ``parts`` partitions by host.

Data flow: every module that reads or writes the crawl in Redis -> **keys** -> a key name.

A Redis Cluster spreads keys over its nodes by hash slot, and a script may touch the keys of
one slot only. So the crawl's keys carry hash tags (the part of a key between its first
``{`` and ``}`` is all that is hashed):

* ``gossamer:{NAME}:`` (``crawl_prefix``): what every worker shares crawl-wide: settings,
  politeness, control, the page target's credit, heartbeats, statuses, the recrawl's state.
* ``gossamer:{NAME:K}:`` (``part_prefix``), K = 0 .. parts-1: one partition of the frontier.
  A host belongs to one partition (``part_of``), and with it everything about the host: its
  queue, timing, lease, robots.txt answers, and the seen-set members of its URLs. A batch
  step of the frontier (``lua.STEP``) touches one partition only.

On a single Redis the tags change nothing; a crawl made on one keeps one partition, a crawl
made on a cluster as many as :data:`PARTS_PER_NODE` per master, so adding nodes before the
crawl starts adds frontier capacity. ``parts`` is fixed when the crawl is made (it decides
where every host's keys are) and stored in the crawl-wide ``politeness`` hash.

The keys: crawl-wide under ``gossamer:{NAME}:`` (``G``), the frontier in
``parts`` partitions by host under ``gossamer:{NAME:K}:`` (``P``)::

    G settings          string  the crawl's settings, JSON (settings.py)
    G politeness        hash    delay, crawl_delay_cap, max_backoff, max_retries, per_host,
                                robots_wait, target (the page target, 0: none), parts
    G control           hash    state: running | paused | stopped
    G credit / granted  string / hash  page-target credit not handed out / worker -> given
    G workers / beats   hash    worker -> figures JSON / last heartbeat time
    G status, domains, hosts    each worker's status (livestatus.py)
    P conf              hash    the partition's copy of the politeness values and the state
    P q:HOST            list    the host's queued jobs (codec.py JSON), oldest first
    P ready             zset    host -> next-allowed time; unleased hosts with queued work
    P host:HOST         hash    delay, next, errors (frontier.politeness.HostTiming; delay
                                once its robots.txt was read), site (its [[site]] tables'
                                delay, if they set one), fetched, admitted, deferred
    P lease             hash    host -> token, worker, reserved, job (in flight)
    P leases            zset    host -> lease expiry, for the reaper
    P pages / stored    string / hash  pages stored / worker -> pages it stored
    P tokens / epoch    string  the fencing-token counter / changes of queues and leases
    P seen:SHARD        set     64-bit fingerprints as integers (compact intsets)
    P robots:ORIGIN     string  robots.txt cache, JSON, with a TTL (robots_cache.py)
"""

from __future__ import annotations

import zlib

__all__ = ["PARTS_PER_NODE", "crawl_prefix", "part_of", "part_prefix"]

PARTS_PER_NODE = 4  # partitions per cluster master: several per node keep the load even


def crawl_prefix(name: str) -> str:
    return f"gossamer:{{{name}}}:"


def part_prefix(name: str, part: int) -> str:
    return f"gossamer:{{{name}:{part}}}:"


def part_of(host: str, parts: int) -> int:
    """The partition of ``host``: the same on every machine (CRC-32 of its name)."""
    if parts <= 1:
        return 0
    return zlib.crc32(host.encode("utf-8", "surrogatepass")) % parts
