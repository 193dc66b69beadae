/**
 * The SigninStore in Redis (PROXY_REDIS_URL), so that every replica takes a link once and knows
 * every session: a link is a hash that expires USED_LINK_KEPT_MS after the link does, taken by one
 * script (of two replicas, one signs in); a session is a key that expires with it.
 */
import type { Logger } from 'pino'
import { reportErrors, type RedisConnection } from '../storage/redis-connection.js'
import { USED_LINK_KEPT_MS, type ConsoleSession, type LinkOutcome, type SigninStore } from './signin-store.js'

const COMMAND_TIMEOUT_MS = 2000
const CONNECT_WAIT_MS = 5000

/** KEYS: the link. ARGV: now. { outcome, email }; an expired link is marked used as well. */
const USE_LINK_LUA = `
local h = redis.call('HMGET', KEYS[1], 'email', 'expiresAt', 'used')
if not h[1] then return { 'unknown', '' } end
if h[3] == '1' then return { 'used', h[1] } end
redis.call('HSET', KEYS[1], 'used', '1')
if tonumber(h[2]) <= tonumber(ARGV[1]) then return { 'expired', h[1] } end
return { 'signed-in', h[1] }
`

export interface RedisSigninOptions {
  /** The process's connection; the keys are under its prefix and `console:`. */
  redis: RedisConnection
  log: Logger
}

export async function createRedisSigninStore (options: RedisSigninOptions): Promise<SigninStore> {
  const { redis } = options
  const P = `${redis.keyPrefix}console:`
  const client = redis.commands({ ms: COMMAND_TIMEOUT_MS, judged: 'timer' })
  const unwatch = reportErrors(redis, options.log, 'console sign-in store (Redis) unavailable')
  await redis.untilReady(CONNECT_WAIT_MS)

  return {
    async addLink (hash, email, expiresAtMs) {
      const key = `${P}link:${hash}`
      await client.multi().hset(key, { email, expiresAt: expiresAtMs, used: '0' }).pexpireat(key, expiresAtMs + USED_LINK_KEPT_MS).exec()
    },
    async useLink (hash, nowMs): Promise<LinkOutcome> {
      const [kind, email] = await client.eval(USE_LINK_LUA, 1, `${P}link:${hash}`, nowMs) as [string, string]
      if (kind === 'unknown') return { kind }
      return { kind: kind as 'signed-in' | 'used' | 'expired', email }
    },
    async addSession (hash, session: ConsoleSession) {
      await client.set(`${P}session:${hash}`, JSON.stringify(session), 'PXAT', session.expiresAtMs)
    },
    async session (hash, nowMs) {
      const text = await client.get(`${P}session:${hash}`)
      if (text === null) return null
      const session = JSON.parse(text) as ConsoleSession
      return session.expiresAtMs <= nowMs ? null : session
    },
    async endSession (hash) { await client.del(`${P}session:${hash}`) },
    // The connection is the process's: closed by its owner once every store is.
    async close () { unwatch() },
  }
}
