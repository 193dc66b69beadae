/**
 * The OutboxStore in Redis (SPEC §9, §10), for several replicas sharing one outbox: every step that must
 * be exclusive is one Lua script (redis-lua.ts), so two replicas never lease one event at once,
 * and a dead replica's leases are taken over by the next claim after they end (delivery timeout +
 * 30 s). An intake is answered once Redis acknowledged it: durable as far as Redis's persistence
 * goes, so the start log warns when the server runs without append-only persistence. Commands fail
 * fast while Redis is down (no offline queue), and intake answers 503 instead of hanging; one that
 * Redis does not answer fails after its deadline, judged once the replies already here are read
 * (storage/redis-connection.ts, `after-replies`), so a held loop never fails an event Redis stored.
 */
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { WebhookStoreUnavailableError } from '../errors.js'
import { reportErrors, type RedisConnection } from '../storage/redis-connection.js'
import { newEventId } from './event-id.js'
import type { AttemptRecord, EventStatus, EventSummary, HeaderList, IntakeOutcome, OutboxStore, StoredEvent } from './outbox-store.js'
import { CLAIM_LUA, INTAKE_LUA, RELEASE_LUA, REMOVE_LUA, REPLAY_LUA, SCHEMA_LUA, SETTLE_LUA } from './redis-lua.js'
import { headroomOf, isFull } from './store-room.js'

const COMMAND_TIMEOUT_MS = 2000
const REMOVE_BATCH = 500
const SUMMARY_BATCH = 1000

export interface RedisOutboxOptions {
  /** The process's connection. */
  redis: RedisConnection
  /**
   * This outbox's part of the keys after the connection's prefix: '' for the inbox, `aprn:` for approvals'
   * notifications.
   */
  keys: string
  retentionMs: number
  maxEvents: number
  maxBytes: number
  /** How long a later event of an order key waits behind its head before it is claimed out of order. */
  orderMaxWaitMs: number
  log: Logger
}

type Run = (...args: Array<string | number | Buffer>) => Promise<unknown>

export function createRedisOutboxStore (options: RedisOutboxOptions): OutboxStore {
  const { redis } = options
  const P = `${redis.keyPrefix}${options.keys}`
  const owner = randomUUID()
  const bounds = { maxEvents: options.maxEvents, maxBytes: options.maxBytes }
  const headroom = headroomOf(bounds)
  const lua = {
    whSchema: SCHEMA_LUA,
    whIntake: INTAKE_LUA,
    whClaim: CLAIM_LUA,
    whSettle: SETTLE_LUA,
    whRelease: RELEASE_LUA,
    whReplay: REPLAY_LUA,
    whRemove: REMOVE_LUA,
  }
  const client = redis.commands({ ms: COMMAND_TIMEOUT_MS, judged: 'after-replies' }, Object.fromEntries(Object.entries(lua).map(([name, text]) => [name, { keys: 0, lua: text }])))
  const run = (name: string, ...args: Array<string | number | Buffer>): Promise<unknown> =>
    (client as unknown as Record<string, Run | undefined>)[name]?.(P, ...args) ?? Promise.reject(new Error(name))
  const unwatchErrors = reportErrors(redis, options.log, 'webhook store (Redis) unavailable')
  const unwatchReady = redis.watch({
    ready () {
      // A store of an earlier layout is brought up to date before readiness reads its counters.
      run('whSchema').catch(() => {})
      client.info('persistence').then((info) => {
        if (/aof_enabled:0/.test(info)) options.log.warn('Redis runs without append-only persistence (appendonly no): webhook events acknowledged with 200 can be lost if Redis restarts')
      }, () => {})
    },
  })

  const event = async (id: string): Promise<StoredEvent | null> => {
    const h = await client.hgetallBuffer(`${P}wh:ev:${id}`)
    if (h['key'] === undefined) return null
    const text = (name: string): string => h[name]?.toString('utf8') ?? ''
    const found: StoredEvent = {
      id,
      key: text('key'),
      bodySha256: text('sha'),
      orderKey: text('order') === '' ? null : text('order'),
      body: h['body'] ?? Buffer.alloc(0),
      headers: JSON.parse(text('headers')) as HeaderList,
      source: text('source'),
      receivedAtMs: Number(text('at')),
      status: text('status') as EventStatus,
      attempts: Number(text('attempts')),
      nextAttemptAtMs: Number(text('next')),
      conflictWith: text('conflict') === '' ? null : text('conflict'),
    }
    return found
  }
  const events = async (ids: readonly string[]): Promise<StoredEvent[]> => (await Promise.all(ids.map(event))).filter(
    (e): e is StoredEvent => e !== null,
  )
  // A listing reads no body (its length only), in pipelines of a bounded size: a million events must
  // list. It is in the order the store received the events (`seq`, as SQLite lists them), which two
  // replicas stamping their own receipt times need not agree with.
  const summaries = async (ids: readonly string[]): Promise<Array<{ summary: EventSummary, seq: number }>> => {
    const found: Array<{ summary: EventSummary, seq: number }> = []
    for (let at = 0; at < ids.length; at += SUMMARY_BATCH) {
      const batch = ids.slice(at, at + SUMMARY_BATCH)
      const pipeline = client.pipeline()
      for (const id of batch) {
        pipeline.hmget(`${P}wh:ev:${id}`, 'key', 'sha', 'order', 'source', 'at', 'status', 'attempts', 'next', 'conflict', 'seq').hstrlen(`${P}wh:ev:${id}`, 'body').llen(`${P}wh:att:${id}`)
      }
      const replies = await pipeline.exec() ?? []
      const listed: Array<{ summary: EventSummary, seq: number }> = []
      batch.forEach((id, i) => {
        const [fieldsError, fields] = replies[3 * i] ?? []
        const [lengthError, bytes] = replies[3 * i + 1] ?? []
        const [attemptsError, attemptsTotal] = replies[3 * i + 2] ?? []
        const failed = fieldsError ?? lengthError ?? attemptsError
        if (failed != null) throw failed
        const [
          key,
          sha,
          order,
          source,
          receivedAt,
          status,
          attempts,
          next,
          conflict,
          seq,
        ] = fields as Array<string | null>
        if (key === null || key === undefined) return
        const summary: EventSummary = {
          id, key, bodySha256: sha ?? '', orderKey: order == null || order === '' ? null : order, bytes: Number(bytes), source: source ?? '', receivedAtMs: Number(receivedAt),
          status: status as EventStatus, attempts: Number(attempts), nextAttemptAtMs: Number(next), conflictWith: conflict == null || conflict === '' ? null : conflict,
          attemptsTotal: Number(attemptsTotal), waitingBehind: null,
        }
        listed.push({ summary, seq: Number(seq) })
      })
      const heads = await headsOf(listed.map((l) => l.summary))
      for (const l of listed) found.push({
        summary: { ...l.summary, waitingBehind: heads.get(l.summary.id) ?? null },
        seq: l.seq,
      })
    }
    return found
  }
  /** For each pending event of an order key that is not its key's head: that head (order-wait.ts). */
  const headsOf = async (listed: ReadonlyArray<Pick<StoredEvent, 'id' | 'status' | 'orderKey'>>): Promise<Map<string, string>> => {
    const ordered = listed.filter((e): e is typeof e & { orderKey: string } => e.status === 'pending' && e.orderKey !== null)
    if (ordered.length === 0) return new Map()
    const pipeline = client.pipeline()
    for (const e of ordered) pipeline.lindex(`${P}wh:order:${e.orderKey}`, 0)
    const replies = await pipeline.exec() ?? []
    const heads = new Map<string, string>()
    ordered.forEach((e, i) => {
      const [error, head] = replies[i] ?? []
      if (error != null) throw error
      if (typeof head === 'string' && head !== e.id) heads.set(e.id, head)
    })
    return heads
  }

  return {
    async intake (e) {
      let reply: [string, string?, string?, number?]
      try {
        reply = await run('whIntake', e.key, e.bodySha256, e.orderKey ?? '', e.body, JSON.stringify(e.headers), e.source, e.receivedAtMs, newEventId(),
          options.retentionMs, bounds.maxEvents, bounds.maxBytes, headroom.events, headroom.bytes) as typeof reply
      } catch (err) {
        throw new WebhookStoreUnavailableError('Redis did not acknowledge it', err)
      }
      const [kind, id = '', conflictWith = '', evicted = 0] = reply
      if (kind === 'full') throw new WebhookStoreUnavailableError('the inbox is full (PROXY_WEBHOOK_STORE_MAX_EVENTS or _MAX_BYTES): pending and failed events alone fill it')
      if (kind === 'duplicate') return { kind, id }
      const outcome: IntakeOutcome = kind === 'conflict' ? { kind, id, conflictWith } : { kind: 'stored', id }
      return evicted > 0 ? { ...outcome, evicted } : outcome
    },
    async claimDue (nowMs, limit, leaseMs) {
      const claimed = await run('whClaim', nowMs, limit, nowMs + leaseMs, owner, options.orderMaxWaitMs) as string[]
      const behind = new Map<string, string>()
      for (let i = 0; i + 1 < claimed.length; i += 2) behind.set(claimed[i] as string, claimed[i + 1] as string)
      const found = await events([...behind.keys()])
      return found.map((e) => ({ ...e, waitedBehind: behind.get(e.id) || null }))
    },
    async settle (id, attempt, next) {
      await run('whSettle', id, owner, JSON.stringify(attempt), next.status, next.status === 'pending' ? next.nextAttemptAtMs : 0)
    },
    async release (id) { await run('whRelease', id, owner) },
    async list ({ status, sinceMs = 0, limit = 1000 }) {
      const set = status === 'pending' ? 'wh:pending' : status === 'failed' ? 'wh:failed' : 'wh:all'
      const ids = await client.zrangebyscore(`${P}${set}`, sinceMs, '+inf', 'LIMIT', 0, status === 'delivered' ? -1 : limit)
      const found = (await summaries(ids)).sort((a, b) => a.seq - b.seq)
      const listed = found.map((f) => f.summary)
      return (status === undefined ? listed : listed.filter((e) => e.status === status)).slice(0, limit)
    },
    async show (id) {
      const found = await event(id)
      if (found === null) return null
      const attempts = (await client.lrange(`${P}wh:att:${id}`, 0, -1)).map((a) => JSON.parse(a) as AttemptRecord)
      return { event: found, attempts, waitingBehind: (await headsOf([found])).get(id) ?? null }
    },
    async replay (selection, nowMs) {
      const ids = 'ids' in selection ? selection.ids : await client.zrangebyscore(`${P}wh:failed`, selection.failedSinceMs, '+inf')
      const replayed: string[] = []
      for (const id of ids) if (await run('whReplay', id, nowMs) === 1) replayed.push(id)
      return replayed
    },
    async stats () {
      const [pending, failed, oldest, sizes] = await Promise.all([
        client.zcard(`${P}wh:pending`), client.zcard(`${P}wh:failed`), client.zrange(`${P}wh:pending`, '0', '0', 'WITHSCORES'), client.mget(`${P}wh:bytes`, `${P}wh:dbytes`),
      ])
      const held = { events: pending + failed, bytes: Number(sizes[0] ?? 0) - Number(sizes[1] ?? 0) }
      return {
        pending,
        failed,
        oldestPendingReceivedAtMs: oldest[1] === undefined ? null : Number(oldest[1]),
        full: isFull(held, bounds),
      }
    },
    async removeSettledBefore (beforeMs) {
      let removed = 0
      for (;;) {
        const n = await run('whRemove', beforeMs, REMOVE_BATCH) as number
        removed += n
        if (n < REMOVE_BATCH) return removed
      }
    },
    async eventsAfter (seq, limit) {
      const ids = await client.zrangebyscore(`${P}wh:byseq`, `(${seq}`, '+inf', 'LIMIT', 0, limit)
      if (ids.length === 0) return []
      const pipeline = client.pipeline()
      for (const id of ids) pipeline.hmgetBuffer(`${P}wh:ev:${id}`, 'seq', 'body', 'at')
      return (await pipeline.exec() ?? []).flatMap(([err, fields], i) => {
        if (err !== null) throw err
        const [seqText, body, receivedAt] = fields as Array<Buffer | null | undefined>
        // Removed between the two reads: past its retention, nothing to follow any more.
        if (seqText == null || body == null || receivedAt == null) return []
        return [
          { seq: Number(seqText.toString()), id: ids[i] as string, body, receivedAtMs: Number(receivedAt.toString()) },
        ]
      })
    },
    lastEventSeq: async () => Number(await client.get(`${P}wh:seq`) ?? '0'),
    ready: () => client.status === 'ready',
    // The connection is the process's: closed by its owner once every store is.
    async close () {
      unwatchErrors()
      unwatchReady()
    },
  }
}
