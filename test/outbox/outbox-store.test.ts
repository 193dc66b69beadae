/**
 * One suite for the OutboxStore contract (SPEC §10), run against each implementation's factory, the
 * way test/state runs its suite over memory and Redis. The SQLite store runs on a real file.
 */
import t, { type Test } from 'tap'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { WebhookStoreUnavailableError } from '../../src/errors.js'
import type { NewEvent, OutboxStore } from '../../src/outbox/outbox-store.js'
import { createSqliteStore } from '../../src/outbox/sqlite-store.js'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { createRedisOutboxStore } from '../../src/outbox/redis-store.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/temp-dir.js'

// Kill, restart and flood cycles: a loaded 2-core machine needs more than tap's 60 s for the file.
t.setTimeout(300_000)

interface Bounds { maxEvents?: number, maxBytes?: number, retentionMs?: number, orderMaxWaitMs?: number }
interface Made { store: OutboxStore, reopen: () => Promise<OutboxStore> }
interface Factory {
  name: string
  /** Whether leases are the process's own, void when another store opens the data (one process owns an SQLite file), or shared by replicas. */
  voidsLeasesOnOpen: boolean
  /** A store; `reopen` gives another one on the same data (a restart, or another replica). */
  make: (t: Test, bounds?: Bounds) => Promise<Made>
}

const factories: Factory[] = [{
  name: 'sqlite',
  voidsLeasesOnOpen: true,
  async make (t, bounds = {}) {
    const path = join(tempDir(t), 'webhooks.db')
    const open = async (): Promise<OutboxStore> => {
      const store = await createSqliteStore({ path, log: captureLogger().logger, retentionMs: bounds.retentionMs ?? 86_400_000, maxEvents: bounds.maxEvents ?? 1000, maxBytes: bounds.maxBytes ?? 1 << 20, orderMaxWaitMs: bounds.orderMaxWaitMs ?? 86_400_000 })
      t.teardown(() => store.close())
      return store
    }
    return { store: await open(), reopen: open }
  },
}, {
  name: 'redis',
  voidsLeasesOnOpen: false,
  async make (t, bounds = {}) {
    const redis = await startRedis(t)
    const { logger } = captureLogger()
    const open = async (): Promise<OutboxStore> => {
      const store = createRedisOutboxStore({ redis: redisConnection(t, redis.url, 'test:'), keys: '', log: logger, retentionMs: bounds.retentionMs ?? 86_400_000, maxEvents: bounds.maxEvents ?? 1000, maxBytes: bounds.maxBytes ?? 1 << 20, orderMaxWaitMs: bounds.orderMaxWaitMs ?? 86_400_000 })
      t.teardown(() => store.close())
      await eventually(() => store.ready(), { what: 'Redis store ready' })
      return store
    }
    return { store: await open(), reopen: open }
  },
}]

const T0 = Date.UTC(2026, 10, 26, 12, 0, 0)
let n = 0
const event = (overrides: Partial<NewEvent> = {}): NewEvent => {
  const i = n++
  return { key: `id:e${i}`, bodySha256: `h${i}`, orderKey: null, body: Buffer.from(`{"n":${i}}`), headers: [['content-type', 'application/json']], source: '203.0.113.7', receivedAtMs: T0 + i, ...overrides }
}

for (const factory of factories) {
  t.test(`${factory.name} store`, async (t) => {
    t.test('an event is stored and read back byte for byte, and survives a reopen', async (t) => {
      const { store, reopen } = await factory.make(t)
      const body = Buffer.from([0xff, 0x00, 0x7b, 0xfe])
      const outcome = await store.intake(event({ body, headers: [['content-type', 'application/octet-stream'], ['x-a', '1'], ['x-a', '2']] }))
      t.equal(outcome.kind, 'stored')
      await store.close()
      const again = await reopen()
      const shown = await again.show(outcome.id)
      t.ok(shown?.event.body.equals(body))
      t.same(shown?.event.headers, [['content-type', 'application/octet-stream'], ['x-a', '1'], ['x-a', '2']])
      t.equal(shown?.event.status, 'pending')
      t.equal(shown?.event.source, '203.0.113.7')
      const [listed] = await again.list({})
      const expected = Object.fromEntries(Object.entries(shown?.event ?? {}).filter(([name]) => name !== 'body' && name !== 'headers'))
      t.same(listed, { ...expected, bytes: 4, attemptsTotal: 0, waitingBehind: null }, 'a listing has the body\'s length, not the body or headers')
    })

    t.test('duplicates within the retention get the first id; after it, the key is new again; another body is a conflict', async (t) => {
      const { store } = await factory.make(t, { retentionMs: 1000 })
      const first = await store.intake(event({ key: 'id:dup', bodySha256: 'a', receivedAtMs: T0 }))
      t.same(await store.intake(event({ key: 'id:dup', bodySha256: 'a', receivedAtMs: T0 + 999 })), { kind: 'duplicate', id: first.id })
      const conflict = await store.intake(event({ key: 'id:dup', bodySha256: 'b', receivedAtMs: T0 + 10 }))
      t.same(conflict, { kind: 'conflict', id: conflict.id, conflictWith: first.id })
      t.same(await store.intake(event({ key: 'id:dup', bodySha256: 'b', receivedAtMs: T0 + 20 })), { kind: 'duplicate', id: conflict.id }, 'the conflicting body resent')
      t.equal((await store.intake(event({ key: 'id:dup', bodySha256: 'a', receivedAtMs: T0 + 5000 }))).kind, 'stored', 'past the retention')
    })

    t.test('copies submitted together are stored once, and every copy gets the one id', async (t) => {
      const { store } = await factory.make(t)
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => store.intake(event({ key: 'id:same', bodySha256: 'same' }))))
      t.equal(new Set(outcomes.map((o) => o.id)).size, 1)
      t.equal(outcomes.filter((o) => o.kind === 'stored').length, 1)
      t.equal((await store.list({})).length, 1)
    })

    t.test('past the bound of events or bytes an intake is refused with WebhookStoreUnavailableError; nothing is dropped', async (t) => {
      const byCount = await factory.make(t, { maxEvents: 2 })
      await byCount.store.intake(event())
      await byCount.store.intake(event())
      await t.rejects(byCount.store.intake(event()), WebhookStoreUnavailableError)
      t.equal((await byCount.store.list({})).length, 2)
      await byCount.store.close()
      await t.rejects((await byCount.reopen()).intake(event()), WebhookStoreUnavailableError, 'the bound holds after a reopen')
      const byBytes = await factory.make(t, { maxBytes: 100 })
      await byBytes.store.intake(event({ body: Buffer.alloc(60) }))
      await t.rejects(byBytes.store.intake(event({ body: Buffer.alloc(60) })), WebhookStoreUnavailableError)
      t.equal((await byBytes.store.intake(event({ body: Buffer.alloc(30) }))).kind, 'stored', 'a smaller one still fits')
    })

    t.test('a full store evicts delivered events, oldest first, to make room: their keys leave the duplicate window; pending and failed ones never', async (t) => {
      const { store, reopen } = await factory.make(t, { maxEvents: 4 })
      const deliver = async (id: string, status: 'delivered' | 'failed'): Promise<void> => {
        await store.claimDue(T0 + 1_000_000, 10, 60_000)
        await store.settle(id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status })
      }
      const old = await store.intake(event({ key: 'id:old', bodySha256: 'old', receivedAtMs: T0 }))
      const newer = await store.intake(event({ receivedAtMs: T0 + 1 }))
      const failed = await store.intake(event({ receivedAtMs: T0 - 10 }))
      const pending = await store.intake(event({ receivedAtMs: T0 - 20 }))
      await deliver(newer.id, 'delivered')
      await deliver(old.id, 'delivered')
      await deliver(failed.id, 'failed')
      await store.release(pending.id)
      t.same(await store.stats(), { pending: 1, failed: 1, oldestPendingReceivedAtMs: T0 - 20, full: false }, 'two delivered events in a store at its bound: not full')
      const first = await store.intake(event({ receivedAtMs: T0 + 2 }))
      t.same(first, { kind: 'stored', id: first.id, evicted: 1 }, 'one delivered event removed for the new one')
      t.equal(await store.show(old.id), null, 'the oldest delivered one')
      t.not(await store.show(newer.id), null, 'not the newer one')
      const resent = await store.intake(event({ key: 'id:old', bodySha256: 'old', receivedAtMs: T0 + 3 }))
      t.same(resent, { kind: 'stored', id: resent.id, evicted: 1 }, 'the evicted event\'s key no longer catches its duplicate; the next delivered one makes room')
      t.equal(await store.show(newer.id), null)
      t.same(await store.stats(), { pending: 3, failed: 1, oldestPendingReceivedAtMs: T0 - 20, full: true }, 'pending and failed alone fill the store')
      await t.rejects(store.intake(event({ receivedAtMs: T0 + 4 })), WebhookStoreUnavailableError, 'then new events are refused')
      t.same((await store.list({})).map((e) => e.id).sort(), [failed.id, pending.id, first.id, resent.id].sort(), 'nothing pending or failed was removed')
      await store.close()
      const again = await reopen()
      await t.rejects(again.intake(event({ receivedAtMs: T0 + 5 })), WebhookStoreUnavailableError, 'still full after a reopen')
      t.equal((await again.stats()).full, true)
      await again.claimDue(T0 + 1_000_000, 10, 60_000)
      await again.settle(pending.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.equal((await again.stats()).full, false, 'a delivery makes room')
      const last = await again.intake(event({ receivedAtMs: T0 + 6 }))
      t.same(last, { kind: 'stored', id: last.id, evicted: 1 }, 'stored, in place of the event just delivered')
      t.equal(await again.show(pending.id), null)
    })

    t.test('past the bytes bound, delivered bodies are evicted until the new one fits; a body larger than what pending and failed leave is refused', async (t) => {
      const { store } = await factory.make(t, { maxBytes: 1000 })
      const delivered: string[] = []
      for (let i = 0; i < 5; i++) {
        const e = await store.intake(event({ body: Buffer.alloc(150), receivedAtMs: T0 + i }))
        await store.claimDue(T0 + 1_000_000, 10, 60_000)
        await store.settle(e.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
        delivered.push(e.id)
      }
      const held = await store.intake(event({ body: Buffer.alloc(200), receivedAtMs: T0 + 10 }))
      const large = await store.intake(event({ body: Buffer.alloc(349), receivedAtMs: T0 + 11 }))
      t.same(large, { kind: 'stored', id: large.id, evicted: 2 }, '950 + 349 bytes: the two oldest delivered bodies (300 bytes) make room')
      t.same(await Promise.all(delivered.map(async (id) => (await store.show(id)) !== null)), [false, false, true, true, true])
      await t.rejects(store.intake(event({ body: Buffer.alloc(452), receivedAtMs: T0 + 12 })), WebhookStoreUnavailableError, '549 held bytes + 452 > 1000')
      t.same(await Promise.all(delivered.map(async (id) => (await store.show(id)) !== null)), [false, false, true, true, true], 'a refusal removes nothing')
      t.ok(held.id)
    })

    t.test('claimDue hands out due events once, the head of each order key only, until settled or released', async (t) => {
      const { store } = await factory.make(t)
      const a1 = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 }))
      const a2 = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 }))
      const b1 = await store.intake(event({ orderKey: 'pay_B', receivedAtMs: T0 }))
      const c = await store.intake(event({ receivedAtMs: T0 }))
      const later = await store.intake(event({ receivedAtMs: T0 + 1_000_000 }))
      const now = T0 + 1000
      const claimed = await store.claimDue(now, 10, 60_000)
      t.same(claimed.map((e) => e.id).sort(), [a1.id, b1.id, c.id].sort(), 'heads of each key and the unordered event; not the future one')
      t.same(await store.claimDue(now, 10, 60_000), [], 'leased events are not handed out twice')
      await store.release(b1.id)
      t.same((await store.claimDue(now, 10, 60_000)).map((e) => e.id), [b1.id], 'a released event is claimable again, not counted as an attempt')
      await store.settle(a1.id, { atMs: now, status: 500, error: null, durationMs: 3 }, { status: 'pending', nextAttemptAtMs: now + 5000 })
      t.same(await store.claimDue(now, 10, 60_000), [], 'pay_A n=2 waits behind n=1, retrying')
      t.same((await store.list({ status: 'pending' })).map((e) => [e.id, e.waitingBehind]), [[a1.id, null], [a2.id, a1.id], [b1.id, null], [c.id, null], [later.id, null]], 'a listing names the event each waits behind')
      t.equal((await store.show(a2.id))?.waitingBehind, a1.id, 'and so does show')
      t.same((await store.claimDue(now + 5000, 10, 60_000)).map((e) => e.id), [a1.id], 'n=1 again when its retry is due')
      await store.settle(a1.id, { atMs: now, status: 200, error: null, durationMs: 3 }, { status: 'delivered' })
      t.same((await store.claimDue(now, 10, 60_000)).map((e) => e.id), [a2.id], 'n=2 once n=1 is delivered')
      t.same((await store.claimDue(now + 120_000, 10, 60_000)).map((e) => e.id).sort(), [a2.id, b1.id, c.id].sort(), 'expired leases are taken over')
      t.same(await store.claimDue(now + 120_000, 10, 60_000), [], 'and leased again')
      const shown = await store.show(a1.id)
      t.same(shown?.attempts.map((a) => a.status), [500, 200])
      t.equal(shown?.event.attempts, 2)
      t.ok(later.id)
    })

    t.test('a failed head lets its key\'s next event through; a replayed older event is the head again', async (t) => {
      const { store } = await factory.make(t)
      const a1 = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 }))
      const a2 = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 + 1 }))
      const a3 = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 + 2 }))
      t.same((await store.claimDue(T0 + 10, 10, 60_000)).map((e) => e.id), [a1.id])
      await store.settle(a1.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'failed' })
      t.same((await store.claimDue(T0 + 10, 10, 60_000)).map((e) => e.id), [a2.id], 'the next one, once the head has failed for good')
      await store.settle(a2.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same(await store.replay({ ids: [a1.id] }, T0 + 20), [a1.id])
      t.same((await store.claimDue(T0 + 20, 10, 60_000)).map((e) => e.id), [a1.id], 'the replayed one first: it was received before a3')
      await store.settle(a1.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same((await store.claimDue(T0 + 20, 10, 60_000)).map((e) => e.id), [a3.id], 'then a3')
    })

    t.test('a later event waits behind a failing head for the order wait from its receipt, then is claimed out of order on its own schedule', async (t) => {
      const wait = 900_000
      const { store } = await factory.make(t, { orderMaxWaitMs: wait })
      const head = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 }))
      const second = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 + 1000 }))
      const third = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 + 2000 }))
      const claimed = await store.claimDue(T0, 10, 60_000)
      t.same(claimed.map((e) => [e.id, e.waitedBehind]), [[head.id, null]], 'the head, in order')
      await store.settle(head.id, { atMs: T0, status: 503, error: null, durationMs: 1 }, { status: 'pending', nextAttemptAtMs: T0 + 3_600_000 })
      t.same(await store.claimDue(T0 + 1000 + wait - 1, 10, 60_000), [], 'a millisecond before the second event\'s wait ends: nothing')
      const ahead = await store.claimDue(T0 + 1000 + wait, 10, 60_000)
      t.same(ahead.map((e) => [e.id, e.waitedBehind]), [[second.id, head.id]], 'the second, out of order, naming the head it goes ahead of; not the third, received a second later')
      await store.settle(second.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'pending', nextAttemptAtMs: T0 + 1000 + wait + 5000 })
      t.same((await store.claimDue(T0 + 2000 + wait, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[third.id, head.id]], 'the third when its own wait ends, while the second waits for its retry')
      await store.settle(third.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same((await store.claimDue(T0 + 1000 + wait + 5000, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[second.id, head.id]], 'the second on its own schedule')
      await store.settle(second.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same((await store.claimDue(T0 + 3_600_000, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[head.id, null]], 'the head, still the head, at its retry')
      const later = await store.intake(event({ orderKey: 'pay_A', receivedAtMs: T0 + 3_600_000 }))
      t.same(await store.claimDue(T0 + 3_600_000, 10, 60_000), [], 'an event received now waits behind the head in flight')
      await store.settle(head.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same((await store.claimDue(T0 + 3_600_000, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[later.id, null]], 'and is the head, in order, once the head is delivered')
    })

    t.test('a head replayed ahead of a pending one puts that one behind it, to wait the order wait from its own receipt', async (t) => {
      const wait = 900_000
      const { store } = await factory.make(t, { orderMaxWaitMs: wait })
      const first = await store.intake(event({ orderKey: 'pay_R', receivedAtMs: T0 }))
      await store.claimDue(T0, 10, 60_000)
      await store.settle(first.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'failed' })
      const next = await store.intake(event({ orderKey: 'pay_R', receivedAtMs: T0 + 10 }))
      t.same(await store.replay({ ids: [first.id] }, T0 + 20), [first.id])
      t.same((await store.claimDue(T0 + 20, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[first.id, null]], 'the replayed event is the head again; the other waits')
      await store.settle(first.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'pending', nextAttemptAtMs: T0 + 3_600_000 })
      t.same(await store.claimDue(T0 + 10 + wait - 1, 10, 60_000), [])
      t.same((await store.claimDue(T0 + 10 + wait, 10, 60_000)).map((e) => [e.id, e.waitedBehind]), [[next.id, first.id]], 'then goes ahead of it')
    })

    t.test('a thousand events behind a retried head wait; other keys and unordered events are claimed past them', async (t) => {
      const { store } = await factory.make(t, { maxEvents: 2000 })
      const head = await store.intake(event({ orderKey: 'pay_busy', receivedAtMs: T0 }))
      t.same((await store.claimDue(T0, 1, 60_000)).map((e) => e.id), [head.id])
      await store.settle(head.id, { atMs: T0, status: 503, error: null, durationMs: 1 }, { status: 'pending', nextAttemptAtMs: T0 + 3_600_000 })
      for (let i = 0; i < 1000; i++) await store.intake(event({ orderKey: 'pay_busy', receivedAtMs: T0 + 1 }))
      const other = await store.intake(event({ orderKey: 'pay_other', receivedAtMs: T0 + 2 }))
      const free = await store.intake(event({ receivedAtMs: T0 + 3 }))
      t.same((await store.claimDue(T0 + 10, 10, 60_000)).map((e) => e.id), [other.id, free.id])
      for (const id of [other.id, free.id]) await store.settle(id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.same((await store.claimDue(T0 + 3_600_000, 10, 60_000)).map((e) => e.id), [head.id], 'the head when its retry is due, and none behind it')
    })

    t.test('a killed process\'s leases are taken over: at once on reopen (SQLite) or when they end (Redis)', async (t) => {
      const { store, reopen } = await factory.make(t)
      const e = await store.intake(event({ receivedAtMs: T0 }))
      t.equal((await store.claimDue(T0 + 10, 10, 60_000)).length, 1)
      const again = await reopen()
      t.same((await again.claimDue(T0 + 10, 10, 60_000)).map((x) => x.id), factory.voidsLeasesOnOpen ? [e.id] : [], 'at once, or not yet')
      t.same((await again.claimDue(T0 + 60_011, 10, 60_000)).map((x) => x.id), [e.id], 'after the lease ends')
      await store.settle(e.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      t.equal((await again.show(e.id))?.event.status, factory.voidsLeasesOnOpen ? 'delivered' : 'pending', 'a lost lease\'s late answer does not settle another\'s lease (Redis)')
    })

    t.test('claims at once (from two replicas, or one SQLite store, which one process owns) never hand out one event twice', async (t) => {
      const { store, reopen } = await factory.make(t)
      const other = factory.voidsLeasesOnOpen ? store : await reopen()
      for (let i = 0; i < 100; i++) await store.intake(event({ receivedAtMs: T0 }))
      const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : other).claimDue(T0 + 10, 10, 60_000)))
      const ids = claims.flat().map((e) => e.id)
      t.equal(ids.length, 100, 'all claimed')
      t.equal(new Set(ids).size, 100, 'none twice')
    })

    t.test('replay puts events back to pending with a fresh schedule and the same id', async (t) => {
      const { store } = await factory.make(t)
      const failed = await store.intake(event({ receivedAtMs: T0 }))
      const delivered = await store.intake(event({ receivedAtMs: T0 }))
      const oldFailed = await store.intake(event({ receivedAtMs: T0 - 100_000 }))
      for (const [id, status] of [[failed.id, 'failed'], [delivered.id, 'delivered'], [oldFailed.id, 'failed']] as const) {
        await store.claimDue(T0 + 10, 10, 60_000)
        await store.settle(id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status })
      }
      t.same(await store.replay({ failedSinceMs: T0 - 1000 }, T0 + 50), [failed.id], 'failed since the time only')
      t.same(await store.replay({ ids: [delivered.id, 'msg_unknown'] }, T0 + 50), [delivered.id], 'by id; an unknown id is not replayed')
      const shown = await store.show(failed.id)
      t.equal(shown?.event.status, 'pending')
      t.equal(shown?.event.attempts, 0)
      t.equal(shown?.event.nextAttemptAtMs, T0 + 50)
      t.equal(shown?.attempts.length, 1, 'earlier attempts are kept')
      t.match((await store.list({})).find((e) => e.id === failed.id), { attempts: 0, attemptsTotal: 1 }, 'a listing counts them too, and this round\'s apart')
      t.same((await store.list({ status: 'failed' })).map((e) => e.id), [oldFailed.id])
    })

    t.test('retention removes delivered and failed events, never pending ones, and frees the bound', async (t) => {
      const { store } = await factory.make(t, { maxEvents: 3 })
      const delivered = await store.intake(event({ receivedAtMs: T0 }))
      const failed = await store.intake(event({ receivedAtMs: T0 }))
      const pending = await store.intake(event({ receivedAtMs: T0 }))
      await store.claimDue(T0 + 10, 10, 60_000)
      await store.settle(delivered.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
      await store.settle(failed.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'failed' })
      t.same(await store.stats(), { pending: 1, failed: 1, oldestPendingReceivedAtMs: T0, full: false })
      t.equal(await store.removeSettledBefore(T0 + 1), 2)
      t.same((await store.list({})).map((e) => e.id), [pending.id])
      t.equal((await store.intake(event())).kind, 'stored', 'room again')
    })

    t.test('replay, listing and retention take every event, past what one request to the store carries', async (t) => {
      const { store } = await factory.make(t, { maxEvents: 5000, maxBytes: 1 << 24 })
      const count = 1201
      const ids = new Set<string>()
      for (let i = 0; i < count; i += 200) {
        for (const stored of await Promise.all(Array.from({ length: Math.min(200, count - i) }, () => store.intake(event({ receivedAtMs: T0 }))))) ids.add(stored.id)
      }
      const settleAll = async (status: 'failed' | 'delivered'): Promise<void> => {
        const claimed = await store.claimDue(T0 + 10, count, 60_000)
        t.equal(claimed.length, count, `all ${count} claimed at once`)
        await Promise.all(claimed.map((e) => store.settle(e.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status })))
      }
      await settleAll('failed')
      t.same(new Set((await store.list({ status: 'failed', limit: count })).map((e) => e.id)), ids, 'listed, all of them')
      t.equal((await store.list({})).length, 1000, 'a listing stops at its limit')
      t.same(new Set(await store.replay({ failedSinceMs: T0 }, T0 + 5)), ids, 'replayed, all of them')
      t.equal((await store.stats()).pending, count)
      await settleAll('delivered')
      t.equal(await store.removeSettledBefore(T0 + 1), count, 'removed, all of them')
      t.same(await store.list({}), [])
    })
  })
}

t.test('sqlite: a delivered event replayed by a command (another store on the file) counts against the bounds again: a refusal recounts', async (t) => {
  const sqlite = factories.find((f) => f.name === 'sqlite')
  if (sqlite === undefined) throw new Error('no sqlite factory')
  const { store, reopen } = await sqlite.make(t, { maxEvents: 2 })
  const ids: string[] = []
  for (let i = 0; i < 2; i++) {
    const e = await store.intake(event({ receivedAtMs: T0 + i }))
    await store.claimDue(T0 + 10, 10, 60_000)
    await store.settle(e.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
    ids.push(e.id)
  }
  const command = await reopen()
  t.same(await command.replay({ ids }, T0 + 20), ids, 'both delivered events back to pending, from the command')
  t.equal((await store.stats()).full, false, 'the sidecar has not seen it yet')
  await t.rejects(store.intake(event({ receivedAtMs: T0 + 30 })), WebhookStoreUnavailableError, 'nothing delivered to evict: refused')
  t.same((await store.list({})).map((e) => e.status), ['pending', 'pending'], 'the replayed events were not removed')
  t.equal((await store.stats()).full, true, 'the refusal counted again: full')
})

t.test('sqlite: while another connection holds the file\'s write lock, intakes are refused (WebhookStoreUnavailableError) and the store is not ready; released, they are stored again', async (t) => {
  const path = join(tempDir(t), 'webhooks.db')
  const store = await createSqliteStore({ path, log: captureLogger().logger, deadlineMs: 300, retentionMs: 86_400_000, maxEvents: 100, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 })
  t.teardown(() => store.close())
  t.equal((await store.intake(event())).kind, 'stored')
  const other = await openDatabase(path)
  t.teardown(() => { if (other.open) other.close() })
  other.exec('BEGIN IMMEDIATE')
  await t.rejects(store.intake(event()), WebhookStoreUnavailableError, 'refused, not held while the lock is')
  t.notOk(store.ready(), 'not ready')
  other.exec('ROLLBACK')
  await eventually(async () => (await store.intake(event()).then((o) => o.kind, () => 'refused')) === 'stored', { what: 'intake stored again' })
  t.ok(store.ready(), 'ready again')
})

t.test('redis: a store written before delivered events were indexed gets the index at the first script, and evicts from it', async (t) => {
  const redis = await startRedis(t)
  const { logger } = captureLogger()
  const open = async (): Promise<OutboxStore> => {
    const store = createRedisOutboxStore({ redis: redisConnection(t, redis.url, 'old:'), keys: '', log: logger, retentionMs: 86_400_000, maxEvents: 2, maxBytes: 1 << 20, orderMaxWaitMs: 3_600_000 })
    t.teardown(() => store.close())
    await eventually(() => store.ready(), { what: 'Redis store ready' })
    return store
  }
  const store = await open()
  const delivered = await store.intake(event({ receivedAtMs: T0 }))
  const failed = await store.intake(event({ receivedAtMs: T0 + 1 }))
  await store.claimDue(T0 + 10, 10, 60_000)
  await store.settle(delivered.id, { atMs: T0, status: 200, error: null, durationMs: 1 }, { status: 'delivered' })
  await store.settle(failed.id, { atMs: T0, status: 500, error: null, durationMs: 1 }, { status: 'failed' })
  await store.close()
  const raw = new Redis(redis.url)
  t.teardown(() => raw.disconnect())
  t.equal(await raw.del('old:wh:delivered', 'old:wh:dbytes', 'old:wh:schema'), 3, 'the keys an earlier version did not write are gone')
  const again = await open()
  await eventually(async () => await raw.get('old:wh:schema') === '2', { what: 'the layout brought up to date on connection' })
  t.same(await raw.zrange('old:wh:delivered', '0', '-1'), [delivered.id], 'the delivered event indexed, not the failed one')
  t.equal(Number(await raw.get('old:wh:dbytes')), (await again.show(delivered.id))?.event.body.length)
  const next = await again.intake(event({ receivedAtMs: T0 + 2 }))
  t.same(next, { kind: 'stored', id: next.id, evicted: 1 })
  t.equal(await again.show(delivered.id), null)
})
