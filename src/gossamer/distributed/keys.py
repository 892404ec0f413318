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
