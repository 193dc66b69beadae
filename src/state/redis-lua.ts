/**
 * The Redis store's atomic operations as Lua scripts: each runs alone on the server, which is what
 * makes a claim, a rate window or a day-total reservation atomic across replicas.
 * Lua numbers are doubles, so money is never a Lua number: totals are compared as decimal strings.
 */

/**
 * KEYS[1] key, KEYS[2] its held mark; ARGV owner, in-flight TTL ms. Returns the current value, or,
 * when this call claimed it, 1 if the key is marked held and nil if not.
 */
export const CLAIM_LUA = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], 'm:' .. ARGV[1], 'NX', 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
return false
`

/** KEYS[1] key; ARGV owner, record, TTL ms. Replaces this owner's mark only. */
export const FINISH_LUA = `
if redis.call('GET', KEYS[1]) == 'm:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'r:' .. ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
`

/** KEYS[1] key; ARGV owner. Drops this owner's mark only. */
export const ABORT_LUA = `
if redis.call('GET', KEYS[1]) == 'm:' .. ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`

/**
 * KEYS[1] sorted set; ARGV limit, window ms, unique member. Server time (TIME) in microseconds,
 * so replicas with skewed clocks share one window. Returns {admitted, retryAfterMs}.
 */
export const HIT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2]) * 1000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, 0}
end
local edge = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
local wait = math.ceil((tonumber(edge[2]) + window - now) / 1000)
if wait < 1 then wait = 1 end
return {0, wait}
`

/**
 * KEYS[1] total; ARGV amount, limit, TTL ms (integer minor units as decimal strings). INCRBY, then
 * the new total (read back as a string) compared with the limit as strings; over it, rolled back.
 */
export const RESERVE_LUA = `
local ok = redis.pcall('INCRBY', KEYS[1], ARGV[1])
if type(ok) == 'table' and ok.err then return 0 end
local total = redis.call('GET', KEYS[1])
local limit = ARGV[2]
local over = (#total > #limit) or (#total == #limit and total > limit)
if over then
  redis.call('DECRBY', KEYS[1], ARGV[1])
  return 0
end
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`

/** KEYS[1] total; ARGV amount. Gives back a reservation, never below zero, keeping the TTL. */
export const RELEASE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
if left < 0 then redis.call('SET', KEYS[1], '0', 'KEEPTTL') end
return 1
`

/**
 * KEYS[1] total, KEYS[2] its giving-back's name; ARGV amount. RELEASE_LUA, once per name: the name
 * is kept as long as the total (and a minute more), so no replica gives the same amount back twice.
 */
export const RELEASE_ONCE_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = 172800000 end
if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ttl + 60000) then return 0 end
local left = redis.call('DECRBY', KEYS[1], ARGV[1])
if left < 0 then redis.call('SET', KEYS[1], '0', 'KEEPTTL') end
return 1
`
