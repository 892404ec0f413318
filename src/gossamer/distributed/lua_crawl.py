"""The Lua scripts of a shared crawl's crawl-wide slot: its settings and its page target.

Data flow: ``frontier.py`` (create; a worker's credit) and ``reclaim.py`` -> **lua_crawl** ->
the keys under ``G = gossamer:{NAME}:`` (``keys.crawl_prefix``), one slot on a cluster.

* ``CREATE``: the crawl-wide settings, politeness values and control state, and the page
  target's credit, all or nothing, only if the crawl does not exist yet.
* ``CREDIT``: the page target as credit. A worker takes credit before it leases pages under a
  target, one page per lease, and gives back what it did not use; a page stored uses one up
  (the partitions count pages stored per worker, ``P stored``). Asking is a sign of life, as
  a heartbeat is.
* ``RECLAIM``: the credit a worker that is gone still held comes back, what it was given less
  the pages the partitions say it stored, once its leases are reaped (their completions are
  refused after that). Credit handed out never passes the target, so a shared crawl stores
  exactly ``max_pages``.

The partitions' scripts are in :mod:`gossamer.distributed.lua`.
"""

from __future__ import annotations

__all__ = ["CREATE", "CREDIT", "RECLAIM"]

# ARGV: G, settings JSON, then field, value pairs of the politeness hash -> 1 if created
CREATE = """
local G = ARGV[1]
if not redis.call('SET', G..'settings', ARGV[2], 'NX') then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', G..'politeness', ARGV[i], ARGV[i + 1]) end
redis.call('HSET', G..'control', 'state', 'running')
local target = tonumber(redis.call('HGET', G..'politeness', 'target') or '0')
redis.call('SET', G..'credit', tostring(target))
return 1
"""

# ARGV: G, now, worker, take (credit wanted), give (credit given back)
# -> {credit granted now, credit left crawl-wide, state, target}
# G credit: target credit not handed out; G granted: worker -> credit it was given in all
# (less what it gave back). No target (0): nothing is granted or needed.
CREDIT = """
local G = ARGV[1]
local worker, take, give = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local target = tonumber(redis.call('HGET', G..'politeness', 'target') or '0')
local state = redis.call('HGET', G..'control', 'state') or 'running'
if target == 0 then return {0, 0, state, 0} end
-- Asking is a sign of life, as a heartbeat is (the reclaim spares a worker that asks).
local now = ARGV[2]
if now == '' then
  local t = redis.call('TIME')
  now = string.format('%.17g', tonumber(t[1]) + tonumber(t[2]) / 1000000)
end
redis.call('HSET', G..'beats', worker, now)
-- A worker taken for gone (its credit reclaimed) holds none: it is told so (-1).
if redis.call('HEXISTS', G..'reclaimed', worker) == 1 then return {-1, 0, state, target} end
local left = tonumber(redis.call('GET', G..'credit') or '0')
if give > 0 then
  left = left + give
  redis.call('HINCRBY', G..'granted', worker, -give)
end
local granted = math.max(0, math.min(take, left))
if granted > 0 then
  left = left - granted
  redis.call('HINCRBY', G..'granted', worker, granted)
end
if granted > 0 or give > 0 then redis.call('SET', G..'credit', tostring(left)) end
if give > 0 then redis.call('PUBLISH', G..'work', '1') end
return {granted, left, state, target}
"""

# ARGV: G, now, worker, the pages the partitions say it stored
# The credit of a worker that is gone, back to the crawl: what it was given less what it
# stored. -> the credit returned
RECLAIM = """
local G = ARGV[1]
local given = tonumber(redis.call('HGET', G..'granted', ARGV[3]) or '0')
local back = math.max(0, given - tonumber(ARGV[4]))
redis.call('HDEL', G..'granted', ARGV[3])
redis.call('HSET', G..'reclaimed', ARGV[3], ARGV[4])
if back > 0 then
  redis.call('INCRBY', G..'credit', back)
  redis.call('PUBLISH', G..'work', '1')
end
return back
"""
