/**
 * One suite for the ApprovalStore contract (SPEC §11), run over each implementation's factory on
 * real storage (an SQLite file on disk, a real redis-server), reopened to stand for a restart, a
 * second process or another replica.
 */
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ApprovalRecord, Decision } from '../../src/approvals/approval-record.js'
import type { ApprovalStore } from '../../src/approvals/approval-store.js'
import { createRedisApprovalStore } from '../../src/approvals/redis-approval-store.js'
import { createSqliteApprovalStore } from '../../src/approvals/sqlite-approval-store.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis, type RedisServer } from '../helpers/redis-server.js'
import { approvalFixture } from './approval-fixture.js'

interface Factory { name: string, make: (t: Test) => Promise<{ store: ApprovalStore, reopen: () => Promise<ApprovalStore> }> }

const factories: Factory[] = [{
  name: 'sqlite',
  async make (t) {
    const dir = mkdtempSync(join(tmpdir(), 'pap-approvals-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    const open = async (): Promise<ApprovalStore> => {
      const store = await createSqliteApprovalStore(join(dir, 'webhooks.db'))
      t.teardown(() => store.close())
      return store
    }
    return { store: await open(), reopen: open }
  },
}, {
  name: 'redis',
  async make (t) {
    const redis = await startRedis(t)
    const open = async (): Promise<ApprovalStore> => {
      const store = await createRedisApprovalStore({ redis: redisConnection(t, redis.url, 'test:'), log: captureLogger().logger })
      t.teardown(() => store.close())
      return store
    }
    return { store: await open(), reopen: open }
  },
}]

const approve = (by: string, atMs = 2_000): Decision => ({ status: 'approved', by, byCaller: 'cli', reason: null, atMs, seal: `decision-${by}` })
const decision = (status: Decision['status'], atMs: number): Decision => ({ status, by: status === 'expired' ? null : 'ann', byCaller: null, reason: null, atMs, seal: `decision-${status}` })

for (const factory of factories) {
  t.test(`${factory.name}: a held request is kept byte for byte and found by id and by its reference's key after a restart`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const approval = approvalFixture({ body: Buffer.from([0x7b, 0x7d, 0xff]) })
    t.equal(await store.byKey('k1'), null, 'no approval for the key yet')
    await store.create(approval)
    t.same(await store.byKey('k1'), approval, 'found by the store that created it')
    t.equal(await store.byKey('k2'), null)
    const again = await reopen()
    t.same(await again.get('apr_1'), approval)
    t.same(await again.byKey('k1'), approval)
    t.equal(await again.byKey('k2'), null)
    t.equal(await again.get('apr_2'), null)
    t.same((await again.list('pending')).map((a) => a.id), ['apr_1'])
    t.same(await again.list('approved'), [])
  })

  t.test(`${factory.name}: pages give pending approvals oldest first and decided ones newest first, with the totals, after a restart too`, async (t) => {
    const { store, reopen } = await factory.make(t)
    for (let i = 0; i < 7; i++) await store.create(approvalFixture({ id: `apr_${i}`, key: `k${i}`, createdAtMs: 1_000 + i }))
    for (const [id, status] of [['apr_1', 'approved'], ['apr_4', 'rejected'], ['apr_5', 'expired']] as const) {
      t.equal((await store.decide(id, decision(status, 2_000), 2_000)).kind, 'decided')
    }
    const ids = (page: { approvals: ApprovalRecord[], total: number }): [string[], number] => [page.approvals.map((a) => a.id), page.total]
    // The second reading after the loop's first look (Redis builds its indexes there) and a restart.
    for (const s of [store, await store.toSettle().then(reopen)]) {
      t.same(ids(await s.page({ status: 'pending', offset: 0, limit: 3 })), [['apr_0', 'apr_2', 'apr_3'], 4])
      t.same(ids(await s.page({ status: 'pending', offset: 3, limit: 3 })), [['apr_6'], 4])
      t.same(ids(await s.page({ status: 'pending', offset: 9, limit: 3 })), [[], 4])
      t.same(ids(await s.page({ status: 'decided', offset: 0, limit: 2 })), [['apr_5', 'apr_4'], 3])
      t.same(ids(await s.page({ status: 'decided', offset: 2, limit: 2 })), [['apr_1'], 3])
    }
    const [page] = (await store.page({ status: 'decided', offset: 0, limit: 1 })).approvals
    t.same(page, await store.get('apr_5'), 'a page holds whole records, as get does')
  })

  t.test(`${factory.name}: of two decisions at once one wins and the other finds it decided`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const other = await reopen()
    await store.create(approvalFixture())
    const outcomes = await Promise.all([store.decide('apr_1', approve('ann'), 2_000), other.decide('apr_1', { ...approve('bob'), status: 'rejected' }, 2_000)])
    t.same(outcomes.map((o) => o.kind).sort(), ['already', 'decided'])
    const decided = outcomes.find((o) => o.kind === 'decided')
    const stored = await store.get('apr_1')
    t.equal(stored?.status, decided?.kind === 'decided' ? decided.approval.status : 'none')
    t.equal((await store.decide('apr_1', approve('carl'), 3_000)).kind, 'already')
    t.equal((await store.decide('apr_9', approve('carl'), 3_000)).kind, 'missing')
  })

  t.test(`${factory.name}: past its time a pending approval cannot be approved, and is due to expire`, async (t) => {
    const { store } = await factory.make(t)
    await store.create(approvalFixture({ expiresAtMs: 5_000 }))
    t.same((await store.dueToExpire(4_999)).map((a) => a.id), [])
    const late = await store.decide('apr_1', approve('ann', 5_000), 5_000)
    t.equal(late.kind, 'already')
    t.equal(late.kind === 'already' ? late.approval.status : '', 'expired')
    t.same((await store.dueToExpire(5_000)).map((a) => a.id), ['apr_1'])
    t.equal((await store.decide('apr_1', { status: 'expired', by: null, byCaller: null, reason: null, atMs: 5_000, seal: 'decision-expired' }, 5_000)).kind, 'decided')
    t.equal((await store.get('apr_1'))?.status, 'expired')
  })

  t.test(`${factory.name}: an approved request's forwarding moves none -> sending -> answered once`, async (t) => {
    const { store, reopen } = await factory.make(t)
    await store.create(approvalFixture())
    t.same(await store.toSettle(), [])
    await store.decide('apr_1', approve('ann'), 2_000)
    t.same((await store.toSettle()).map((a) => a.id), ['apr_1'])
    t.equal(await store.moveForward('apr_1', 'none', 'sending', 'seal-sending'), true)
    t.equal(await store.moveForward('apr_1', 'none', 'sending', 'seal-sending'), false)
    const again = await reopen()
    t.equal((await again.toSettle())[0]?.forward, 'sending')
    t.equal(await again.moveForward('apr_1', 'sending', 'answered', 'seal-answered'), true)
    t.same(await again.toSettle(), [])
    const stored = await again.get('apr_1')
    t.same([stored?.holdSeal, stored?.decisionSeal, stored?.forward, stored?.forwardSeal], ['hold-seal', 'decision-ann', 'answered', 'seal-answered'], 'each step\'s seal is kept with the record, across a reopen')
  })

  t.test(`${factory.name}: the loop's three reads follow every step of a record, in the order of creation`, async (t) => {
    const { store, reopen } = await factory.make(t)
    // Created in one order, due in the other: the reads keep the order of creation.
    await store.create(approvalFixture({ id: 'apr_a', key: 'ka', createdAtMs: 1_000, expiresAtMs: 5_000 }))
    await store.create(approvalFixture({ id: 'apr_b', key: 'kb', createdAtMs: 2_000, expiresAtMs: 4_000 }))
    await store.create(approvalFixture({ id: 'apr_c', key: 'kc', createdAtMs: 3_000, expiresAtMs: 100_000 }))
    const reads = async (s: ApprovalStore, nowMs: number): Promise<{ due: string[], settle: string[], pending: string[] }> => ({
      due: (await s.dueToExpire(nowMs)).map((a) => a.id),
      settle: (await s.toSettle()).map((a) => `${a.id}:${a.status}:${a.forward}`),
      pending: (await s.list('pending')).map((a) => a.id),
    })
    t.same(await reads(store, 3_999), { due: [], settle: [], pending: ['apr_a', 'apr_b', 'apr_c'] }, 'created')
    t.same(await reads(store, 5_000), { due: ['apr_a', 'apr_b'], settle: [], pending: ['apr_a', 'apr_b', 'apr_c'] }, 'two due')
    t.equal((await store.decide('apr_b', decision('expired', 5_000), 5_000)).kind, 'decided')
    t.same(await reads(store, 5_000), { due: ['apr_a'], settle: ['apr_b:expired:none'], pending: ['apr_a', 'apr_c'] }, 'one expired')
    t.equal((await store.decide('apr_a', decision('rejected', 4_500), 4_500)).kind, 'decided')
    t.equal((await store.decide('apr_c', decision('approved', 4_600), 4_600)).kind, 'decided')
    t.same(await reads(store, 5_000), { due: [], settle: ['apr_a:rejected:none', 'apr_b:expired:none', 'apr_c:approved:none'], pending: [] }, 'all decided')
    t.equal(await store.moveForward('apr_c', 'none', 'sending', 'seal-sending'), true)
    t.equal(await store.moveForward('apr_b', 'none', 'answered', 'seal-answered'), true)
    t.same(await reads(store, 5_000), { due: [], settle: ['apr_a:rejected:none', 'apr_c:approved:sending'], pending: [] }, 'one sending, one given back')
    t.equal(await store.moveForward('apr_c', 'sending', 'answered', 'seal-answered'), true)
    t.equal(await store.moveForward('apr_a', 'none', 'answered', 'seal-answered'), true)
    const again = await reopen()
    t.same(await reads(again, 200_000), { due: [], settle: [], pending: [] }, 'all settled, also for another process')
    t.equal(await again.removeSettledBefore(10_000), 3)
    t.same(await again.list(), [])
    await again.create(approvalFixture({ id: 'apr_d', key: 'kd', createdAtMs: 6_000, expiresAtMs: 7_000 }))
    t.same(await reads(store, 7_000), { due: ['apr_d'], settle: [], pending: ['apr_d'] }, 'created after the removal, by another process')
  })
}

for (const factory of factories) {
  t.test(`${factory.name}: retention removes settled approvals decided before the time given, never pending or unanswered ones`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const settled = (id: string, key: string, status: ApprovalRecord['status'], decidedAtMs: number | null, forward: ApprovalRecord['forward'] = 'answered'): ApprovalRecord =>
      approvalFixture({ id, key, status, decidedAtMs, forward, createdAtMs: 1_000, decidedBy: decidedAtMs === null ? null : 'ann' })
    const records = [
      settled('apr_rejected', 'k1', 'rejected', 2_000),
      settled('apr_expired', 'k2', 'expired', 2_000),
      settled('apr_answered', 'k3', 'approved', 2_000),
      settled('apr_sending', 'k4', 'approved', 2_000, 'sending'),
      settled('apr_unforwarded', 'k5', 'approved', 2_000, 'none'),
      settled('apr_recent', 'k6', 'rejected', 6_000),
      settled('apr_pending', 'k7', 'pending', null, 'none'),
      // Held again after its reference's first approval was settled: the key now finds this one.
      { ...settled('apr_again', 'k1', 'pending', null, 'none'), createdAtMs: 3_000 },
    ]
    for (const record of records) await store.create(record)
    t.equal(await store.removeSettledBefore(5_000), 3)
    const again = await reopen()
    t.same((await again.list()).map((a) => a.id).sort(), ['apr_again', 'apr_pending', 'apr_recent', 'apr_sending', 'apr_unforwarded'])
    t.equal(await again.get('apr_rejected'), null)
    t.equal((await again.byKey('k1'))?.id, 'apr_again', "the reference's later approval still found by its key")
    t.equal(await again.byKey('k2'), null)
    t.equal(await again.removeSettledBefore(5_000), 0, 'nothing more to remove')
    t.equal(await again.removeSettledBefore(6_001), 1, 'the recent one once its time has come')
  })
}

function adminOf (t: Test, redis: RedisServer): Redis {
  const admin = new Redis(redis.url)
  admin.on('error', () => {})
  t.teardown(() => admin.disconnect())
  return admin
}

/** Calls of each command so far, as the server counts them (`INFO commandstats`). */
async function commandCalls (admin: Redis): Promise<Map<string, number>> {
  const stats = await admin.info('commandstats')
  return new Map([...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [String(m[1]), Number(m[2])]))
}

t.test('redis: the loop\'s reads touch the records they return, not every settled one kept for its retention', async (t) => {
  const redis = await startRedis(t)
  const store = await createRedisApprovalStore({ redis: redisConnection(t, redis.url, 'test:'), log: captureLogger().logger })
  t.teardown(() => store.close())
  const settled = Array.from({ length: 2_000 }, (_, i) => approvalFixture({ id: `apr_s${i}`, key: `ks${i}`, createdAtMs: 1_000 + i, status: 'approved', decidedAtMs: 9_000, decisionSeal: 'decision', forward: 'answered', forwardSeal: 'seal-answered' }))
  await Promise.all(settled.map(async (a) => { await store.create(a) }))
  await store.create(approvalFixture({ id: 'apr_p', key: 'kp', createdAtMs: 5_000, expiresAtMs: 100_000 }))
  const admin = adminOf(t, redis)
  // The worker's look: what is due, what is to settle, how many wait (approval-worker.ts).
  const look = async (): Promise<void> => {
    t.same(await store.dueToExpire(10_000), [])
    t.same(await store.toSettle(), [])
    t.equal((await store.page({ status: 'pending', offset: 0, limit: 0 })).total, 1)
  }
  // The first look may index what is there; the one measured is any look after it.
  await look()
  const before = await commandCalls(admin)
  await look()
  const after = await commandCalls(admin)
  const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0)
  const sum = (calls: Map<string, number>): number => [...calls.values()].reduce((a, b) => a + b, 0)
  // Less the INFO that took the first count.
  const commands = sum(after) - sum(before) - 1
  t.equal(delta('hgetall'), 0, 'records read by one look: none, when none is due or to settle (the pending one is counted, not read)')
  t.ok(commands <= 6, `commands run by one look: ${commands}`)
})

/** A record as the store wrote it before it kept indexes: the hash, the key's index and the ids, nothing more. */
async function createAsBefore (admin: Redis, approval: ApprovalRecord): Promise<void> {
  const { body, status, forward, ...rest } = approval
  await admin.multi()
    .hset(`test:apr:${approval.id}`, { record: JSON.stringify(rest), body, status, forward, expiresAt: approval.expiresAtMs })
    .set(`test:apr:key:${approval.key}`, approval.id)
    .zadd('test:apr:ids', approval.createdAtMs, approval.id)
    .exec()
}

t.test('redis: approvals written before the indexes existed are indexed at the loop\'s first read, by two replicas at once', async (t) => {
  const redis = await startRedis(t)
  const admin = adminOf(t, redis)
  const decided = (id: string, createdAtMs: number, status: ApprovalRecord['status'], forward: ApprovalRecord['forward']): ApprovalRecord =>
    approvalFixture({ id, key: `k-${id}`, createdAtMs, status, forward, decidedBy: 'ann', decidedAtMs: 6_000, decisionSeal: status === 'pending' ? null : 'decision' })
  const records = [
    decided('apr_done', 500, 'approved', 'answered'),
    approvalFixture({ id: 'apr_due', key: 'k-due', createdAtMs: 1_000, expiresAtMs: 5_000 }),
    approvalFixture({ id: 'apr_later', key: 'k-later', createdAtMs: 2_000, expiresAtMs: 100_000 }),
    decided('apr_approved', 3_000, 'approved', 'sending'),
    decided('apr_rejected', 4_000, 'rejected', 'none'),
  ]
  for (const record of records) await createAsBefore(admin, record)
  const open = async (): Promise<ApprovalStore> => {
    const store = await createRedisApprovalStore({ redis: redisConnection(t, redis.url, 'test:'), log: captureLogger().logger })
    t.teardown(() => store.close())
    return store
  }
  const [a, b] = [await open(), await open()]
  const keys = async (): Promise<string[]> => (await admin.keys('*')).sort()
  const written = await keys()
  t.same((await a.list('pending')).map((r) => r.id), ['apr_due', 'apr_later'], 'pending ones listed before the indexes are built')
  t.same(await keys(), written, 'opening and listing write nothing (check, and the approvals commands, beside a sidecar of the version before)')

  const due = await Promise.all([a.dueToExpire(5_000), b.dueToExpire(5_000)])
  t.same(due.map((d) => d.map((r) => r.id)), [['apr_due'], ['apr_due']])
  t.equal(await admin.get('test:apr:schema'), '3', 'built once for all replicas')
  t.same(await admin.zrange('test:apr:pending', '0', '-1'), ['apr_due', 'apr_later'])
  t.same(await admin.zrange('test:apr:expiring', '0', '-1', 'WITHSCORES'), ['apr_due', '5000', 'apr_later', '100000'], 'the pending ones by their expiry')
  t.same(await admin.zrange('test:apr:unsettled', '0', '-1'), ['apr_approved', 'apr_rejected'])
  t.same((await b.toSettle()).map((r) => r.id), ['apr_approved', 'apr_rejected'])
  t.same((await b.list('pending')).map((r) => r.id), ['apr_due', 'apr_later'])

  t.equal((await b.decide('apr_due', decision('expired', 5_000), 5_000)).kind, 'decided')
  const c = await open()
  t.same((await c.toSettle()).map((r) => r.id), ['apr_due', 'apr_approved', 'apr_rejected'], 'a store opened after the build reads the indexes')
  t.same((await c.list('pending')).map((r) => r.id), ['apr_later'])
  t.same((await c.dueToExpire(200_000)).map((r) => r.id), ['apr_later'])

  // A replica of the version before, still running, holds one and settles and removes another: the indexes miss the one, keep the other.
  await createAsBefore(admin, approvalFixture({ id: 'apr_old', key: 'k-old', createdAtMs: 7_000, expiresAtMs: 8_000 }))
  await admin.hset('test:apr:apr_rejected', 'forward', 'answered')
  await admin.multi().del('test:apr:apr_rejected').zrem('test:apr:ids', 'apr_rejected').exec()
  t.same((await c.dueToExpire(9_000)).map((r) => r.id), [], 'not seen')
  // docs/approvals.md: once it has stopped, the marker deleted and a sidecar restarted.
  await admin.del('test:apr:schema')
  const d = await open()
  t.same((await d.dueToExpire(9_000)).map((r) => r.id), ['apr_old'], 'seen once built again')
  t.same(await admin.zrange('test:apr:unsettled', '0', '-1'), ['apr_due', 'apr_approved'], 'the removed one gone from the index')
  t.equal(await admin.get('test:apr:schema'), '3')
})
