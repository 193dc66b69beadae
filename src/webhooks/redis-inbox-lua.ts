/**
 * The Redis inbox's atomic steps as Lua scripts (each runs alone on the server, which is what makes a
 * claim exclusive across replicas). ARGV[1] is the key prefix: keys are built inside the scripts.
 * Keys: `wh:ev:<id>` (hash: the event), `wh:att:<id>` (list of attempts), `wh:key:<key>` (dedupe),
 * `wh:order:<order key>` (pending ids in the order received), sorted sets `wh:due` (claimable, by
 * next attempt), `wh:leases` (in flight, by lease end), `wh:all`, `wh:pending`, `wh:settled`,
 * `wh:failed` (by receipt time), `wh:byseq` (by sequence number, `wh:seq` the counter), and the
 * bound's counters `wh:count`, `wh:bytes`.
 */

/** A head of an order key becomes claimable unless it is in flight. */
const MAKE_DUE = `
local function make_due(P, id)
  if not redis.call('ZSCORE', P .. 'wh:leases', id) then
    redis.call('ZADD', P .. 'wh:due', redis.call('HGET', P .. 'wh:ev:' .. id, 'next'), id)
  end
end
`

/** ARGV: P, key, sha, order, body, headers, source, at, id, retentionMs, maxEvents, maxBytes. */
export const INTAKE_LUA = `
local P = ARGV[1]
local dk = P .. 'wh:key:' .. ARGV[2]
local sha = ARGV[3]
local at = tonumber(ARGV[8])
local since = at - tonumber(ARGV[10])
local known = redis.call('HMGET', dk, 's:' .. sha, 'a:' .. sha, 'first', 'firstAt')
if known[1] and tonumber(known[2]) >= since then return {'duplicate', known[1]} end
local conflict = ''
if known[3] and tonumber(known[4]) >= since then conflict = known[3] end
local len = string.len(ARGV[5])
if tonumber(redis.call('GET', P .. 'wh:count') or '0') + 1 > tonumber(ARGV[11]) or tonumber(redis.call('GET', P .. 'wh:bytes') or '0') + len > tonumber(ARGV[12]) then
  return {'full'}
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
  if redis.call('RPUSH', ok, id) == 1 then redis.call('ZADD', P .. 'wh:due', at, id) end
end
if conflict ~= '' then return {'conflict', id, conflict} end
return {'stored', id}
`

/** ARGV: P, now, limit, lease end, owner. Takes over expired leases first; returns the ids claimed. */
export const CLAIM_LUA = `
local P = ARGV[1]
local now = tonumber(ARGV[2])
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'wh:leases', '-inf', now)) do
  redis.call('ZREM', P .. 'wh:leases', id)
  redis.call('HSET', P .. 'wh:ev:' .. id, 'owner', '')
  redis.call('ZADD', P .. 'wh:due', redis.call('HGET', P .. 'wh:ev:' .. id, 'next'), id)
end
local ids = redis.call('ZRANGEBYSCORE', P .. 'wh:due', '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call('ZREM', P .. 'wh:due', id)
  redis.call('ZADD', P .. 'wh:leases', ARGV[4], id)
  redis.call('HSET', P .. 'wh:ev:' .. id, 'owner', ARGV[5])
end
return ids
`

/** ARGV: P, id, owner, attempt JSON, status, next. Only the lease's owner settles. */
export const SETTLE_LUA = MAKE_DUE + `
local P = ARGV[1]
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
if ARGV[5] == 'failed' then redis.call('ZADD', P .. 'wh:failed', at, id) end
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
export const REPLAY_LUA = `
local P = ARGV[1]
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
  if list[1] then redis.call('ZREM', P .. 'wh:due', list[1]) end
  redis.call('ZADD', P .. 'wh:due', ARGV[3], id)
end
return 1
`

/** ARGV: P, before, limit. Removes up to `limit` delivered or failed events received before; returns how many. */
export const REMOVE_LUA = `
local P = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', P .. 'wh:settled', '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local ek = P .. 'wh:ev:' .. id
  redis.call('DECRBY', P .. 'wh:bytes', redis.call('HSTRLEN', ek, 'body'))
  redis.call('DECR', P .. 'wh:count')
  redis.call('DEL', ek, P .. 'wh:att:' .. id)
  redis.call('ZREM', P .. 'wh:settled', id)
  redis.call('ZREM', P .. 'wh:failed', id)
  redis.call('ZREM', P .. 'wh:all', id)
  redis.call('ZREM', P .. 'wh:byseq', id)
end
return #ids
`
