"""The Lua scripts that make each step of the shared frontier one atomic Redis round-trip.

Data flow: :class:`~gossamer.distributed.frontier.RedisFrontier` -> **lua** -> Redis.
Redis runs a script to the end before any other command, so each step below sees and leaves
the crawl's keys consistent, whatever the other workers do at the same moment:

* ``LEASE``: reap expired leases, then take the earliest host in the ready schedule whose
  next-allowed time has come, lease it to the calling worker with a fresh fencing token and a
  TTL, pop its next job and record that job as the lease's in-flight job.
* ``COMPLETE``: only under the lease's current token: record the host's next-allowed time
  (delay, Crawl-delay, backoff), queue the retry and the page's new links (seen-set checked),
  release the lease and put the host back in the schedule if it has work.
* ``RENEW``: the heartbeat; extends the worker's unexpired leases, drops the ones it lost,
  stores its figures.
* ``REAP``: expired leases give their in-flight job back to the front of the host's queue
  and the host back to the schedule.
* ``ADD``: seeds and other discoveries outside a completion.
* ``CREATE``: the settings, the politeness values the scripts read and the control state,
  all or nothing, and only if the crawl does not exist yet.

Every script takes the key prefix as ``ARGV[1]`` and the time as ``ARGV[2]`` (empty: Redis
``TIME``, one clock for every machine; a number: an injected clock for tests). Times are
seconds as floats and are returned as strings, because Redis truncates Lua numbers to
integers in replies. Keys are built inside the scripts from the prefix, so the crawl must live
on one Redis server (not a Redis Cluster; see the notes of issue 12).
"""

from __future__ import annotations

__all__ = ["ADD", "COMPLETE", "CREATE", "LEASE", "REAP", "RENEW"]

_COMMON = """
local P = ARGV[1]
local function fmt(x) return string.format('%.17g', x) end
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local scheduled = 0
local function schedule(host)
  if redis.call('LLEN', P..'q:'..host) > 0 then
    local nxt = tonumber(redis.call('HGET', P..'host:'..host, 'next') or '0')
    scheduled = scheduled + redis.call('ZADD', P..'ready', nxt, host)
  end
end
-- Idle workers listen on P..'work': a host newly in the schedule may be theirs to take.
local function wake()
  if scheduled > 0 then redis.call('PUBLISH', P..'work', scheduled) end
end
local function reap(now, limit)
  local hosts = redis.call('ZRANGEBYSCORE', P..'leases', '-inf', now, 'LIMIT', 0, limit)
  local returned = 0
  local delay = tonumber(redis.call('HGET', P..'politeness', 'delay') or '0')
  for _, host in ipairs(hosts) do
    local lease = P..'lease:'..host
    local got = redis.call('HMGET', lease, 'worker', 'job')
    if got[2] then
      redis.call('LPUSH', P..'q:'..host, got[2])
      returned = returned + 1
    end
    if got[1] then redis.call('SREM', P..'held:'..got[1], host) end
    redis.call('DEL', lease)
    redis.call('ZREM', P..'leases', host)
    -- the dead worker's request may still reach the host: its delay counts from now
    local hk = P..'host:'..host
    local nxt = tonumber(redis.call('HGET', hk, 'next') or '0')
    redis.call('HSET', hk, 'next', fmt(math.max(nxt, now + delay)))
    schedule(host)
  end
  return hosts, returned
end
local function admit(base, count)
  local limit = tonumber(redis.call('HGET', P..'politeness', 'per_host') or '0')
  local queued = 0
  for i = base, base + 4 * (count - 1), 4 do
    local host = ARGV[i + 2]
    if redis.call('SADD', P..'seen:'..ARGV[i], ARGV[i + 1]) == 1 then
      local hk = P..'host:'..host
      local admitted = redis.call('HINCRBY', hk, 'admitted', 1)
      if limit == 0 or admitted <= limit then
        redis.call('RPUSH', P..'q:'..host, ARGV[i + 3])
        queued = queued + 1
        if redis.call('EXISTS', P..'lease:'..host) == 0 then schedule(host) end
      end
    end
  end
  return queued
end
"""

# ARGV: prefix, now, reap_limit -> {hosts reaped..., jobs returned (last)}
REAP = (
    _COMMON
    + """
local hosts, returned = reap(clock(ARGV[2]), tonumber(ARGV[3]))
wake()
table.insert(hosts, tostring(returned))
return hosts
"""
)

# ARGV: prefix, now, worker, ttl, reap_limit
# -> {'job', host, token, job} | {'wait', time} | {'idle'} | {'finished'} | {'paused'|'stopped'}
LEASE = (
    _COMMON
    + """
local now = clock(ARGV[2])
local state = redis.call('HGET', P..'control', 'state')
if state == 'paused' or state == 'stopped' then return {state} end
reap(now, tonumber(ARGV[5]))
for _ = 1, 16 do
  local first = redis.call('ZRANGE', P..'ready', 0, 0, 'WITHSCORES')
  if #first == 0 then
    if redis.call('ZCARD', P..'leases') == 0 then return {'finished'} end
    return {'idle'}
  end
  local host = first[1]
  if tonumber(first[2]) > now then return {'wait', first[2]} end
  redis.call('ZREM', P..'ready', host)
  local job = redis.call('LPOP', P..'q:'..host)
  if job then
    local token = tostring(redis.call('INCR', P..'tokens'))
    local expires = now + tonumber(ARGV[4])
    redis.call('HSET', P..'lease:'..host, 'worker', ARGV[3], 'token', token, 'job', job,
               'expires', fmt(expires))
    redis.call('ZADD', P..'leases', expires, host)
    redis.call('SADD', P..'held:'..ARGV[3], host)
    return {'job', host, token, job}
  end
end
return {'wait', fmt(now)}
"""
)

# ARGV: prefix, now, host, token, outcome ('ok'|'fault'|'slow'), retry_after ('' or seconds),
#       retry job ('' or JSON), then (shard, member, host, job) per link
# -> {'done', next-allowed time, links queued} | {'lost'}
COMPLETE = (
    _COMMON
    + """
local now = clock(ARGV[2])
local host = ARGV[3]
local lease = P..'lease:'..host
if redis.call('HGET', lease, 'token') ~= ARGV[4] then return {'lost'} end
local worker = redis.call('HGET', lease, 'worker')
local hk = P..'host:'..host
local pol = redis.call('HMGET', P..'politeness', 'delay', 'max_backoff')
local max_backoff = tonumber(pol[2])
local delay = math.max(tonumber(pol[1]), tonumber(redis.call('HGET', hk, 'crawl_delay') or '0'))
local errors = tonumber(redis.call('HGET', hk, 'errors') or '0')
local backoff = 0
if ARGV[5] == 'ok' then
  redis.call('HSET', hk, 'errors', '0')
else
  redis.call('HSET', hk, 'errors', tostring(errors + 1))
  if ARGV[6] ~= '' then
    backoff = math.min(tonumber(ARGV[6]), max_backoff)
  elseif ARGV[5] == 'fault' then
    backoff = math.min(math.max(delay, 1) * 2 ^ math.min(errors, 16), max_backoff)
  end
end
local before = tonumber(redis.call('HGET', hk, 'next') or '0')
local nxt = math.max(before, now + math.max(delay, backoff))
redis.call('HSET', hk, 'next', fmt(nxt))
redis.call('HINCRBY', hk, 'fetched', 1)
if ARGV[7] ~= '' then redis.call('RPUSH', P..'q:'..host, ARGV[7]) end
redis.call('DEL', lease)
redis.call('ZREM', P..'leases', host)
redis.call('SREM', P..'held:'..worker, host)
local pages = 0
if ARGV[8] == '1' then pages = redis.call('INCR', P..'pages') end
local queued = admit(9, (#ARGV - 8) / 4)
schedule(host)
wake()
return {'done', fmt(nxt), queued, pages}
"""
)

# ARGV: prefix, now, then (shard, member, host, job) per URL -> URLs queued
ADD = (
    _COMMON
    + """
local queued = admit(3, (#ARGV - 2) / 4)
wake()
return queued
"""
)

# ARGV: prefix, now, worker, ttl, figures JSON -> {hosts still held...}
RENEW = (
    _COMMON
    + """
local now = clock(ARGV[2])
local worker = ARGV[3]
-- ARGV[6] == '1': renew only the leases whose tokens follow (those the worker knows it
-- holds); a lease whose LEASE answer was lost with a connection then expires and is reaped.
local only = nil
if ARGV[6] == '1' then
  only = {}
  for i = 7, #ARGV do only[ARGV[i]] = true end
end
local held = {}
for _, host in ipairs(redis.call('SMEMBERS', P..'held:'..worker)) do
  local lease = P..'lease:'..host
  local got = redis.call('HMGET', lease, 'worker', 'expires', 'token')
  local known = only == nil or (got[3] and only[got[3]])
  if got[1] == worker and tonumber(got[2]) > now and known then
    local expires = now + tonumber(ARGV[4])
    redis.call('HSET', lease, 'expires', fmt(expires))
    redis.call('ZADD', P..'leases', 'XX', expires, host)
    table.insert(held, host)
  elseif got[1] ~= worker then
    redis.call('SREM', P..'held:'..worker, host)
  end
end
redis.call('HSET', P..'workers', worker, ARGV[5])
redis.call('HSET', P..'beats', worker, fmt(now))
return held
"""
)

# ARGV: prefix, settings JSON, then field, value pairs of the politeness hash -> 1 if created
CREATE = """
local P = ARGV[1]
if not redis.call('SET', P..'settings', ARGV[2], 'NX') then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', P..'politeness', ARGV[i], ARGV[i + 1]) end
redis.call('HSET', P..'control', 'state', 'running')
return 1
"""
