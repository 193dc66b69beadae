/**
 * The shared StateStore (SPEC §9): records, rate windows and day totals in Redis or Valkey, so every
 * replica enforces one set. ioredis rather than node-redis: `defineCommand` runs our Lua scripts by
 * EVALSHA with the EVAL fallback built in, `rediss://` gives TLS from the URL alone, and its
 * reconnect logic is mature. Its defaults queue commands while Redis is down and retry each 20
 * times, so a request would hang instead of getting 503: here every command fails fast when the
 * client is not ready, and reconnects are at most a second apart, so recovery is automatic.
 */
import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { StateUnavailableError } from '../errors.js'
import { ABORT_LUA, CLAIM_LUA, FINISH_LUA, HIT_LUA, RELEASE_LUA, RELEASE_ONCE_LUA, RESERVE_LUA } from './redis-lua.js'
import { decodeRecord, encodeRecord } from './record-codec.js'
import { redisRefusal, type RedisRefusal } from './redis-refusal.js'
import type { ClaimOutcome, StateStore } from './state-store.js'
import { noStoreObserver, type StoreObserver } from './store-metrics.js'

/** A command not answered within this is a failure (SPEC §9: 503 within 2 s, never hanging). */
export const REDIS_COMMAND_TIMEOUT_MS = 1000
/** Reconnect backoff cap: the store is back within about a second of Redis. */
export const REDIS_RECONNECT_MAX_MS = 1000

export interface RedisStoreOptions {
  /** Holds a password when Redis has one: never logged. */
  url: string
  keyPrefix: string
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
  const { log } = options
  const observer = options.observer ?? noStoreObserver
  const client = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, REDIS_RECONNECT_MAX_MS),
    lazyConnect: true,
    keyPrefix: options.keyPrefix,
  })
  client.defineCommand('papClaim', { numberOfKeys: 2, lua: CLAIM_LUA })
  client.defineCommand('papFinish', { numberOfKeys: 1, lua: FINISH_LUA })
  client.defineCommand('papAbort', { numberOfKeys: 1, lua: ABORT_LUA })
  client.defineCommand('papHit', { numberOfKeys: 1, lua: HIT_LUA })
  client.defineCommand('papReserve', { numberOfKeys: 1, lua: RESERVE_LUA })
  client.defineCommand('papRelease', { numberOfKeys: 1, lua: RELEASE_LUA })
  client.defineCommand('papReleaseOnce', { numberOfKeys: 2, lua: RELEASE_ONCE_LUA })
  const scripts = client as unknown as Scripts

  // One error line per outage, not per request or per reconnect attempt.
  let down = false
  let closing = false
  // A hung server keeps its connection (ioredis stays 'ready') while every command times out: the
  // outage ends with the first answer, so one is asked for every second rather than waiting for a
  // request, and readiness does not report a stall as over until the server answers again.
  let probe: NodeJS.Timeout | null = null
  const stopProbe = (): void => {
    if (probe !== null) clearInterval(probe)
    probe = null
  }
  const probeWhileDown = (): void => {
    if (probe !== null) return
    let asking = false
    probe = setInterval(() => {
      if (!down || closing) { stopProbe(); return }
      if (asking || client.status !== 'ready') return
      asking = true
      client.ping().then(markUp, () => {}).finally(() => { asking = false })
    }, REDIS_RECONNECT_MAX_MS).unref()
  }
  const markDown = (reason: string): void => {
    observer.up('redis', false)
    if (down || closing) return
    down = true
    log.error({ reason }, 'state store unavailable')
    probeWhileDown()
  }
  observer.up('redis', false)
  // ioredis messages can carry the address or URL: only the error's code reaches the log, or, when
  // Redis itself refused (a wrong password), which refusal it was.
  let refusal: RedisRefusal | null = null
  client.on('error', (err: NodeJS.ErrnoException) => {
    refusal = redisRefusal(err) ?? refusal
    markDown(refusal?.sentence ?? err.code ?? err.name)
  })
  client.on('close', () => { markDown('connection closed') })
  const markUp = (): void => {
    if (refusal?.lasting === true) return
    refusal = null
    observer.up('redis', true)
    if (down) log.info('state store recovered')
    down = false
    stopProbe()
  }
  client.on('ready', markUp)
  // A failed first connection is reported by the 'error' listener and retried by retryStrategy.
  client.connect().catch(() => {})

  async function run<T> (op: string, command: () => Promise<T>): Promise<T> {
    if (client.status !== 'ready' || refusal?.lasting === true) {
      observer.error(op)
      throw new StateUnavailableError()
    }
    const started = performance.now()
    try {
      const result = await command()
      observer.command(op, (performance.now() - started) / 1000)
      // A timeout marks an outage without closing the connection: the next answer ends it.
      if (down) markUp()
      return result
    } catch (err) {
      observer.error(op)
      markDown((err as NodeJS.ErrnoException).code ?? (err as Error).name)
      throw new StateUnavailableError()
    }
  }

  const idem = (key: string): string => `i:${key}`
  const heldMark = (key: string): string => `h:${key}`

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
      const [admitted, retryAfterMs] = await run('hit', () => scripts.papHit(`r:${key}`, limit, windowMs, randomUUID()))
      return { admitted: admitted === 1, retryAfterMs: admitted === 1 ? 0 : retryAfterMs }
    },
    async reserve (key, amount, limit, ttlMs) {
      if (amount > limit) return false
      const ok = await run('reserve', () => scripts.papReserve(`d:${key}`, amount.toString(), limit.toString(), ttlMs))
      return ok === 1
    },
    async release (key, amount, once) {
      if (once === undefined) await run('release', () => scripts.papRelease(`d:${key}`, amount.toString()))
      else await run('release', () => scripts.papReleaseOnce(`d:${key}`, `g:${once}`, amount.toString()))
    },
    status: () => {
      const ready = client.status === 'ready' && !down
      return refusal === null ? { kind: 'redis', ready } : { kind: 'redis', ready, refusal: refusal.sentence }
    },
    async ping () {
      await run('ping', () => client.ping())
    },
    async close () {
      closing = true
      stopProbe()
      client.disconnect()
    },
  }
}
