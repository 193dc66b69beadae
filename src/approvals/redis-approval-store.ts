/**
 * The ApprovalStore in Redis (SPEC §11), for replicas sharing one set of approvals. A record is one
 * hash (`<prefix>apr:<id>`: the record as JSON, the body bytes, the three fields the steps
 * judge: status, forward, expiresAt, and the forwarding stage's seal), with an index by §8 key and a sorted set of ids
 * by creation. A decision and a forwarding move are each one Lua script, so of two replicas one wins.
 * Durable as far as Redis's persistence goes (the inbox's start log warns about `appendonly no`).
 *
 * Records are kept 7 days or more after their decision, and every replica's loop asks every
 * second what is due to expire, what is to settle and how many are pending: sorted sets answer
 * those without reading the records that do not qualify, `pending` and `unsettled` (decided,
 * forward not `answered`) by creation, `expiring` (pending ones) by their expiry. Every write updates
 * them in the same MULTI or script as the record, so no replica sees an index disagree with a
 * record. A Redis written before they existed has them built at the loop's first read, once
 * (`schema`). A record changed by hand is not re-indexed: its seals no longer verify, and it is
 * never acted on wherever it is read (record-verifier.ts).
 */
import type { Logger } from 'pino'
import { reportErrors, type RedisConnection } from '../storage/redis-connection.js'
import type { ApprovalStatus } from '../objects/approval-object.js'
import { decidedRecord, type ApprovalRecord, type DecideOutcome, type ForwardState } from './approval-record.js'
import type { ApprovalPage, ApprovalStore, PageQuery } from './approval-store.js'

const COMMAND_TIMEOUT_MS = 2000
const CONNECT_WAIT_MS = 5000
/** The value of `<P>schema` once the indexes hold every record. */
const SCHEMA = '3'
/** Ids indexed by one script while the indexes are built: short enough not to stall Redis. */
const BUILD_BATCH = 500
/** Ids whose status one pipeline reads while a page of decided approvals is gathered. */
const SCAN_BATCH = 500

/** Lua: puts an id in the indexes its record's status and forward call for, and in none once the record is gone. */
const REINDEX = `
local function reindex (P, id)
  local h = redis.call('HMGET', P .. id, 'status', 'forward')
  local created = redis.call('ZSCORE', P .. 'ids', id) or 0
  if h[1] == 'pending' then
    redis.call('ZADD', P .. 'pending', created, id)
    redis.call('ZADD', P .. 'expiring', tonumber(redis.call('HGET', P .. id, 'expiresAt')) or 0, id)
  else
    redis.call('ZREM', P .. 'pending', id)
    redis.call('ZREM', P .. 'expiring', id)
  end
  if h[1] and h[1] ~= 'pending' and h[2] ~= 'answered' then
    redis.call('ZADD', P .. 'unsettled', created, id)
  else
    redis.call('ZREM', P .. 'unsettled', id)
  end
end
`
/** ARGV: P, id, status, record JSON, now. 'decided', 'missing', 'expired' (too late), or the status it has. */
const DECIDE_LUA = `${REINDEX}
local k = ARGV[1] .. ARGV[2]
local s = redis.call('HGET', k, 'status')
if not s then return 'missing' end
if s ~= 'pending' then return s end
if ARGV[3] ~= 'expired' and tonumber(redis.call('HGET', k, 'expiresAt')) <= tonumber(ARGV[5]) then return 'expired' end
redis.call('HSET', k, 'status', ARGV[3], 'record', ARGV[4])
reindex(ARGV[1], ARGV[2])
return 'decided'
`
/** ARGV: P, id, from, to, the stage's seal. 1 when moved. */
const MOVE_LUA = `${REINDEX}
local k = ARGV[1] .. ARGV[2]
if redis.call('HGET', k, 'forward') ~= ARGV[3] then return 0 end
redis.call('HSET', k, 'forward', ARGV[4], 'forwardSeal', ARGV[5])
reindex(ARGV[1], ARGV[2])
return 1
`
/**
 * ARGV: P, id, before. Removes the record when it is settled and was decided before, with its
 * place in the ids and indexes and, when it is still the key's latest approval, the key's index; 1 when removed.
 */
const REMOVE_LUA = `${REINDEX}
local k = ARGV[1] .. ARGV[2]
local h = redis.call('HMGET', k, 'status', 'forward', 'record')
if not h[1] or h[1] == 'pending' or h[2] ~= 'answered' then return 0 end
local r = cjson.decode(h[3])
if type(r.decidedAtMs) ~= 'number' or r.decidedAtMs >= tonumber(ARGV[3]) then return 0 end
local index = ARGV[1] .. 'key:' .. r.key
if redis.call('GET', index) == ARGV[2] then redis.call('DEL', index) end
redis.call('DEL', k)
redis.call('ZREM', ARGV[1] .. 'ids', ARGV[2])
reindex(ARGV[1], ARGV[2])
return 1
`
/**
 * ARGV: P, ids. Indexes records written before the indexes existed, or by hand, each from its fields
 * as they are now: a decision by another replica meanwhile is either before (seen) or after (indexed by its script).
 */
const INDEX_LUA = `${REINDEX}
for i = 2, #ARGV do reindex(ARGV[1], ARGV[i]) end
return 0
`

type Run = (...args: Array<string | number>) => Promise<unknown>

export interface RedisApprovalOptions {
  /** The process's connection; the keys are under its prefix and `apr:`. */
  redis: RedisConnection
  log: Logger
}

export async function createRedisApprovalStore (options: RedisApprovalOptions): Promise<ApprovalStore> {
  const { redis } = options
  const P = `${redis.keyPrefix}apr:`
  const client = redis.commands({ ms: COMMAND_TIMEOUT_MS, judged: 'timer' }, {
    aprDecide: { keys: 0, lua: DECIDE_LUA },
    aprMove: { keys: 0, lua: MOVE_LUA },
    aprRemove: { keys: 0, lua: REMOVE_LUA },
    aprIndex: { keys: 0, lua: INDEX_LUA },
  })
  const script = (name: string): Run => (...args) => (client as unknown as Record<string, Run>)[name]?.(...args) ??
    Promise.reject(new Error(name))
  const unwatch = reportErrors(redis, options.log, 'approvals store (Redis) unavailable')
  // A command's first read needs the connection; a sidecar starts anyway when Redis is down (holds answer 503).
  await redis.untilReady(CONNECT_WAIT_MS)

  const fromHash = (h: Record<string, Buffer>): ApprovalRecord | null => {
    if (h['record'] === undefined) return null
    const rest = JSON.parse(h['record'].toString('utf8')) as Omit<ApprovalRecord, 'body' | 'status' | 'forward' | 'forwardSeal'>
    const forwardSeal = h['forwardSeal']?.toString('utf8') ?? null
    return { ...rest, body: h['body'] ?? Buffer.alloc(0), status: String(h['status']) as ApprovalStatus, forward: String(h['forward']) as ForwardState, forwardSeal }
  }
  const read = async (id: string): Promise<ApprovalRecord | null> => fromHash(await client.hgetallBuffer(`${P}${id}`))
  /** One round trip for them all; an id whose record is gone is left out. */
  const readMany = async (ids: string[]): Promise<ApprovalRecord[]> => {
    if (ids.length === 0) return []
    const pipeline = client.pipeline()
    for (const id of ids) pipeline.hgetallBuffer(`${P}${id}`)
    return (await pipeline.exec() ?? []).flatMap(([err, h]) => {
      if (err !== null) throw err
      const record = fromHash(h as Record<string, Buffer>)
      return record === null ? [] : [record]
    })
  }
  /** The records of a set of ids by creation (`ids`, `pending`, `unsettled`), in its order. */
  const inSet = async (set: string): Promise<ApprovalRecord[]> => await readMany(await client.zrange(`${P}${set}`, '0', '-1'))

  let indexed = false
  let building: Promise<void> | null = null
  const build = async (): Promise<void> => {
    if (await client.get(`${P}schema`) !== SCHEMA) {
      // Replicas may build at once: indexing an id again changes nothing. The indexes' own members
      // too, so that one left by an earlier version's removal goes.
      const ids = [...new Set((await Promise.all(['ids', 'pending', 'unsettled', 'expiring'].map(async (set) => await client.zrange(`${P}${set}`, '0', '-1')))).flat())]
      for (let i = 0; i < ids.length; i += BUILD_BATCH) await script('aprIndex')(P, ...ids.slice(i, i + BUILD_BATCH))
      await client.set(`${P}schema`, SCHEMA)
    }
    indexed = true
  }
  /**
   * Built by the loop's reads (dueToExpire, toSettle), which only the sidecar makes: `check` and the
   * approvals commands, run beside a sidecar of the version before, write nothing by reading.
   */
  const indexes = async (): Promise<void> => {
    building ??= build().catch((err: unknown) => {
      building = null
      throw err
    })
    await building
  }
  const pending = async (): Promise<ApprovalRecord[]> => {
    indexed ||= await client.get(`${P}schema`) === SCHEMA
    return (await inSet(indexed ? 'pending' : 'ids')).filter((a) => a.status === 'pending')
  }
  /**
   * Decided ones newest first: the ids by creation from the newest, whose status is read (not the
   * record) until the page is full. Pending ones from their index when it is built, else filtered.
   */
  const page = async ({ status, offset, limit }: PageQuery): Promise<ApprovalPage> => {
    indexed ||= await client.get(`${P}schema`) === SCHEMA
    if (status === 'pending' && indexed) {
      // A page of none is the count alone (ZRANGE 0 -1 would be every id).
      const [ids, total] = await Promise.all([limit === 0 ? [] : client.zrange(`${P}pending`, String(offset), String(offset + limit - 1)), client.zcard(`${P}pending`)])
      return { approvals: (await readMany(ids)).filter((a) => a.status === 'pending'), total }
    }
    if (status === 'pending') {
      const all = await pending()
      return { approvals: all.slice(offset, offset + limit), total: all.length }
    }
    const wanted: string[] = []
    let skipped = 0
    let decided = 0
    const [count, pendingCount] = await Promise.all([client.zcard(`${P}ids`), client.zcard(`${P}pending`)])
    // With the index the total is a difference; without it, every status is read to count.
    for (let at = 0; at < count && !(indexed && wanted.length === limit); at += SCAN_BATCH) {
      const ids = await client.zrevrange(`${P}ids`, String(at), String(at + SCAN_BATCH - 1))
      const pipeline = client.pipeline()
      for (const id of ids) pipeline.hget(`${P}${id}`, 'status')
      const statuses = (await pipeline.exec() ?? []).map(([err, value]) => {
        if (err !== null) throw err
        return value as string | null
      })
      ids.forEach((id, i) => {
        const s = statuses[i]
        if (s === null || s === undefined || s === 'pending') return
        decided += 1
        if (skipped < offset) skipped += 1
        else if (wanted.length < limit) wanted.push(id)
      })
    }
    if (indexed) decided = count - pendingCount
    return { approvals: await readMany(wanted), total: decided }
  }
  const json = (approval: ApprovalRecord): string => {
    // The hash fields of their own are left out of the JSON.
    const rest: Partial<ApprovalRecord> = { ...approval }
    delete rest.body
    delete rest.status
    delete rest.forward
    delete rest.forwardSeal
    return JSON.stringify(rest)
  }

  return {
    async create (approval) {
      const multi = client.multi()
        .hset(`${P}${approval.id}`, {
          record: json(approval),
          body: approval.body,
          status: approval.status,
          forward: approval.forward,
          expiresAt: approval.expiresAtMs,
          ...(approval.forwardSeal === null ? {} : { forwardSeal: approval.forwardSeal }),
        })
        .set(`${P}key:${approval.key}`, approval.id)
        .zadd(`${P}ids`, approval.createdAtMs, approval.id)
      // Where REINDEX would put it.
      if (approval.status === 'pending') multi.zadd(`${P}pending`, approval.createdAtMs, approval.id).zadd(`${P}expiring`, approval.expiresAtMs, approval.id)
      else if (approval.forward !== 'answered') multi.zadd(`${P}unsettled`, approval.createdAtMs, approval.id)
      await multi.exec()
    },
    get: read,
    async byKey (key) {
      const id = await client.get(`${P}key:${key}`)
      return id === null ? null : await read(id)
    },
    list: async (status) => status === 'pending' ? await pending() : (await inSet('ids')).filter((a) => status === undefined || a.status === status),
    page,
    async decide (id, decision, nowMs): Promise<DecideOutcome> {
      const current = await read(id)
      if (current === null) return { kind: 'missing' }
      const decided = decidedRecord(current, decision)
      const outcome = String(await script('aprDecide')(P, id, decision.status, json(decided), nowMs))
      if (outcome === 'decided') return { kind: 'decided', approval: decided }
      if (outcome === 'missing') return { kind: 'missing' }
      const now = await read(id) ?? current
      return { kind: 'already', approval: outcome === 'expired' ? { ...now, status: 'expired' } : now }
    },
    async toSettle () {
      await indexes()
      return (await inSet('unsettled')).filter((a) => a.status !== 'pending' && a.forward !== 'answered')
    },
    async dueToExpire (nowMs) {
      await indexes()
      // In the order of creation, as the embedded store reads them.
      return (await readMany(await client.zrangebyscore(`${P}expiring`, '-inf', String(nowMs))))
        .filter((a) => a.status === 'pending' && a.expiresAtMs <= nowMs)
        .sort((a, b) => a.createdAtMs - b.createdAtMs)
    },
    moveForward: async (id, from, to, seal) => Number(await script('aprMove')(P, id, from, to, seal)) === 1,
    async removeSettledBefore (beforeMs) {
      // A record is decided after it was created: only those created before can qualify.
      const ids = await client.zrangebyscore(`${P}ids`, '-inf', `(${beforeMs}`)
      let removed = 0
      for (const id of ids) removed += Number(await script('aprRemove')(P, id, beforeMs))
      return removed
    },
    // The connection is the process's: closed by its owner once every store is.
    async close () { unwatch() },
  }
}
