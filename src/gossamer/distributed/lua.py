"""The Lua scripts that make each step of the shared frontier one atomic Redis round-trip.

Data flow: :class:`~gossamer.distributed.frontier.RedisFrontier` -> **lua** -> Redis.
Redis runs a script to the end before any other command, so each step below sees and leaves
the crawl's keys consistent, whatever the other workers do at the same moment:

* ``LEASE``: reap expired leases, then take the earliest host in the ready schedule whose
  next-allowed time has come, lease it to the calling worker with a fresh fencing token and a
  TTL, pop its next job and record that job as the lease's in-flight job. Under a page
  target the lease also reserves one page of it, and none is handed out while the pages
  stored and reserved reach the target, so the crawl stores exactly the target.
* ``COMPLETE``: only under the lease's current token: move the host's timing by the
  politeness rule (``after`` below), queue the retry and the page's new links (seen-set
  checked), count the page or give its reservation back, release the lease and put the host
  back in the schedule if it has work.
* ``CRAWL_DELAY``: a robots.txt Crawl-delay sets the host's delay (``with_crawl_delay``).
* ``ADD`` and COMPLETE's links carry, per URL, what the host's ``[[site]]`` tables set
  (``gossamer.sites``): its URL budget, kept against ``admitted``, and its delay, kept as the
  host's ``site`` field, which stands for the crawl's delay in every rule of the host.
* ``RETRY_DEFERRED``: a new run asks the robots.txt files the last one deferred, at once.
* When nothing is left but hosts waiting to retry an unavailable robots.txt, LEASE waits
  their grace (``--robots-wait``, ``deferral``: the mirror of
  :func:`gossamer.frontier.politeness.deferral_end`) and then answers ``deferred`` with
  their origins: the crawl ends as one process does, leaving them to the next run.
* ``RENEW``: the heartbeat; extends the worker's unexpired leases, drops the ones it lost,
  stores its figures.
* ``REAP``: expired leases give their in-flight job back to the front of the host's queue,
  their page reservation back to the target and the host back to the schedule.
* ``ADD``: seeds and other discoveries outside a completion.
* ``REQUEUE``: a recrawl's pages of one worker's folder, queued again whatever the seen-set
  says, at most once per recrawl and folder (the marker and the jobs in one step).
* ``CREATE``: the settings, the politeness values the scripts read and the control state,
  all or nothing, and only if the crawl does not exist yet.

The host's timing is the hash ``P host:HOST`` (``delay``, ``next``, ``errors``; ``site``: its
site's delay, when a table sets one), the state of
:class:`gossamer.frontier.politeness.HostTiming`, and the Lua functions ``after`` and
``with_crawl_delay`` are the mirror of the Python functions of that name: the same
arithmetic on the same doubles, so the two agree exactly
(``tests/unit/distributed/test_politeness_mirror.py``). Retry-After and the robots.txt retry
wait are worked out in Python and passed as seconds.

Every script takes the key prefix as ``ARGV[1]`` and the time as ``ARGV[2]`` (empty: Redis
``TIME``, one clock for every machine; a number: an injected clock for tests). Times are
seconds as floats and are returned as strings, because Redis truncates Lua numbers to
integers in replies. Keys are built inside the scripts from the prefix, so the crawl must live
on one Redis server (not a Redis Cluster; see the notes of issue 12).
"""

from __future__ import annotations

from gossamer.frontier.politeness import LOCAL_FAULT_PAUSE, MAX_DOUBLINGS

__all__ = ["ADD", "COMPLETE", "CRAWL_DELAY", "CREATE", "LEASE", "REAP", "RENEW", "RETRY_DEFERRED"]

_COMMON = (
    """
local P = ARGV[1]
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
-- The host's delay before Crawl-delay: its [[site]] tables' (admit), else the crawl's.
local function site_delay(hk)
  local site = tonumber(redis.call('HGET', hk, 'site') or '')
  if site then return site end
  return tonumber(redis.call('HGET', P..'politeness', 'delay') or '0')
end
-- The host's delay: its own once its robots.txt was read (CRAWL_DELAY), else its site's.
local function host_delay(hk)
  local own = tonumber(redis.call('HGET', hk, 'delay') or '')
  if own then return own end
  return site_delay(hk)
end
-- politeness.with_crawl_delay: the site's delay or the capped Crawl-delay, the longer.
local function with_crawl_delay(hk, crawl_delay)
  local delay = site_delay(hk)
  if crawl_delay then
    local cap = tonumber(redis.call('HGET', P..'politeness', 'crawl_delay_cap'))
    delay = math.max(delay, math.min(crawl_delay, cap))
  end
  redis.call('HSET', hk, 'delay', fmt(delay))
  return delay
end
-- politeness.error_backoff
local function error_backoff(delay, errors, max_backoff)
  return math.min(math.max(delay, 1) * 2 ^ math.min(errors, MAX_DOUBLINGS), max_backoff)
end
-- politeness.after: answer 'ok' | 'fault' | 'slow' | 'local' | 'unavailable'; wait the
-- seconds the outcome named (Retry-After, the next robots.txt attempt) or nil.
local function after(hk, answer, wait, now)
  local max_backoff = tonumber(redis.call('HGET', P..'politeness', 'max_backoff'))
  local delay = host_delay(hk)
  local got = redis.call('HMGET', hk, 'errors', 'next')
  local errors = tonumber(got[1] or '0')
  local rest = 0
  if answer == 'fault' then
    rest = error_backoff(delay, errors, max_backoff)
  elseif answer == 'slow' then
    rest = math.min(wait or error_backoff(delay, errors, max_backoff), max_backoff)
  elseif answer == 'local' then
    rest = wait or LOCAL_FAULT_PAUSE
  elseif answer == 'unavailable' then
    rest = wait or 0
  end
  if answer == 'ok' or answer == 'local' then errors = 0 else errors = errors + 1 end
  local nxt = math.max(tonumber(got[2] or '0'), now + math.max(delay, rest))
  redis.call('HSET', hk, 'next', fmt(nxt), 'errors', tostring(errors))
  return nxt
end
-- A page reserved by a lease and not stored after all goes back to the target.
local function unreserve()
  if redis.call('DECR', P..'reserved') < 0 then redis.call('SET', P..'reserved', '0') end
  scheduled = scheduled + 1  -- a worker waiting for room under the target may lease again
end
local function reap(now, limit)
  local hosts = redis.call('ZRANGEBYSCORE', P..'leases', '-inf', now, 'LIMIT', 0, limit)
  local returned = 0
  for _, host in ipairs(hosts) do
    local lease = P..'lease:'..host
    local got = redis.call('HMGET', lease, 'worker', 'job', 'reserved')
    if got[2] then
      redis.call('LPUSH', P..'q:'..host, got[2])
      returned = returned + 1
    end
    if got[1] then redis.call('SREM', P..'held:'..got[1], host) end
    if got[3] then unreserve() end
    redis.call('DEL', lease)
    redis.call('ZREM', P..'leases', host)
    -- the dead worker's request may still reach the host: its delay counts from now
    local hk = P..'host:'..host
    local nxt = tonumber(redis.call('HGET', hk, 'next') or '0')
    redis.call('HSET', hk, 'next', fmt(math.max(nxt, now + host_delay(hk))))
    schedule(host)
  end
  return hosts, returned
end
-- politeness.deferral_end, for a crawl left with nothing but hosts waiting to retry an
-- unavailable robots.txt (P..'deferred': host -> time of its first unavailable answer):
-- nil while other work remains; else {'wait', time} until their grace (robots_wait) is
-- over, then {'deferred', origin...}: every worker ends and a later run asks them again.
local function deferral(now)
  if redis.call('ZCARD', P..'leases') > 0 then return nil end
  if redis.call('ZCARD', P..'ready') > redis.call('HLEN', P..'deferred') then return nil end
  local grace = tonumber(redis.call('HGET', P..'politeness', 'robots_wait') or '30')
  local hosts = redis.call('ZRANGE', P..'ready', 0, -1, 'WITHSCORES')
  local ending = now
  local origins = {}
  for i = 1, #hosts, 2 do
    local at = tonumber(redis.call('HGET', P..'deferred', hosts[i]) or '')
    if not at then return nil end
    if tonumber(hosts[i + 1]) <= at + grace then ending = math.max(ending, at + grace) end
    table.insert(origins, redis.call('HGET', P..'deferred_origin', hosts[i]) or hosts[i])
  end
  if #hosts == 0 then return nil end
  if now < ending then return {'wait', fmt(math.min(ending, tonumber(hosts[2])))} end
  table.insert(origins, 1, 'deferred')
  return origins
end
-- Each URL: shard, member, host, job, then its host's [[site]] budget and delay ('': the
-- crawl's; a budget of 0: none).
local function admit(base, count)
  local limit = tonumber(redis.call('HGET', P..'politeness', 'per_host') or '0')
  local queued = 0
  for i = base, base + 6 * (count - 1), 6 do
    local host = ARGV[i + 2]
    local hk = P..'host:'..host
    if ARGV[i + 5] ~= '' then redis.call('HSETNX', hk, 'site', ARGV[i + 5]) end
    if redis.call('SADD', P..'seen:'..ARGV[i], ARGV[i + 1]) == 1 then
      local budget = tonumber(ARGV[i + 4]) or limit
      local admitted = redis.call('HINCRBY', hk, 'admitted', 1)
      if budget == 0 or admitted <= budget then
        redis.call('RPUSH', P..'q:'..host, ARGV[i + 3])
        queued = queued + 1
        if redis.call('EXISTS', P..'lease:'..host) == 0 then schedule(host) end
      end
    end
  end
  return queued
end
"""
)

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
# -> {'job', host, token, job} | {'wait', time} | {'idle'} | {'finished'}
#    | {'deferred', origin...} | {'paused'|'stopped'|'target'}
LEASE = (
    _COMMON
    + """
local now = clock(ARGV[2])
local state = redis.call('HGET', P..'control', 'state')
if state == 'paused' or state == 'stopped' then return {state} end
reap(now, tonumber(ARGV[5]))
-- The page target (0: none): a lease reserves one page of it, so that the pages stored
-- plus the fetches that may still store one never pass it.
local target = tonumber(redis.call('HGET', P..'politeness', 'target') or '0')
local reserve = target > 0
if reserve then
  local stored = tonumber(redis.call('GET', P..'pages') or '0')
  if stored >= target then wake() return {'target'} end
  if stored + tonumber(redis.call('GET', P..'reserved') or '0') >= target then
    wake()
    return {'idle'}  -- the fetches in flight may reach it, or give their pages back
  end
end
for _ = 1, 16 do
  local first = redis.call('ZRANGE', P..'ready', 0, 0, 'WITHSCORES')
  if #first == 0 then
    if redis.call('ZCARD', P..'leases') == 0 then return {'finished'} end
    return {'idle'}
  end
  local host = first[1]
  if tonumber(first[2]) > now then return deferral(now) or {'wait', first[2]} end
  redis.call('ZREM', P..'ready', host)
  local job = redis.call('LPOP', P..'q:'..host)
  if job then
    local token = tostring(redis.call('INCR', P..'tokens'))
    local expires = now + tonumber(ARGV[4])
    redis.call('HSET', P..'lease:'..host, 'worker', ARGV[3], 'token', token, 'job', job,
               'expires', fmt(expires))
    if reserve then
      redis.call('HSET', P..'lease:'..host, 'reserved', '1')
      redis.call('INCR', P..'reserved')
    end
    redis.call('ZADD', P..'leases', expires, host)
    redis.call('SADD', P..'held:'..ARGV[3], host)
    return {'job', host, token, job}
  end
end
return {'wait', fmt(now)}
"""
)

# ARGV: prefix, now, host, token, answer ('ok'|'fault'|'slow'|'local'|'unavailable'),
#       wait ('' or seconds: Retry-After, the next robots.txt attempt), retry job ('' or
#       JSON), count page ('1'|'0'), the origin of an unavailable robots.txt and why ('' or
#       'origin TAB why'), then (shard, member, host, job, budget, delay) per link
# -> {'done', next-allowed time, links queued, pages stored} | {'lost'}
COMPLETE = (
    _COMMON
    + """
local now = clock(ARGV[2])
local host = ARGV[3]
local lease = P..'lease:'..host
local held = redis.call('HMGET', lease, 'token', 'worker', 'reserved')
if held[1] ~= ARGV[4] then return {'lost'} end
local hk = P..'host:'..host
local nxt = after(hk, ARGV[5], tonumber(ARGV[6]), now)
redis.call('HINCRBY', hk, 'fetched', 1)
if ARGV[5] == 'unavailable' then  -- waiting for its robots.txt: since its first such answer
  redis.call('HSETNX', P..'deferred', host, fmt(now))
  if ARGV[9] ~= '' then redis.call('HSET', P..'deferred_origin', host, ARGV[9]) end
elseif ARGV[5] ~= 'local' then
  redis.call('HDEL', P..'deferred', host)
  redis.call('HDEL', P..'deferred_origin', host)
end
if ARGV[7] ~= '' then redis.call('RPUSH', P..'q:'..host, ARGV[7]) end
redis.call('DEL', lease)
redis.call('ZREM', P..'leases', host)
redis.call('SREM', P..'held:'..held[2], host)
local pages = 0
if ARGV[8] == '1' then
  pages = redis.call('INCR', P..'pages')
  if held[3] then redis.call('DECR', P..'reserved') end  -- the reservation became the page
elseif held[3] then
  unreserve()
end
local queued = admit(10, (#ARGV - 9) / 6)
schedule(host)
wake()
return {'done', fmt(nxt), queued, pages}
"""
)

# ARGV: prefix, now -> hosts made ready again
# A new run of the crawl asks the robots.txt files it deferred again, at once.
RETRY_DEFERRED = (
    _COMMON
    + """
local now = clock(ARGV[2])
local hosts = redis.call('HKEYS', P..'deferred')
for _, host in ipairs(hosts) do
  redis.call('HSET', P..'host:'..host, 'next', fmt(now))
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

# ARGV: prefix, now, host, Crawl-delay ('' = none) -> the host's delay
CRAWL_DELAY = (
    _COMMON
    + """
return fmt(with_crawl_delay(P..'host:'..ARGV[3], tonumber(ARGV[4])))
"""
)

# ARGV: prefix, now, then (shard, member, host, job, budget, delay) per URL -> URLs queued
ADD = (
    _COMMON
    + """
local queued = admit(3, (#ARGV - 2) / 6)
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

# ARGV: prefix, now, marker (the recrawl's start and the folder's id), then host, job pairs
# -> the number queued, or -1 when this folder's pages were queued for this recrawl already
REQUEUE = (
    _COMMON
    + """
if redis.call('SADD', P..'recrawled', ARGV[3]) == 0 then return -1 end
local queued = 0
for i = 4, #ARGV, 2 do
  redis.call('RPUSH', P..'q:'..ARGV[i], ARGV[i + 1])
  queued = queued + 1
  if redis.call('EXISTS', P..'lease:'..ARGV[i]) == 0 then schedule(ARGV[i]) end
end
wake()
return queued
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
