/**
 * The MatchStore in Redis (SPEC §9, §16), for replicas: one sorted set per match key
 * (`<prefix>dup:<match>`, scored by when each payout was planned), and a claim is one Lua script
 * that prunes what is past the window, reads what is left and adds the new entry, so of two
 * replicas planning the same payout at once one is first and the other finds it. The set expires
 * with its newest entry. Commands fail fast while Redis is down (no offline queue): the check then
 * answers 503 instead of letting a payout through unchecked.
 */
import type { Logger } from 'pino'
import { reportErrors, type RedisConnection } from '../storage/redis-connection.js'
import { CLAIM_ANSWER_LIMIT, type MatchEntry, type MatchStore } from './match-store.js'

const COMMAND_TIMEOUT_MS = 2000
const CONNECT_WAIT_MS = 5000

/** KEYS[1] the set; ARGV: the entry as its member, when it was planned, the window's start, the set's TTL ms. */
const CLAIM_LUA = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[3], 'LIMIT', 0, ${CLAIM_ANSWER_LIMIT})
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return found
`

type Claim = (key: string, member: string, atMs: number, sinceMs: number, ttlMs: number) => Promise<string[]>

/** An entry as its set's member: what `remove` names it by. */
function member (entry: MatchEntry): string {
  return JSON.stringify([entry.id, entry.atMs, entry.reference])
}

function entryOf (text: string): MatchEntry | null {
  try {
    const [id, atMs, reference] = JSON.parse(text) as unknown[]
    return typeof id === 'string' && typeof atMs === 'number' && typeof reference === 'string' ? { id, atMs, reference } : null
  } catch {
    return null
  }
}

export async function createRedisMatchStore (options: { redis: RedisConnection, log: Logger }): Promise<MatchStore> {
  const { redis } = options
  const P = `${redis.keyPrefix}dup:`
  const client = redis.commands({ ms: COMMAND_TIMEOUT_MS, judged: 'timer' }, { dupClaim: { keys: 1, lua: CLAIM_LUA } })
  const scripts = client as unknown as { dupClaim: Claim }
  const unwatch = reportErrors(redis, options.log, 'payout match store (Redis) unavailable')
  await redis.untilReady(CONNECT_WAIT_MS)
  return {
    async claim (match, entry, sinceMs, ttlMs) {
      const found = await scripts.dupClaim(`${P}${match}`, member(entry), entry.atMs, sinceMs, ttlMs)
      // A member written by hand that does not read as an entry names no payout.
      return found.map(entryOf).filter((e): e is MatchEntry => e !== null)
    },
    async remove (match, entry) {
      await client.zrem(`${P}${match}`, member(entry))
    },
    async close () {
      unwatch()
    },
  }
}
