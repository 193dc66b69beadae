/**
 * The Redis payment store's atomic steps (each script runs alone on the server: what makes a
 * version check and a lease exclusive across replicas). ARGV[1] is the key prefix `P` (already
 * ending in `pay:`); keys are built inside. `r:<id>` is a hash: `json` (the record), `v` (version),
 * `state`, `seq`, `due` ('' for none), `owner` (the lease's), `caller`, `key`, `ref`, `tx`, `n`
 * (notifications not yet stored). Indexes: `key:<§8 key>` -> id; sorted sets by `seq` (`all`,
 * `st:<state>`, `c:<caller>`, `ref:<sha>`), `tx:<sha>` -> the latest id, `due` (by due time),
 * `leases` (by lease end), `settled` (by settlement time); `seq` counts, `cursor` is the events'.
 */

/** Puts an id in `due`, unless someone holds its lease (the lease's end puts it back). */
const SET_DUE = `
local function set_due(P, id, due)
  if redis.call('ZSCORE', P .. 'leases', id) then return end
  if due == '' then redis.call('ZREM', P .. 'due', id) else redis.call('ZADD', P .. 'due', due, id) end
end
`

/** ARGV: P, id, key, json, state, caller, refSha, txSha, due, settledAt. {'created'} or {'exists', id}. */
export const CREATE_LUA = SET_DUE + `
local P = ARGV[1]
local existing = redis.call('GET', P .. 'key:' .. ARGV[3])
if existing then return {'exists', existing} end
local id = ARGV[2]
local seq = redis.call('INCR', P .. 'seq')
redis.call('HSET', P .. 'r:' .. id, 'json', ARGV[4], 'v', 1, 'state', ARGV[5], 'seq', seq, 'due', ARGV[9], 'owner', '', 'caller', ARGV[6], 'key', ARGV[3], 'ref', ARGV[7], 'tx', ARGV[8], 'n', 0)
redis.call('SET', P .. 'key:' .. ARGV[3], id)
redis.call('ZADD', P .. 'all', seq, id)
redis.call('ZADD', P .. 'st:' .. ARGV[5], seq, id)
redis.call('ZADD', P .. 'c:' .. ARGV[6], seq, id)
redis.call('ZADD', P .. 'ref:' .. ARGV[7], seq, id)
if ARGV[8] ~= '' then redis.call('SET', P .. 'tx:' .. ARGV[8], id) end
set_due(P, id, ARGV[9])
return {'created'}
`

/** ARGV: P, id, version read, json, state, txSha, due, settledAt, notify count, owner. The new version, or 0. */
export const UPDATE_LUA = SET_DUE + `
local P = ARGV[1]
local id = ARGV[2]
local k = P .. 'r:' .. id
local h = redis.call('HMGET', k, 'v', 'state', 'seq', 'owner')
if not h[1] or h[1] ~= ARGV[3] then return 0 end
local v = tonumber(h[1]) + 1
if h[2] ~= ARGV[5] then
  redis.call('ZREM', P .. 'st:' .. h[2], id)
  redis.call('ZADD', P .. 'st:' .. ARGV[5], h[3], id)
end
if ARGV[6] ~= '' then
  local current = redis.call('GET', P .. 'tx:' .. ARGV[6])
  if not current or tonumber(redis.call('HGET', P .. 'r:' .. current, 'seq') or '0') <= tonumber(h[3]) then redis.call('SET', P .. 'tx:' .. ARGV[6], id) end
end
if ARGV[8] ~= '' then redis.call('ZADD', P .. 'settled', ARGV[8], id) end
redis.call('HSET', k, 'json', ARGV[4], 'v', v, 'state', ARGV[5], 'due', ARGV[7], 'tx', ARGV[6], 'n', ARGV[9])
if h[4] == ARGV[10] and h[4] ~= '' then
  redis.call('ZREM', P .. 'leases', id)
  redis.call('HSET', k, 'owner', '')
end
set_due(P, id, ARGV[7])
return v
`

/** Removes a record and its place in every index. */
const DROP = `
local function drop(P, id, h)
  redis.call('DEL', P .. 'r:' .. id)
  if redis.call('GET', P .. 'key:' .. h[4]) == id then redis.call('DEL', P .. 'key:' .. h[4]) end
  if h[6] ~= '' and redis.call('GET', P .. 'tx:' .. h[6]) == id then redis.call('DEL', P .. 'tx:' .. h[6]) end
  redis.call('ZREM', P .. 'all', id)
  redis.call('ZREM', P .. 'st:' .. h[2], id)
  redis.call('ZREM', P .. 'c:' .. h[3], id)
  redis.call('ZREM', P .. 'ref:' .. h[5], id)
  redis.call('ZREM', P .. 'due', id)
  redis.call('ZREM', P .. 'leases', id)
  redis.call('ZREM', P .. 'settled', id)
end
`
const FIELDS = "'v', 'state', 'caller', 'key', 'ref', 'tx', 'n'"

/** ARGV: P, id, version read. 1 when removed. */
export const REMOVE_LUA = DROP + `
local h = redis.call('HMGET', ARGV[1] .. 'r:' .. ARGV[2], ${FIELDS})
if not h[1] or h[1] ~= ARGV[3] then return 0 end
drop(ARGV[1], ARGV[2], h)
return 1
`

/** ARGV: P, id. Removes a final record whose notifications are stored; 1 when removed. */
export const REMOVE_SETTLED_LUA = DROP + `
local h = redis.call('HMGET', ARGV[1] .. 'r:' .. ARGV[2], ${FIELDS})
if not h[1] then
  redis.call('ZREM', ARGV[1] .. 'settled', ARGV[2])
  return 0
end
if (h[2] ~= 'succeeded' and h[2] ~= 'failed') or h[7] ~= '0' then return 0 end
drop(ARGV[1], ARGV[2], h)
return 1
`

/** ARGV: P, now, limit, lease end, owner. Takes expired leases back first; returns the ids leased. */
export const CLAIM_LUA = SET_DUE + `
local P = ARGV[1]
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'leases', '-inf', ARGV[2])) do
  redis.call('ZREM', P .. 'leases', id)
  redis.call('HSET', P .. 'r:' .. id, 'owner', '')
  set_due(P, id, redis.call('HGET', P .. 'r:' .. id, 'due') or '')
end
local ids = redis.call('ZRANGEBYSCORE', P .. 'due', '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  redis.call('ZREM', P .. 'due', id)
  redis.call('ZADD', P .. 'leases', ARGV[4], id)
  redis.call('HSET', P .. 'r:' .. id, 'owner', ARGV[5])
end
return ids
`

/** ARGV: P, id, owner. Only the lease's owner ends it. */
export const RELEASE_LUA = SET_DUE + `
local P = ARGV[1]
local k = P .. 'r:' .. ARGV[2]
if redis.call('HGET', k, 'owner') ~= ARGV[3] then return 0 end
redis.call('ZREM', P .. 'leases', ARGV[2])
redis.call('HSET', k, 'owner', '')
set_due(P, ARGV[2], redis.call('HGET', k, 'due') or '')
return 1
`

/** ARGV: P, seq. The cursor moves forward only. */
export const CURSOR_LUA = `
local current = redis.call('GET', ARGV[1] .. 'cursor')
if not current or tonumber(ARGV[2]) > tonumber(current) then redis.call('SET', ARGV[1] .. 'cursor', ARGV[2]) end
return 1
`
