/**
 * The ApprovalStore in Redis (SPEC §11), for replicas sharing one set of approvals. A record is one
 * hash (`<prefix>apr:<id>`: the record as JSON, the body bytes, and the three fields the steps
 * judge: status, forward, expiresAt), with an index by §8 key and a sorted set of ids by creation.
 * A decision and a forwarding move are each one Lua script, so of two replicas one wins.
 * Durable as far as Redis's persistence goes (the inbox's start log warns about `appendonly no`).
 */
import { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { ApprovalRecord, ApprovalStatus, DecideOutcome, ForwardState } from './approval-record.js'
import type { ApprovalStore } from './approval-store.js'

const COMMAND_TIMEOUT_MS = 2000
const CONNECT_WAIT_MS = 5000

const DECIDE_LUA = `
local s = redis.call('HGET', KEYS[1], 'status')
if not s then return 'missing' end
if s ~= 'pending' then return s end
if ARGV[1] ~= 'expired' and tonumber(redis.call('HGET', KEYS[1], 'expiresAt')) <= tonumber(ARGV[3]) then return 'expired' end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'record', ARGV[2])
return 'decided'
`
const MOVE_LUA = `
if redis.call('HGET', KEYS[1], 'forward') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'forward', ARGV[2])
return 1
`
/**
 * ARGV: P, id, before. Removes the record when it is settled and was decided before, with its
 * place in the ids and, when it is still the key's latest approval, the key's index; 1 when removed.
 */
const REMOVE_LUA = `
local k = ARGV[1] .. ARGV[2]
local h = redis.call('HMGET', k, 'status', 'forward', 'record')
if not h[1] or h[1] == 'pending' or h[2] ~= 'answered' then return 0 end
local r = cjson.decode(h[3])
if type(r.decidedAtMs) ~= 'number' or r.decidedAtMs >= tonumber(ARGV[3]) then return 0 end
local index = ARGV[1] .. 'key:' .. r.key
if redis.call('GET', index) == ARGV[2] then redis.call('DEL', index) end
redis.call('DEL', k)
redis.call('ZREM', ARGV[1] .. 'ids', ARGV[2])
return 1
`

type Run = (...args: Array<string | number>) => Promise<unknown>

export interface RedisApprovalOptions {
  /** May hold a password: never logged. */
  url: string
  keyPrefix: string
  log: Logger
}

export async function createRedisApprovalStore (options: RedisApprovalOptions): Promise<ApprovalStore> {
  const P = `${options.keyPrefix}apr:`
  const client = new Redis(options.url, {
    enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: COMMAND_TIMEOUT_MS, connectTimeout: COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1000), lazyConnect: true,
  })
  client.defineCommand('aprDecide', { numberOfKeys: 1, lua: DECIDE_LUA })
  client.defineCommand('aprMove', { numberOfKeys: 1, lua: MOVE_LUA })
  client.defineCommand('aprRemove', { numberOfKeys: 0, lua: REMOVE_LUA })
  const script = (name: string): Run => (...args) => (client as unknown as Record<string, Run>)[name]?.(...args) ?? Promise.reject(new Error(name))
  // ioredis messages can carry the address or URL: only the error's code reaches the log.
  client.on('error', (err: NodeJS.ErrnoException) => { options.log.warn({ reason: err.code ?? err.name }, 'approvals store (Redis) unavailable') })
  client.connect().catch(() => {})
  // A command's first read needs the connection; a sidecar starts anyway when Redis is down (holds answer 503).
  const deadline = Date.now() + CONNECT_WAIT_MS
  while (client.status !== 'ready' && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))

  const read = async (id: string): Promise<ApprovalRecord | null> => {
    const h = await client.hgetallBuffer(`${P}${id}`)
    if (h['record'] === undefined) return null
    const rest = JSON.parse(h['record'].toString('utf8')) as Omit<ApprovalRecord, 'body' | 'status' | 'forward'>
    return { ...rest, body: h['body'] ?? Buffer.alloc(0), status: String(h['status']) as ApprovalStatus, forward: String(h['forward']) as ForwardState }
  }
  const all = async (): Promise<ApprovalRecord[]> => {
    const ids = await client.zrange(`${P}ids`, '0', '-1')
    const records = await Promise.all(ids.map(read))
    return records.filter((r): r is ApprovalRecord => r !== null)
  }
  const json = (approval: ApprovalRecord): string => {
    // The three hash fields of their own are left out of the JSON.
    const rest: Partial<ApprovalRecord> = { ...approval }
    delete rest.body
    delete rest.status
    delete rest.forward
    return JSON.stringify(rest)
  }

  return {
    async create (approval) {
      await client.multi()
        .hset(`${P}${approval.id}`, { record: json(approval), body: approval.body, status: approval.status, forward: approval.forward, expiresAt: approval.expiresAtMs })
        .set(`${P}key:${approval.key}`, approval.id)
        .zadd(`${P}ids`, approval.createdAtMs, approval.id)
        .exec()
    },
    get: read,
    async byKey (key) {
      const id = await client.get(`${P}key:${key}`)
      return id === null ? null : await read(id)
    },
    list: async (status) => (await all()).filter((a) => status === undefined || a.status === status),
    async decide (id, decision, nowMs): Promise<DecideOutcome> {
      const current = await read(id)
      if (current === null) return { kind: 'missing' }
      const decided: ApprovalRecord = { ...current, status: decision.status, decidedBy: decision.by, decidedByCaller: decision.byCaller, reason: decision.reason, decidedAtMs: decision.atMs, mac: decision.mac }
      const outcome = String(await script('aprDecide')(`${P}${id}`, decision.status, json(decided), nowMs))
      if (outcome === 'decided') return { kind: 'decided', approval: decided }
      if (outcome === 'missing') return { kind: 'missing' }
      const now = await read(id) ?? current
      return { kind: 'already', approval: outcome === 'expired' ? { ...now, status: 'expired' } : now }
    },
    toSettle: async () => (await all()).filter((a) => a.status !== 'pending' && a.forward !== 'answered'),
    dueToExpire: async (nowMs) => (await all()).filter((a) => a.status === 'pending' && a.expiresAtMs <= nowMs),
    moveForward: async (id, from, to) => Number(await script('aprMove')(`${P}${id}`, from, to)) === 1,
    async removeSettledBefore (beforeMs) {
      // A record is decided after it was created: only those created before can qualify.
      const ids = await client.zrangebyscore(`${P}ids`, '-inf', `(${beforeMs}`)
      let removed = 0
      for (const id of ids) removed += Number(await script('aprRemove')(P, id, beforeMs))
      return removed
    },
    async close () { client.disconnect() },
  }
}
