/**
 * The shared StateStore (SPEC §9): records, rate windows and day totals in Redis or Valkey, so every
 * replica enforces one set. ioredis rather than node-redis: `defineCommand` runs our Lua scripts by
 * EVALSHA with the EVAL fallback built in, `rediss://` gives TLS from the URL alone, and its
 * reconnect logic is mature. On the process's one connection (storage/redis-connection.ts), whose
 * commands fail fast while it is not ready; this store's fail after a second, and its outages are
 * reported once each (trackOutages), so recovery is automatic and told.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { StateUnavailableError } from '../errors.js'
import { trackOutages, type RedisConnection } from '../storage/redis-connection.js'
import { ABORT_LUA, CLAIM_LUA, FINISH_LUA, HIT_LUA, RELEASE_LUA, RELEASE_ONCE_LUA, RESERVE_LUA } from './redis-lua.js'
import { decodeRecord, encodeRecord } from './record-codec.js'
import type { ClaimOutcome, StateStore } from './state-store.js'
import { noStoreObserver, type StoreObserver } from './store-metrics.js'

/** A command not answered within this is a failure (SPEC §9: 503 within 2 s, never hanging). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000

export interface RedisStoreOptions {
  /** The process's connection; every key starts with its prefix. */
  redis: RedisConnection
  log: Logger
  observer?: StoreObserver
}

type Reply = string | number | null
interface Scripts {
  papClaim: (key: string, heldKey: string, owner: string, ttlMs: number) => Promise<Reply>
  papFinish: (key: string, owner: string, record: string, ttlMs: number) => Promise<number>
  papAbort: (key: string, owner: string) => Promise<number>
  papHit: (key: string, limit: number, windowMs: number, member: string) => Promise<[number, number]>
  papReserve: (key: string, amount: string, limit: string, ttlMs: number) => Promise<number>
  papRelease: (key: string, amount: string) => Promise<number>
  papReleaseOnce: (key: string, once: string, amount: string) => Promise<number>
}

export function createRedisStore (options: RedisStoreOptions): StateStore {
  const { log, redis } = options
  const observer = options.observer ?? noStoreObserver
  const client = redis.commands({ ms: REDIS_COMMAND_TIMEOUT_MS, judged: 'timer' }, {
    papClaim: { keys: 2, lua: CLAIM_LUA },
    papFinish: { keys: 1, lua: FINISH_LUA },
    papAbort: { keys: 1, lua: ABORT_LUA },
    papHit: { keys: 1, lua: HIT_LUA },
    papReserve: { keys: 1, lua: RESERVE_LUA },
    papRelease: { keys: 1, lua: RELEASE_LUA },
    papReleaseOnce: { keys: 2, lua: RELEASE_ONCE_LUA },
  })
  const scripts = client as unknown as Scripts
  const outages = trackOutages(redis, {
    log,
    unavailable: 'state store unavailable',
    recovered: 'state store recovered',
    up: (up) => { observer.up('redis', up) },
    probe: async () => await client.ping(),
  })

  async function run<T> (op: string, command: () => Promise<T>): Promise<T> {
    if (client.status !== 'ready' || outages.refusal()?.lasting === true) {
      observer.error(op)
      throw new StateUnavailableError()
    }
    const started = performance.now()
    try {
      const result = await command()
      observer.command(op, (performance.now() - started) / 1000)
      // A timeout marks an outage without closing the connection: the next answer ends it.
      if (outages.isDown()) outages.up()
      return result
    } catch (err) {
      observer.error(op)
      outages.down((err as NodeJS.ErrnoException).code ?? (err as Error).name)
      throw new StateUnavailableError()
    }
  }

  // Every key carries the prefix and a kind (SPEC §9).
  const P = redis.keyPrefix
  const idem = (key: string): string => `${P}i:${key}`
  const heldMark = (key: string): string => `${P}h:${key}`

  return {
    async claim (key, inFlightTtlMs): Promise<ClaimOutcome> {
      const owner = randomUUID()
      const found = await run('claim', () => scripts.papClaim(idem(key), heldMark(key), owner, inFlightTtlMs))
      if (found === null || typeof found === 'number') return { kind: 'claimed', owner, held: found === 1 }
      if (found.startsWith('r:')) {
        const record = decodeRecord(found.slice(2))
        if (record !== null) return { kind: 'recorded', record }
      }
      return { kind: 'in-flight' }
    },
    async finish (key, owner, record, ttlMs) {
      await run('finish', () => scripts.papFinish(idem(key), owner, encodeRecord(record), ttlMs))
    },
    async abort (key, owner) {
      await run('abort', () => scripts.papAbort(idem(key), owner))
    },
    async markHeld (key, ttlMs) {
      await run('mark_held', () => client.set(heldMark(key), '1', 'PX', ttlMs))
    },
    async hit (key, limit, windowMs) {
      const [admitted, retryAfterMs] = await run('hit', () => scripts.papHit(`${P}r:${key}`, limit, windowMs, randomUUID()))
      return { admitted: admitted === 1, retryAfterMs: admitted === 1 ? 0 : retryAfterMs }
    },
    async reserve (key, amount, limit, ttlMs) {
      if (amount > limit) return false
      const ok = await run('reserve', () => scripts.papReserve(`${P}d:${key}`, amount.toString(), limit.toString(), ttlMs))
      return ok === 1
    },
    async release (key, amount, once) {
      if (once === undefined) await run('release', () => scripts.papRelease(`${P}d:${key}`, amount.toString()))
      else await run('release', () => scripts.papReleaseOnce(`${P}d:${key}`, `${P}g:${once}`, amount.toString()))
    },
    async total (key) {
      const total = await run('total', () => client.get(`${P}d:${key}`))
      return total === null ? 0n : BigInt(total)
    },
    status: () => {
      const ready = client.status === 'ready' && !outages.isDown()
      const refusal = outages.refusal()
      return refusal === null ? { kind: 'redis', ready } : { kind: 'redis', ready, refusal: refusal.sentence }
    },
    async ping () {
      await run('ping', () => client.ping())
    },
    // The connection is the process's: closed by its owner once every store is.
    async close () { outages.stop() },
  }
}
