"""The Lua scripts that make each step of the shared frontier one atomic Redis call.

Data flow: :class:`~gossamer.distributed.frontier.RedisFrontier` -> **lua** -> Redis.
Redis runs a script to the end before any other command, so each step sees and leaves its
keys consistent, whatever the other workers do at the same moment. Each script touches the
keys of one hash slot only (``distributed/keys.py``), so the crawl runs on a Redis Cluster:

* ``STEP`` (one partition, ``P = gossamer:{NAME:K}:``), a worker's batch in one call: first
  the reaper (expired leases give their job back to the front of the host's queue and the
  host back to the schedule); then its **completions**, each only under its lease's current
  token: the host's timing moves by the politeness rule (``after`` below), the retry is
  queued, the page counted, the lease released and the host scheduled again if it has work;
  then **links** (seen-set checked, the per-host budget kept, queued per host); then up to
  ``want`` **leases**: the earliest hosts of the ready schedule whose time has come, each
  with a fresh fencing token, its next job as the lease's in-flight job. It answers what the
  partition holds when it could give no more (a time to wait for, others' leases, nothing,
  or only hosts waiting to retry an unavailable robots.txt past their grace).
* The crawl-wide slot's scripts (``CREATE``, ``CREDIT``, ``RECLAIM``: the settings and the
  page target as credit) are in :mod:`gossamer.distributed.lua_crawl`.
* ``RENEW``: a worker's leases of one partition live on (the heartbeat).
* ``CRAWL_DELAY``: a robots.txt Crawl-delay sets the host's delay (``with_crawl_delay``).
* ``RETRY_DEFERRED``: a new run asks the robots.txt files the last one deferred, at once.
* ``REQUEUE``: a recrawl's pages of one worker's folder in one partition, queued again
  whatever the seen-set says, at most once per recrawl, folder and partition.
* ``CONF``: each partition's copy of what its steps read (``P conf``), written by every
  worker that joins (idempotent), so a creator that dies after ``CREATE`` and before this
  leaves nothing a joiner cannot mend.

The host's timing is the hash ``P host:HOST`` (``delay``, ``next``, ``errors``; ``site``: its
site's delay, when a table sets one), the state of
:class:`gossamer.frontier.politeness.HostTiming`, and the Lua functions ``after`` and
``with_crawl_delay`` are the mirror of the Python functions of that name: the same
arithmetic on the same doubles, so the two agree exactly
(``tests/unit/distributed/test_politeness_mirror.py``). Retry-After and the robots.txt retry
wait are worked out in Python and passed as seconds.

Every script takes its slot's key prefix as ``ARGV[1]`` and the time as ``ARGV[2]`` (empty:
Redis ``TIME``, one clock for every machine; a number: an injected clock for tests), and one
key of that slot as ``KEYS[1]``, so a cluster client routes the call. Times are seconds as
floats and are returned as strings, because Redis truncates Lua numbers to integers in
replies. A lease is one field of ``P lease`` (host -> ``token TAB worker TAB reserved TAB
job``; JSON never holds a raw tab) and one member of ``P leases`` (by expiry, for the reaper).
"""

from __future__ import annotations

from gossamer.frontier.politeness import LOCAL_FAULT_PAUSE, MAX_DOUBLINGS

__all__ = ["CONF", "CRAWL_DELAY", "RENEW", "REQUEUE", "RETRY_DEFERRED", "STEP"]

_COMMON = (
    """
local P = ARGV[1]
-- The crawl-wide prefix (gossamer:{NAME}:) of this partition's (gossamer:{NAME:K}:): idle
-- workers listen on its 'work' channel (a channel is no key: PUBLISH reaches every node).
local G = (string.gsub(P, ':%d+}:$', '}:'))
local LOCAL_FAULT_PAUSE = """
    + repr(LOCAL_FAULT_PAUSE)
    + """
local MAX_DOUBLINGS = """
    + str(MAX_DOUBLINGS)
    + """
local function fmt(x) return string.format('%.17g', x) end
local function clock(arg)
  if arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local conf = redis.call('HMGET', P..'conf', 'delay', 'crawl_delay_cap', 'max_backoff',
                        'per_host', 'robots_wait', 'state')
local BASE_DELAY = tonumber(conf[1] or '0')
local DELAY_CAP = tonumber(conf[2] or '0')
local MAX_BACKOFF = tonumber(conf[3] or '0')
local PER_HOST = tonumber(conf[4] or '0')
local ROBOTS_WAIT = tonumber(conf[5] or '30')
local STATE = conf[6] or 'running'
-- The hosts to put in the schedule at the end of the step (host -> next-allowed time), and
-- whether any new work appeared, for the idle workers listening on the 'work' channel.
local ready_add = {}
local woken = false
local function flush_ready()
  local args = {}
  for host, nxt in pairs(ready_add) do
    table.insert(args, nxt)
    table.insert(args, host)
  end
  for i = 1, #args, 1000 do
    redis.call('ZADD', P..'ready', unpack(args, i, math.min(i + 999, #args)))
  end
  if #args > 0 then woken = true end
end
local function lease_of(raw)
  local token, worker, reserved, job = string.match(raw, '^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$')
  return token, worker, reserved, job
end
-- politeness.with_crawl_delay: the site's delay or the capped Crawl-delay, the longer.
local function site_delay(site)
  local own = tonumber(site or '')
  if own then return own end
  return BASE_DELAY
end
-- politeness.error_backoff
local function error_backoff(delay, errors)
  return math.min(math.max(delay, 1) * 2 ^ math.min(errors, MAX_DOUBLINGS), MAX_BACKOFF)
end
-- politeness.after: answer 'ok' | 'fault' | 'slow' | 'local' | 'unavailable'; wait the
-- seconds the outcome named (Retry-After, the next robots.txt attempt) or nil. h: the host
-- hash's delay, site, next, errors. The next-allowed time and the new run of faults.
local function after(h, answer, wait, now)
  local delay = tonumber(h[1] or '') or site_delay(h[2])
  local errors = tonumber(h[4] or '0')
  local rest = 0
  if answer == 'fault' then
    rest = error_backoff(delay, errors)
  elseif answer == 'slow' then
    rest = math.min(wait or error_backoff(delay, errors), MAX_BACKOFF)
  elseif answer == 'local' then
    rest = wait or LOCAL_FAULT_PAUSE
  elseif answer == 'unavailable' then
    rest = wait or 0
  end
  if answer == 'ok' or answer == 'local' then errors = 0 else errors = errors + 1 end
  return math.max(tonumber(h[3] or '0'), now + math.max(delay, rest)), errors
end
local function host_delay(hk)
  local h = redis.call('HMGET', hk, 'delay', 'site')
  return tonumber(h[1] or '') or site_delay(h[2])
end
-- The host goes back to the schedule if it has work (and no lease: the caller knows).
local function schedule(host, nxt)
  if redis.call('LLEN', P..'q:'..host) > 0 then
    if not nxt then nxt = tonumber(redis.call('HGET', P..'host:'..host, 'next') or '0') end
    ready_add[host] = fmt(nxt)
  end
end
local function reap(now, limit)
  local hosts = redis.call('ZRANGEBYSCORE', P..'leases', '-inf', now, 'LIMIT', 0, limit)
  for _, host in ipairs(hosts) do
    local raw = redis.call('HGET', P..'lease', host)
    if raw then
      local _, _, _, job = lease_of(raw)
      if job and job ~= '' then redis.call('LPUSH', P..'q:'..host, job) end
      redis.call('HDEL', P..'lease', host)
    end
    redis.call('ZREM', P..'leases', host)
    -- the gone worker's request may still reach the host: its delay counts from now
    local hk = P..'host:'..host
    local nxt = math.max(tonumber(redis.call('HGET', hk, 'next') or '0'), now + host_delay(hk))
    redis.call('HSET', hk, 'next', fmt(nxt))
    schedule(host, nxt)
  end
  if #hosts > 0 then redis.call('INCR', P..'epoch') end
  return #hosts
end
"""
)

# ARGV: P, now, worker, ttl, want (-1: no lease and no look; 0: a look only), reserve ('1':
#       each lease holds a page of the target),
#       reap limit, completion count, link count,
#       then per completion: host, token, answer, wait ('' or seconds), retry job ('' or
#       JSON), count page ('1'|'0'), deferred ('' or 'origin TAB why');
#       then per link: shard, member, host, job, budget, delay ('': the crawl's).
# -> {state, links queued, epoch, then what is left
#     ('more': it gave all wanted | 'wait', time | 'idle' | 'empty' | 'deferred'),
#     lost count, lost hosts..., lease count, (host, token, job)...,
#     deferred count, ('origin TAB why')...}
STEP = (
    _COMMON
    + """
local now = clock(ARGV[2])
local worker, ttl, want = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local reserve = ARGV[6] == '1'
local ncomp, nlinks = tonumber(ARGV[8]), tonumber(ARGV[9])
reap(now, tonumber(ARGV[7]))
local changed = false
-- Completions.
local lost = {}
local stored = 0
local base = 10
if ncomp > 0 then
  local hosts = {}
  for i = 0, ncomp - 1 do table.insert(hosts, ARGV[base + 7 * i]) end
  local held = redis.call('HMGET', P..'lease', unpack(hosts))
  local released = {}
  for i = 0, ncomp - 1 do
    local a = base + 7 * i
    local host = ARGV[a]
    local token, holder, reserved = nil, nil, nil
    if held[i + 1] then token, holder, reserved = lease_of(held[i + 1]) end
    if token ~= ARGV[a + 1] then
      table.insert(lost, host)
    else
      local hk = P..'host:'..host
      local answer = ARGV[a + 2]
      local h = redis.call('HMGET', hk, 'delay', 'site', 'next', 'errors', 'fetched', 'deferred')
      local nxt, errors = after(h, answer, tonumber(ARGV[a + 3]), now)
      local fields = {'next', fmt(nxt), 'errors', tostring(errors),
                      'fetched', tostring(tonumber(h[5] or '0') + 1)}
      if answer == 'unavailable' then  -- waiting for its robots.txt: since its first answer
        if not h[6] then
          table.insert(fields, 'deferred')
          table.insert(fields, fmt(now))
          redis.call('HSET', P..'deferred', host, fmt(now))
        end
        if ARGV[a + 6] ~= '' then redis.call('HSET', P..'deferred_origin', host, ARGV[a + 6]) end
      elseif answer ~= 'local' and h[6] then
        redis.call('HDEL', hk, 'deferred')
        redis.call('HDEL', P..'deferred', host)
        redis.call('HDEL', P..'deferred_origin', host)
      end
      redis.call('HSET', hk, unpack(fields))
      if ARGV[a + 4] ~= '' then redis.call('RPUSH', P..'q:'..host, ARGV[a + 4]) end
      if ARGV[a + 5] == '1' then stored = stored + 1 end
      table.insert(released, host)
      schedule(host, nxt)
    end
  end
  if #released > 0 then
    redis.call('HDEL', P..'lease', unpack(released))
    redis.call('ZREM', P..'leases', unpack(released))
    changed = true
  end
end
if stored > 0 then
  redis.call('INCRBY', P..'pages', stored)
  redis.call('HINCRBY', P..'stored', worker, stored)
end
-- Links: the seen-set, then the budget, then the host's queue.
local queued = 0
base = base + 7 * ncomp
local fresh = {}
local order = {}
for i = 0, nlinks - 1 do
  local a = base + 6 * i
  local host = ARGV[a + 2]
  local hk = P..'host:'..host
  if ARGV[a + 5] ~= '' then redis.call('HSETNX', hk, 'site', ARGV[a + 5]) end
  if redis.call('SADD', P..'seen:'..ARGV[a], ARGV[a + 1]) == 1 then
    local budget = tonumber(ARGV[a + 4]) or PER_HOST
    local take = true
    if budget > 0 then take = redis.call('HINCRBY', hk, 'admitted', 1) <= budget end
    if take then
      if not fresh[host] then
        fresh[host] = {}
        table.insert(order, host)
      end
      table.insert(fresh[host], ARGV[a + 3])
      queued = queued + 1
    end
  end
end
for _, host in ipairs(order) do
  local jobs = fresh[host]
  local length = 0
  for i = 1, #jobs, 1000 do
    length = redis.call('RPUSH', P..'q:'..host, unpack(jobs, i, math.min(i + 999, #jobs)))
  end
  -- A host that had work is in the schedule or leased already; one whose queue was empty
  -- goes into the schedule unless it is leased (its completion schedules it).
  if length == #jobs and not ready_add[host] and redis.call('HEXISTS', P..'lease', host) == 0 then
    ready_add[host] = fmt(tonumber(redis.call('HGET', P..'host:'..host, 'next') or '0'))
  end
end
if queued > 0 then changed = true end
flush_ready()
-- Leases.
local given = {}
local left = 'more'
if want >= 0 and (STATE == 'paused' or STATE == 'stopped') then
  want = -1
  left = STATE
end
if want > 0 then
  local hosts = redis.call('ZRANGEBYSCORE', P..'ready', '-inf', now, 'LIMIT', 0, want)
  if #hosts > 0 then
    redis.call('ZREM', P..'ready', unpack(hosts))
    local token = redis.call('INCRBY', P..'tokens', #hosts) - #hosts
    local expires = fmt(now + ttl)
    local leases, expiry = {}, {}
    for _, host in ipairs(hosts) do
      local job = redis.call('LPOP', P..'q:'..host)
      if job then
        token = token + 1
        local mark = reserve and '1' or ''
        table.insert(leases, host)
        table.insert(leases, tostring(token)..'\t'..worker..'\t'..mark..'\t'..job)
        table.insert(expiry, expires)
        table.insert(expiry, host)
        table.insert(given, host)
        table.insert(given, tostring(token))
        table.insert(given, job)
      end
    end
    if #leases > 0 then
      redis.call('HSET', P..'lease', unpack(leases))
      redis.call('ZADD', P..'leases', unpack(expiry))
    end
  end
end
-- A look (want 0) or a lease short of what was wanted says what is left.
if want >= 0 and #given / 3 < math.max(want, 1) then
  local first = redis.call('ZRANGE', P..'ready', 0, 0, 'WITHSCORES')
  if #first > 0 then
    left = 'wait'
  elseif redis.call('ZCARD', P..'leases') > 0 then
    left = 'idle'
  else
    left = 'empty'
  end
end
-- Nothing left here but hosts waiting to retry an unavailable robots.txt
-- (P..'deferred': host -> time of its first unavailable answer), past their grace
-- (politeness.deferral_end): 'deferred' with their origins; before it, wait for it.
local wait_until = nil
local deferred = {}
if left == 'wait' then
  local first = redis.call('ZRANGE', P..'ready', 0, 0, 'WITHSCORES')
  wait_until = tonumber(first[2])
  local nd = redis.call('HLEN', P..'deferred')
  if nd > 0 and redis.call('ZCARD', P..'leases') == 0 and redis.call('ZCARD', P..'ready') <= nd then
    local hosts = redis.call('ZRANGE', P..'ready', 0, -1, 'WITHSCORES')
    local ending = now
    local all = true
    for i = 1, #hosts, 2 do
      local at = tonumber(redis.call('HGET', P..'deferred', hosts[i]) or '')
      if not at then all = false break end
      if tonumber(hosts[i + 1]) <= at + ROBOTS_WAIT then
        ending = math.max(ending, at + ROBOTS_WAIT)
      end
      table.insert(deferred, redis.call('HGET', P..'deferred_origin', hosts[i]) or hosts[i])
    end
    if not all then
      deferred = {}
    elseif now < ending then
      deferred = {}
      wait_until = math.min(ending, wait_until)
    else
      left = 'deferred'
    end
  end
end
local epoch
if changed then epoch = redis.call('INCR', P..'epoch')
else epoch = tonumber(redis.call('GET', P..'epoch') or '0') end
if woken then redis.call('PUBLISH', G..'work', '1') end
local out = {STATE, queued, epoch, left, wait_until and fmt(wait_until) or '', #lost}
for _, host in ipairs(lost) do table.insert(out, host) end
table.insert(out, #given / 3)
for _, item in ipairs(given) do table.insert(out, item) end
table.insert(out, #deferred)
for _, item in ipairs(deferred) do table.insert(out, item) end
return out
"""
)

# ARGV: P, now, worker, ttl, then (host, token) pairs -> {hosts still held...}
# The leases named live ttl seconds more, if the worker still holds them under that token; a
# lease granted by a step whose answer never arrived (the connection dropped) is not named,
# so it expires and its job goes back to the schedule.
RENEW = (
    _COMMON
    + """
local now = clock(ARGV[2])
local worker = ARGV[3]
local expires = fmt(now + tonumber(ARGV[4]))
local held = {}
local expiry = {}
for i = 5, #ARGV, 2 do
  local raw = redis.call('HGET', P..'lease', ARGV[i])
  if raw then
    local token, holder = lease_of(raw)
    if token == ARGV[i + 1] and holder == worker then
      local at = redis.call('ZSCORE', P..'leases', ARGV[i])
      if at and tonumber(at) > now then
        table.insert(expiry, expires)
        table.insert(expiry, ARGV[i])
        table.insert(held, ARGV[i])
      end
    end
  end
end
if #expiry > 0 then redis.call('ZADD', P..'leases', 'XX', unpack(expiry)) end
return held
"""
)

# ARGV: P, now, host, Crawl-delay ('' = none) -> the host's delay
CRAWL_DELAY = (
    _COMMON
    + """
local hk = P..'host:'..ARGV[3]
local delay = site_delay(redis.call('HGET', hk, 'site'))
local crawl_delay = tonumber(ARGV[4])
if crawl_delay then delay = math.max(delay, math.min(crawl_delay, DELAY_CAP)) end
redis.call('HSET', hk, 'delay', fmt(delay))
return fmt(delay)
"""
)

# ARGV: P, now -> hosts made ready again
RETRY_DEFERRED = (
    _COMMON
    + """
local now = clock(ARGV[2])
local hosts = redis.call('HKEYS', P..'deferred')
for _, host in ipairs(hosts) do
  redis.call('HSET', P..'host:'..host, 'next', fmt(now))
  redis.call('HDEL', P..'host:'..host, 'deferred')
  if redis.call('ZSCORE', P..'ready', host) then redis.call('ZADD', P..'ready', now, host) end
  local origin = redis.call('HGET', P..'deferred_origin', host)
  if origin then  -- the cached unavailable answer ('origin TAB why')
    redis.call('DEL', P..'robots:'..string.match(origin, '^[^\t]*'))
  end
end
redis.call('DEL', P..'deferred', P..'deferred_origin')
return #hosts
"""
)

# ARGV: P, now, marker (the recrawl's start and the folder's id), then host, job pairs
# -> the number queued, or -1 when this folder's pages were queued for this recrawl already
REQUEUE = (
    _COMMON
    + """
if redis.call('SADD', P..'recrawled', ARGV[3]) == 0 then return -1 end
local queued = 0
for i = 4, #ARGV, 2 do
  redis.call('RPUSH', P..'q:'..ARGV[i], ARGV[i + 1])
  queued = queued + 1
  if redis.call('HEXISTS', P..'lease', ARGV[i]) == 0 then schedule(ARGV[i], nil) end
end
flush_ready()
if queued > 0 then redis.call('INCR', P..'epoch') end
if woken then redis.call('PUBLISH', G..'work', '1') end
return queued
"""
)

# ARGV: P, then field, value pairs of the crawl's politeness and its control state
# The partition's copy of what its steps read; written by every worker that joins.
CONF = """
local P = ARGV[1]
for i = 2, #ARGV, 2 do redis.call('HSET', P..'conf', ARGV[i], ARGV[i + 1]) end
return 1
"""
