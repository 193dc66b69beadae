/**
 * The PaymentStore in Redis (SPEC §12), for replicas sharing one set of payments: a version check
 * and a lease are each one Lua script (redis-payment-lua.ts), so of two replicas one writes and the
 * other reads again, and one at a time acts on a due payment; a dead replica's leases are taken over
 * by the next claim after they end. Keys start with §9's prefix and `pay:`. Durable as far as
 * Redis's persistence goes (the inbox's start log warns about `appendonly no`). Commands fail fast
 * while Redis is down (no offline queue): an intent then answers 503 instead of hanging.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { reportErrors, type RedisConnection } from '../storage/redis-connection.js'
import type { PaymentRecord } from './payment-record.js'
import { indexKey, type CreateOutcome, type PaymentStore } from './payment-store.js'
import { CLAIM_LUA, CREATE_LUA, CURSOR_LUA, RELEASE_LUA, REMOVE_LUA, REMOVE_SETTLED_LUA, UPDATE_LUA } from './redis-payment-lua.js'

const COMMAND_TIMEOUT_MS = 2000
const CONNECT_WAIT_MS = 5000
const PAGE = 200
const REMOVE_BATCH = 500

export interface RedisPaymentOptions {
  /** The process's connection; the keys are under its prefix and `pay:`. */
  redis: RedisConnection
  log: Logger
}

type Run = (...args: Array<string | number>) => Promise<unknown>

export async function createRedisPaymentStore (options: RedisPaymentOptions): Promise<PaymentStore> {
  const { redis } = options
  const P = `${redis.keyPrefix}pay:`
  const owner = randomUUID()
  const lua = {
    payCreate: CREATE_LUA,
    payUpdate: UPDATE_LUA,
    payRemove: REMOVE_LUA,
    payRemoveSettled: REMOVE_SETTLED_LUA,
    payClaim: CLAIM_LUA,
    payRelease: RELEASE_LUA,
    payCursor: CURSOR_LUA,
  }
  const client = redis.commands({ ms: COMMAND_TIMEOUT_MS, judged: 'timer' }, Object.fromEntries(Object.entries(lua).map(([name, text]) => [name, { keys: 0, lua: text }])))
  const run = async (name: string, ...args: Array<string | number>): Promise<unknown> =>
    await ((client as unknown as Record<string, Run | undefined>)[name]?.(P, ...args) ??
      Promise.reject(new Error(name)))
  const unwatch = reportErrors(redis, options.log, 'payments store (Redis) unavailable')
  // A command's first read needs the connection; a sidecar starts anyway when Redis is down (followed requests answer
  // 503).
  await redis.untilReady(CONNECT_WAIT_MS)

  const fromHash = (json: string | null | undefined, version: string | null | undefined): PaymentRecord | null =>
    json == null || version == null ? null : { ...JSON.parse(json) as PaymentRecord, version: Number(version) }
  const read = async (id: string): Promise<PaymentRecord | null> => {
    const [json, version] = await client.hmget(`${P}r:${id}`, 'json', 'v')
    return fromHash(json, version)
  }
  /** One round trip for them all, in the order given; an id whose record is gone is left out. */
  const readMany = async (ids: readonly string[]): Promise<PaymentRecord[]> => {
    if (ids.length === 0) return []
    const pipeline = client.pipeline()
    for (const id of ids) pipeline.hmget(`${P}r:${id}`, 'json', 'v')
    return (await pipeline.exec() ?? []).flatMap(([err, fields]) => {
      if (err !== null) throw err
      const [json, version] = fields as Array<string | null>
      const record = fromHash(json, version)
      return record === null ? [] : [record]
    })
  }
  const json = (record: PaymentRecord): string => JSON.stringify(record)
  const due = (record: PaymentRecord): string | number => record.dueAtMs ?? ''

  const create = async (record: PaymentRecord): Promise<CreateOutcome> => {
    const [kind, id] = await run('payCreate', record.id, record.key, json(record), record.state, record.caller, indexKey(record.externalReference), record.transactionId === null ? '' : indexKey(record.transactionId), due(record), record.settledAtMs ?? '') as string[]
    if (kind === 'created') return { kind: 'created' }
    const existing = id === undefined ? null : await read(id)
    // Removed in between (dropped by its own forward's answer): this intent is a new record after all.
    return existing === null ? await create(record) : { kind: 'exists', record: existing }
  }

  return {
    create,
    get: read,
    async byKey (key) {
      const id = await client.get(`${P}key:${key}`)
      return id === null ? null : await read(id)
    },
    async byReference (reference, filter) {
      const ids = await client.zrevrange(`${P}ref:${indexKey(reference)}`, 0, -1)
      for (const record of await readMany(ids)) {
        if (record.externalReference !== reference) continue
        if (filter.caller !== undefined && record.caller !== filter.caller) continue
        if (filter.environment !== undefined && record.environment !== filter.environment) continue
        return record
      }
      return null
    },
    async byTransactionId (transactionId) {
      const id = await client.get(`${P}tx:${indexKey(transactionId)}`)
      const record = id === null ? null : await read(id)
      return record?.transactionId === transactionId ? record : null
    },
    async update (record) {
      const version = Number(await run('payUpdate', record.id, record.version, json({ ...record, version: record.version + 1 }), record.state, record.transactionId === null ? '' : indexKey(record.transactionId), due(record), record.settledAtMs ?? '', record.notify.length, owner))
      return version === 0 ? null : { ...record, version }
    },
    remove: async (record) => Number(await run('payRemove', record.id, record.version)) === 1,
    async claimDue (nowMs, limit, leaseMs) {
      return await readMany(await run('payClaim', nowMs, limit, nowMs + leaseMs, owner) as string[])
    },
    async release (id) { await run('payRelease', id, owner) },
    async list ({ state, states, caller, sinceMs, limit }) {
      if (states !== undefined) {
        // Each state's set is ordered by the same sequence number: the newest `limit` of each, merged by it.
        const scored = await Promise.all(states.map(async (s) => await client.zrevrange(`${P}st:${s}`, 0, limit - 1, 'WITHSCORES')))
        const ids = scored.flatMap(
          (flat) => flat.flatMap((id, i) => i % 2 === 0 ? [{ id, seq: Number(flat[i + 1]) }] : []),
        )
          .sort((a, b) => b.seq - a.seq).slice(0, limit).map((entry) => entry.id)
        return (await readMany(ids)).filter((record) => states.includes(record.state))
      }
      const set = caller !== undefined ? `c:${caller}` : state !== undefined ? `st:${state}` : 'all'
      const found: PaymentRecord[] = []
      for (let at = 0; found.length < limit; at += PAGE) {
        const ids = await client.zrevrange(`${P}${set}`, at, at + PAGE - 1)
        const page = await readMany(ids)
        for (const record of page) {
          if (state !== undefined && record.state !== state) continue
          if (sinceMs !== undefined && record.createdAtMs < sinceMs) continue
          if (found.length < limit) found.push(record)
        }
        // Newest first: once a whole page is older than `sinceMs`, the rest is too.
        if (ids.length < PAGE || (sinceMs !== undefined && page.every((r) => r.createdAtMs < sinceMs))) break
      }
      return found
    },
    async counts () {
      const [pending, stale, unknown] = await Promise.all(['pending', 'stale', 'unknown'].map(async (state) => await client.zcard(`${P}st:${state}`)))
      return { pending: pending ?? 0, stale: stale ?? 0, unknown: unknown ?? 0, unverified: 0 }
    },
    async removeSettledBefore (beforeMs) {
      let removed = 0
      for (;;) {
        const ids = await client.zrangebyscore(`${P}settled`, '-inf', `(${beforeMs}`, 'LIMIT', 0, REMOVE_BATCH)
        let progressed = 0
        for (const id of ids) {
          const gone = Number(await run('payRemoveSettled', id))
          removed += gone
          progressed += gone
        }
        if (ids.length < REMOVE_BATCH || progressed === 0) return removed
      }
    },
    async cursor () {
      const seq = await client.get(`${P}cursor`)
      return seq === null ? null : Number(seq)
    },
    async advanceCursor (seq) { await run('payCursor', seq) },
    ready: () => client.status === 'ready',
    // The connection is the process's: closed by its owner once every store is.
    async close () { unwatch() },
  }
}
