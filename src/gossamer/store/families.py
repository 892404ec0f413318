"""Store stage, trap families: the URL families a crawl has seen feed themselves, in ``crawl.db``.

Data flow: admission (``crawling.admission``) -> ``urls.traps.TrapFamilies`` -> **families**
(``MetadataDB.add_family``, committed with the batch of the exchange that found the link) ->
``crawl.db`` -> the next process's ``TrapFamilies.restore`` (a resumed crawl, each worker of
a ``--workers`` crawl for the hosts it owns, the replay of a resume or recover).

One row per self-fed family: its key (``urls.traps.family_key``: the host name, then the path
and query with numbers masked), that host name, and the shallowest link depth its chain has
reached. A row is written when a family is first met and again only when that depth
decreases; a write keeps the smaller depth, so rows from the replay of a record, from a
worker, or from another crawl folder (``merge``) can be applied in any order, any number of
times.
"""

from __future__ import annotations

__all__ = ["FAMILIES_TABLE", "MERGE_FAMILIES", "PUT_FAMILY", "SELECT_FAMILIES"]

FAMILIES_TABLE = """
CREATE TABLE trap_families (
    family TEXT PRIMARY KEY,  -- urls.traps.family_key: host name, masked path and query
    host TEXT NOT NULL,       -- the host name the key starts with (a worker loads its own)
    depth INTEGER NOT NULL    -- the shallowest link depth its self-fed chain has reached
);
"""

PUT_FAMILY = (
    "INSERT INTO trap_families (family, host, depth) VALUES (?, ?, ?)"
    " ON CONFLICT (family) DO UPDATE SET depth = excluded.depth"
    " WHERE excluded.depth < trap_families.depth"
)

# In the order rows were first written: TrapFamilies keeps the last ones past its capacity.
SELECT_FAMILIES = "SELECT family, host, depth FROM trap_families ORDER BY rowid"

# For ``gossamer merge``: another crawl folder's families, attached as ``src``.
MERGE_FAMILIES = """
INSERT INTO main.trap_families (family, host, depth)
SELECT family, host, depth FROM src.trap_families WHERE true
ON CONFLICT (family) DO UPDATE SET depth = min(trap_families.depth, excluded.depth)
"""
