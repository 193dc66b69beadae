/**
 * The Redis outbox store's atomic steps as Lua scripts (each runs alone on the server, which is what
 * makes a claim exclusive across replicas). ARGV[1] is the key prefix: keys are built inside the
 * scripts, all under `wh:` (the inbox's first layout; notification outboxes have a prefix of their own).
 * Keys: `wh:ev:<id>` (hash: the event), `wh:att:<id>` (list of attempts), `wh:key:<key>` (dedupe),
 * `wh:order:<order key>` (pending ids in the order received), sorted sets `wh:due` (claimable, by
 * next attempt), `wh:leases` (in flight, by lease end), `wh:all`, `wh:pending`, `wh:settled`,
 * `wh:failed`, `wh:delivered` (by receipt time), `wh:byseq` (by sequence number, `wh:seq` the
 * counter: what payments read after a cursor of their own), `wh:waiting` (later events of an order key, not its
 * head, by receipt time: released into `wh:due` once they have waited long enough, order-wait.ts),
 * the bounds' counters `wh:count`, `wh:bytes` (every event) and `wh:dbytes` (delivered ones), and
 * `wh:schema`, the version of this layout.
 */

/**
 * A store written before `wh:delivered`, `wh:dbytes` and `wh:waiting` existed gets them at the first
 * script that needs them (and at every connection): the delivered events are the settled ones that
 * did not fail; the waiting ones, the pending events that are not the head of their order key.
 */
const ENSURE_SCHEMA = `
local function ensure_schema(P)
  if redis.call('GET', P .. 'wh:schema') == '2' then return end
  local dbytes = 0
  local settled = redis.call('ZRANGE', P .. 'wh:settled', 0, -1, 'WITHSCORES')
  for i = 1, #settled, 2 do
    local id = settled[i]
    if not redis.call('ZSCORE', P .. 'wh:failed', id) then
      redis.call('ZADD', P .. 'wh:delivered', settled[i + 1], id)
      dbytes = dbytes + redis.call('HSTRLEN', P .. 'wh:ev:' .. id, 'body')
    end
  end
  redis.call('SET', P .. 'wh:dbytes', dbytes)
  local pending = redis.call('ZRANGE', P .. 'wh:pending', 0, -1, 'WITHSCORES')
  for i = 1, #pending, 2 do
    local id = pending[i]
    local order = redis.call('HGET', P .. 'wh:ev:' .. id, 'order')
    if order and order ~= '' and redis.call('LINDEX', P .. 'wh:order:' .. order, 0) ~= id then
      redis.call('ZADD', P .. 'wh:waiting', pending[i + 1], id)
    end
  end
  redis.call('SET', P .. 'wh:schema', '2')
end
`

/** ARGV: P. */
export const SCHEMA_LUA = ENSURE_SCHEMA + `
ensure_schema(ARGV[1])
return 1
`

/**
 * Removes a delivered event to make room (SPEC §10) and returns its body's size; its key leaves the
 * duplicate window with it. The caller moves the counters.
 */
const EVICT = `
local function evict(P, id)
  local ek = P .. 'wh:ev:' .. id
  local f = redis.call('HMGET', ek, 'key', 'sha')
  local size = redis.call('HSTRLEN', ek, 'body')
  redis.call('DEL', ek, P .. 'wh:att:' .. id)
  redis.call('ZREM', P .. 'wh:delivered', id)
  redis.call('ZREM', P .. 'wh:settled', id)
  redis.call('ZREM', P .. 'wh:all', id)
  redis.call('ZREM', P .. 'wh:byseq', id)
  if f[1] then
    local dk = P .. 'wh:key:' .. f[1]
    if redis.call('HGET', dk, 's:' .. f[2]) == id then redis.call('HDEL', dk, 's:' .. f[2], 'a:' .. f[2]) end
    if redis.call('HGET', dk, 'first') == id then redis.call('HDEL', dk, 'first', 'firstAt') end
  end
  return size
end
`

/** A head of an order key waits behind nothing, and becomes claimable unless it is in flight. */
const MAKE_DUE = `
local function make_due(P, id)
  redis.call('ZREM', P .. 'wh:waiting', id)
  if not redis.call('ZSCORE', P .. 'wh:leases', id) then
    redis.call('ZADD', P .. 'wh:due', redis.call('HGET', P .. 'wh:ev:' .. id, 'next'), id)
  end
end
`

/**
 * ARGV: P, key, sha, order, body, headers, source, at, id, retentionMs, maxEvents, maxBytes,
 * headroomEvents, headroomBytes. Makes room as store-room.ts decides: only pending and failed events
 * count against the bounds; delivered ones are evicted, oldest first, up to the headroom beyond need.
 * Returns {'duplicate', id}, {'full'}, or {'stored'|'conflict', id, conflictWith, evicted}.
 */
export const INTAKE_LUA = ENSURE_SCHEMA + EVICT + `
local P = ARGV[1]
ensure_schema(P)
local dk = P .. 'wh:key:' .. ARGV[2]
local sha = ARGV[3]
local at = tonumber(ARGV[8])
local since = at - tonumber(ARGV[10])
local known = redis.call('HMGET', dk, 's:' .. sha, 'a:' .. sha, 'first', 'firstAt')
if known[1] and tonumber(known[2]) >= since then return {'duplicate', known[1]} end
local conflict = ''
if known[3] and tonumber(known[4]) >= since then conflict = known[3] end
local len = string.len(ARGV[5])
local maxEvents, maxBytes = tonumber(ARGV[11]), tonumber(ARGV[12])
local count = tonumber(redis.call('GET', P .. 'wh:count') or '0')
local bytes = tonumber(redis.call('GET', P .. 'wh:bytes') or '0')
local evicted = 0
if count + 1 > maxEvents or bytes + len > maxBytes then
  local held = redis.call('ZCARD', P .. 'wh:pending') + redis.call('ZCARD', P .. 'wh:failed')
  local dbytes = tonumber(redis.call('GET', P .. 'wh:dbytes') or '0')
  if held + 1 > maxEvents or bytes - dbytes + len > maxBytes then return {'full'} end
  local targetEvents = count + 1 - (maxEvents - tonumber(ARGV[13]))
  local targetBytes = bytes + len - (maxBytes - tonumber(ARGV[14]))
  local freed = 0
  while evicted < targetEvents or freed < targetBytes do
    local oldest = redis.call('ZRANGE', P .. 'wh:delivered', 0, 63)
    if #oldest == 0 then break end
    for _, old in ipairs(oldest) do
      if evicted >= targetEvents and freed >= targetBytes then break end
      freed = freed + evict(P, old)
      evicted = evicted + 1
    end
  end
  count = count - evicted
  bytes = bytes - freed
  redis.call('SET', P .. 'wh:count', count)
  redis.call('SET', P .. 'wh:bytes', bytes)
  redis.call('DECRBY', P .. 'wh:dbytes', freed)
  -- Only when the counters were out of step with the events (a replica of an earlier version):
  -- what was evicted was delivered, and the event is refused like any other that does not fit.
  if count + 1 > maxEvents or bytes + len > maxBytes then return {'full'} end
end
local id = ARGV[9]
local seq = redis.call('INCR', P .. 'wh:seq')
redis.call('HSET', P .. 'wh:ev:' .. id, 'key', ARGV[2], 'sha', sha, 'order', ARGV[4], 'body', ARGV[5], 'headers', ARGV[6], 'source', ARGV[7],
  'at', ARGV[8], 'status', 'pending', 'attempts', 0, 'next', ARGV[8], 'conflict', conflict, 'seq', seq, 'owner', '')
redis.call('ZADD', P .. 'wh:byseq', seq, id)
if conflict == '' then redis.call('HSET', dk, 'first', id, 'firstAt', ARGV[8]) end
redis.call('HSET', dk, 's:' .. sha, id, 'a:' .. sha, ARGV[8])
redis.call('PEXPIRE', dk, tonumber(ARGV[10]) + 3600000)
redis.call('INCR', P .. 'wh:count')
redis.call('INCRBY', P .. 'wh:bytes', len)
redis.call('ZADD', P .. 'wh:all', at, id)
redis.call('ZADD', P .. 'wh:pending', at, id)
if ARGV[4] == '' then
  redis.call('ZADD', P .. 'wh:due', at, id)
else
  local ok = P .. 'wh:order:' .. ARGV[4]
  if redis.call('RPUSH', ok, id) == 1 then
    redis.call('ZADD', P .. 'wh:due', at, id)
  else
    redis.call('ZADD', P .. 'wh:waiting', at, id)
  end
end
return {conflict == '' and 'stored' or 'conflict', id, conflict, evicted}
`

/**
 * ARGV: P, now, limit, lease end, owner, order wait. Takes over expired leases first, and releases
 * the later events of an order key that have waited the order wait into the claimable ones, at
 * max(next attempt, receipt + wait) (order-wait.ts). Returns id, behind, id, behind…: `behind` is the
 * head an event goes ahead of, '' when it goes in order.
 */
export const CLAIM_LUA = ENSURE_SCHEMA + `
local P = ARGV[1]
ensure_schema(P)
local now = tonumber(ARGV[2])
local wait = tonumber(ARGV[6])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'wh:leases', '-inf', now)) do
  redis.call('ZREM', P .. 'wh:leases', id)
  redis.call('HSET', P .. 'wh:ev:' .. id, 'owner', '')
  redis.call('ZADD', P .. 'wh:due', redis.call('HGET', P .. 'wh:ev:' .. id, 'next'), id)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'wh:waiting', '-inf', now - wait, 'LIMIT', 0, tonumber(ARGV[3]))) do
  local f = redis.call('HMGET', P .. 'wh:ev:' .. id, 'next', 'at')
  redis.call('ZREM', P .. 'wh:waiting', id)
  redis.call('ZADD', P .. 'wh:due', math.max(tonumber(f[1]), tonumber(f[2]) + wait), id)
end
local ids = redis.call('ZRANGEBYSCORE', P .. 'wh:due', '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local claimed = {}
for _, id in ipairs(ids) do
  local ek = P .. 'wh:ev:' .. id
  redis.call('ZREM', P .. 'wh:due', id)
  redis.call('ZADD', P .. 'wh:leases', ARGV[4], id)
  redis.call('HSET', ek, 'owner', ARGV[5])
  local order = redis.call('HGET', ek, 'order')
  local head = order ~= '' and redis.call('LINDEX', P .. 'wh:order:' .. order, 0) or id
  claimed[#claimed + 1] = id
  claimed[#claimed + 1] = head ~= id and head or ''
end
return claimed
`

/** ARGV: P, id, owner, attempt JSON, status, next. Only the lease's owner settles. */
export const SETTLE_LUA = ENSURE_SCHEMA + MAKE_DUE + `
local P = ARGV[1]
ensure_schema(P)
local id = ARGV[2]
local ek = P .. 'wh:ev:' .. id
if redis.call('HGET', ek, 'owner') ~= ARGV[3] then return 0 end
redis.call('ZREM', P .. 'wh:leases', id)
redis.call('RPUSH', P .. 'wh:att:' .. id, ARGV[4])
redis.call('HINCRBY', ek, 'attempts', 1)
redis.call('HSET', ek, 'status', ARGV[5], 'owner', '')
if ARGV[5] == 'pending' then
  redis.call('HSET', ek, 'next', ARGV[6])
  redis.call('ZADD', P .. 'wh:due', ARGV[6], id)
  return 1
end
local at = redis.call('HGET', ek, 'at')
redis.call('ZREM', P .. 'wh:pending', id)
redis.call('ZADD', P .. 'wh:settled', at, id)
if ARGV[5] == 'failed' then
  redis.call('ZADD', P .. 'wh:failed', at, id)
else
  redis.call('ZADD', P .. 'wh:delivered', at, id)
  redis.call('INCRBY', P .. 'wh:dbytes', redis.call('HSTRLEN', ek, 'body'))
end
local order = redis.call('HGET', ek, 'order')
if order ~= '' then
  local ok = P .. 'wh:order:' .. order
  redis.call('LREM', ok, 1, id)
  local head = redis.call('LINDEX', ok, 0)
  if head then make_due(P, head) end
end
return 1
`

/** ARGV: P, id, owner. An abandoned attempt: claimable again, not counted. */
export const RELEASE_LUA = `
local P = ARGV[1]
local ek = P .. 'wh:ev:' .. ARGV[2]
if redis.call('HGET', ek, 'owner') ~= ARGV[3] then return 0 end
redis.call('ZREM', P .. 'wh:leases', ARGV[2])
redis.call('HSET', ek, 'owner', '')
redis.call('ZADD', P .. 'wh:due', redis.call('HGET', ek, 'next'), ARGV[2])
return 1
`

/**
 * ARGV: P, id, now. Back to pending with attempts 0 and the same id, in its place of its order key
 * (by receipt): before a later head that is not in flight, else right after it.
 */
export const REPLAY_LUA = ENSURE_SCHEMA + `
local P = ARGV[1]
ensure_schema(P)
local id = ARGV[2]
local ek = P .. 'wh:ev:' .. id
if redis.call('EXISTS', ek) == 0 then return 0 end
local status = redis.call('HGET', ek, 'status')
redis.call('HSET', ek, 'status', 'pending', 'attempts', 0, 'next', ARGV[3])
if status == 'pending' then
  if redis.call('ZSCORE', P .. 'wh:due', id) then redis.call('ZADD', P .. 'wh:due', ARGV[3], id) end
  return 1
end
local at = redis.call('HGET', ek, 'at')
redis.call('ZREM', P .. 'wh:settled', id)
redis.call('ZREM', P .. 'wh:failed', id)
if redis.call('ZREM', P .. 'wh:delivered', id) == 1 then redis.call('DECRBY', P .. 'wh:dbytes', redis.call('HSTRLEN', ek, 'body')) end
redis.call('ZADD', P .. 'wh:pending', at, id)
local order = redis.call('HGET', ek, 'order')
if order == '' then
  redis.call('ZADD', P .. 'wh:due', ARGV[3], id)
  return 1
end
local ok = P .. 'wh:order:' .. order
local seq = tonumber(redis.call('HGET', ek, 'seq'))
local list = redis.call('LRANGE', ok, 0, -1)
local before = nil
for i, other in ipairs(list) do
  if tonumber(redis.call('HGET', P .. 'wh:ev:' .. other, 'seq')) > seq then before = i; break end
end
if before == nil then
  redis.call('RPUSH', ok, id)
elseif before == 1 and redis.call('ZSCORE', P .. 'wh:leases', list[1]) then
  redis.call('LINSERT', ok, 'AFTER', list[1], id)
else
  redis.call('LINSERT', ok, 'BEFORE', list[before], id)
end
if redis.call('LINDEX', ok, 0) == id then
  -- The head it goes before now waits behind it (and is released again if it has waited long enough).
  if list[1] then
    redis.call('ZREM', P .. 'wh:due', list[1])
    redis.call('ZADD', P .. 'wh:waiting', redis.call('HGET', P .. 'wh:ev:' .. list[1], 'at'), list[1])
  end
  redis.call('ZADD', P .. 'wh:due', ARGV[3], id)
else
  redis.call('ZADD', P .. 'wh:waiting', at, id)
end
return 1
`

/** ARGV: P, before, limit. Removes up to `limit` delivered or failed events received before; returns how many. */
export const REMOVE_LUA = ENSURE_SCHEMA + `
local P = ARGV[1]
ensure_schema(P)
local ids = redis.call('ZRANGEBYSCORE', P .. 'wh:settled', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local ek = P .. 'wh:ev:' .. id
  local size = redis.call('HSTRLEN', ek, 'body')
  redis.call('DECRBY', P .. 'wh:bytes', size)
  redis.call('DECR', P .. 'wh:count')
  if redis.call('ZREM', P .. 'wh:delivered', id) == 1 then redis.call('DECRBY', P .. 'wh:dbytes', size) end
  redis.call('DEL', ek, P .. 'wh:att:' .. id)
  redis.call('ZREM', P .. 'wh:settled', id)
  redis.call('ZREM', P .. 'wh:failed', id)
  redis.call('ZREM', P .. 'wh:all', id)
  redis.call('ZREM', P .. 'wh:byseq', id)
end
return #ids
`
