/**
 * One suite for the PaymentStore contract (SPEC §12), run over each implementation's factory on
 * real storage (an SQLite file on disk, a real redis-server), reopened to stand for a restart, a
 * second process or another replica.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PaymentRecord } from '../../src/payments/payment-record.js'
import type { PaymentStore } from '../../src/payments/payment-store.js'
import { createPaymentChase } from '../../src/payments/payment-chase.js'
import { createRedisPaymentStore } from '../../src/payments/redis-payment-store.js'
import { createSqlitePaymentStore } from '../../src/payments/sqlite-payment-store.js'
import { captureLogger } from '../helpers/harness.js'
import { redisConnection, startRedis } from '../helpers/redis-server.js'
import { paymentFixture, T0 } from './payment-fixture.js'

interface Factory { name: string, replicas: boolean, make: (t: Test) => Promise<{ store: PaymentStore, reopen: () => Promise<PaymentStore> }> }

const factories: Factory[] = [{
  name: 'sqlite',
  replicas: false,
  async make (t) {
    const dir = mkdtempSync(join(tmpdir(), 'pap-payments-'))
    t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
    const open = async (): Promise<PaymentStore> => {
      const store = await createSqlitePaymentStore(join(dir, 'webhooks.db'))
      t.teardown(() => store.close())
      return store
    }
    return { store: await open(), reopen: open }
  },
}, {
  name: 'redis',
  replicas: true,
  async make (t) {
    const redis = await startRedis(t)
    const open = async (): Promise<PaymentStore> => {
      const store = await createRedisPaymentStore({ redis: redisConnection(t, redis.url, 'test:'), log: captureLogger().logger })
      t.teardown(() => store.close())
      return store
    }
    return { store: await open(), reopen: open }
  },
}]

let n = 0
function fresh (overrides: Partial<PaymentRecord> = {}): PaymentRecord {
  n++
  return paymentFixture({ id: `pay_${String(n).padStart(22, '0')}`, key: `key-${n}`, externalReference: `ref-${n}`, createdAtMs: T0 + n, dueAtMs: null, ...overrides })
}

for (const factory of factories) {
  t.test(`${factory.name}: an intent is stored once per §8 key, found by id, key, reference and transaction id after a restart`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const record = fresh({ externalReference: 'order 42 ✓' })
    t.same(await store.create(record), { kind: 'created' })
    const again = await store.create({ ...fresh(), key: record.key })
    t.equal(again.kind, 'exists', 'a second intent for the key joins the first')
    t.same(again.kind === 'exists' ? again.record : null, record)
    const reopened = await reopen()
    t.same(await reopened.get(record.id), record)
    t.same(await reopened.byKey(record.key), record)
    t.same(await reopened.byReference('order 42 ✓', {}), record)
    t.equal(await reopened.byReference('order 42', {}), null)
    t.equal(await reopened.byTransactionId('tx-1'), null, 'no transaction id yet')
    const followed = await reopened.update({ ...record, state: 'pending', transactionId: 'tx-1' })
    t.equal(followed?.version, 2)
    t.match(await store.byTransactionId('tx-1'), { id: record.id, state: 'pending', version: 2 })
  })

  t.test(`${factory.name}: of two writers of one version, one writes and the other learns it came second`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const other = await reopen()
    const record = fresh()
    await store.create(record)
    const [a, b] = await Promise.all([store.update({ ...record, state: 'pending' }), other.update({ ...record, state: 'unknown' })])
    t.equal([a, b].filter((r) => r !== null).length, 1, 'one write')
    const stored = await store.get(record.id)
    t.equal(stored?.version, 2)
    t.equal(stored?.state, (a ?? b)?.state)
    t.equal(await store.update({ ...record, state: 'failed' }), null, 'an update of a version read before is refused')
    t.equal(await store.remove(record), false, 'and so is a removal')
    t.equal(await store.remove(stored as PaymentRecord), true)
    t.equal(await store.get(record.id), null)
    t.equal(await store.byKey(record.key), null, 'its key is free again')
    t.same(await store.create({ ...fresh(), key: record.key }), { kind: 'created' })
  })

  t.test(`${factory.name}: a reference is looked up per caller and environment, the most recent first`, async (t) => {
    const { store } = await factory.make(t)
    const a = fresh({ externalReference: 'inv-7', caller: 'agent-a', environment: 'sandbox' })
    const b = fresh({ externalReference: 'inv-7', caller: 'agent-b', environment: 'sandbox' })
    const c = fresh({ externalReference: 'inv-7', caller: 'agent-a', environment: 'production' })
    for (const r of [a, b, c]) await store.create(r)
    t.equal((await store.byReference('inv-7', {}))?.id, c.id, 'the most recent of anyone')
    t.equal((await store.byReference('inv-7', { caller: 'agent-a' }))?.id, c.id)
    t.equal((await store.byReference('inv-7', { caller: 'agent-a', environment: 'sandbox' }))?.id, a.id)
    t.equal((await store.byReference('inv-7', { caller: 'agent-b' }))?.id, b.id)
    t.equal(await store.byReference('inv-7', { caller: 'agent-c' }), null)
  })

  t.test(`${factory.name}: due records are leased earliest first, one holder at a time, until updated, released or the lease ends`, async (t) => {
    const { store, reopen } = await factory.make(t)
    // With Redis a second replica; the embedded store has one sidecar, whose leases are its own.
    const other = factory.replicas ? await reopen() : store
    const late = fresh({ dueAtMs: T0 + 5_000 })
    const now = fresh({ dueAtMs: 0 })
    const soon = fresh({ dueAtMs: T0 + 1_000 })
    const never = fresh({ dueAtMs: null })
    for (const r of [late, now, soon, never]) await store.create(r)
    const ids = (list: PaymentRecord[]): string[] => list.map((r) => r.id)
    const leased = await store.claimDue(T0 + 2_000, 10, 30_000)
    t.same(ids(leased), [now.id, soon.id], 'due at T0 + 2 s, earliest first')
    t.same(await store.claimDue(T0 + 2_000, 10, 30_000), [], 'leased: not handed out again')
    t.same(await other.claimDue(T0 + 2_000, 10, 30_000), [], 'nor to another holder')
    await store.update({ ...(leased[0] as PaymentRecord), dueAtMs: T0 + 3_000 })
    t.same(ids(await other.claimDue(T0 + 3_000, 10, 30_000)), [now.id], 'the holder\'s update ended its lease, at its new due time')
    await store.release(soon.id)
    t.same(ids(await other.claimDue(T0 + 3_000, 10, 30_000)), [soon.id], 'released: due again')
    t.same(ids(await store.claimDue(T0 + 40_000, 10, 30_000)), [soon.id, now.id, late.id], 'leases end on their own (a holder that died)')
  })

  t.test(`${factory.name}: an update by another writer while a record is leased keeps it out of the due set until the lease ends`, async (t) => {
    const { store, reopen } = await factory.make(t)
    const record = fresh({ dueAtMs: 0 })
    await store.create(record)
    const [leased] = await store.claimDue(T0, 1, 30_000)
    const writer = factory.replicas ? await reopen() : store
    const changed = await writer.update({ ...(leased as PaymentRecord), lookupNow: true, dueAtMs: 0 })
    t.ok(changed !== null)
    if (factory.replicas) t.same(await writer.claimDue(T0 + 1, 10, 30_000), [], 'not handed to a second holder while the first one looks it up')
    await store.release(record.id)
    t.same((await writer.claimDue(T0 + 2, 10, 30_000)).map((r) => r.id), [record.id], 'after the release, due at its new time')
  })

  t.test(`${factory.name}: listed newest first, by state, caller and time; counted by state`, async (t) => {
    const { store } = await factory.make(t)
    const records = [
      fresh({ state: 'pending', caller: 'a' }), fresh({ state: 'stale', caller: 'b' }), fresh({ state: 'pending', caller: 'b' }),
      fresh({ state: 'succeeded', caller: 'a' }), fresh({ state: 'unknown', caller: 'a' }),
    ]
    for (const r of records) await store.create(r)
    const ids = (list: PaymentRecord[]): string[] => list.map((r) => r.id)
    t.same(ids(await store.list({ limit: 10 })), ids([...records].reverse()))
    t.same(ids(await store.list({ limit: 2 })), ids([records[4], records[3]] as PaymentRecord[]))
    t.same(ids(await store.list({ state: 'pending', limit: 10 })), ids([records[2], records[0]] as PaymentRecord[]))
    t.same(ids(await store.list({ caller: 'b', limit: 10 })), ids([records[2], records[1]] as PaymentRecord[]))
    t.same(ids(await store.list({ caller: 'a', state: 'pending', limit: 10 })), ids([records[0]] as PaymentRecord[]))
    t.same(ids(await store.list({ sinceMs: (records[3] as PaymentRecord).createdAtMs, limit: 10 })), ids([records[4], records[3]] as PaymentRecord[]))
    t.same(await store.counts(), { pending: 2, stale: 1, unknown: 1, unverified: 0 })
    await store.update({ ...(records[0] as PaymentRecord), state: 'stale' })
    t.same(await store.counts(), { pending: 1, stale: 2, unknown: 1, unverified: 0 })
    t.same(ids(await store.list({ state: 'stale', limit: 10 })), ids([records[1], records[0]] as PaymentRecord[]), 'a state change moves it between the lists, in its place')
    t.same(ids(await store.list({ states: ['stale', 'unknown'], limit: 10 })), ids([records[4], records[1], records[0]] as PaymentRecord[]), 'two states, one list in the store\'s order')
    t.same(ids(await store.list({ states: ['stale', 'unknown'], limit: 2 })), ids([records[4], records[1]] as PaymentRecord[]))
  })

  t.test(`${factory.name}: two states are listed in the store's order, not by the clocks of the replicas that wrote them`, async (t) => {
    const { store } = await factory.make(t)
    // Written in this order by replicas whose clocks disagree: creation times go back and forth.
    const records = [
      fresh({ state: 'unknown', createdAtMs: 5_000 }), fresh({ state: 'stale', createdAtMs: 1_000 }),
      fresh({ state: 'unknown', createdAtMs: 9_000 }), fresh({ state: 'stale', createdAtMs: 2_000 }),
    ]
    for (const r of records) await store.create(r)
    const ids = (list: PaymentRecord[]): string[] => list.map((r) => r.id)
    const all = ids(await store.list({ states: ['stale', 'unknown'], limit: 10 }))
    t.same(all, ids([...records].reverse()))
    const pages = [...ids((await store.list({ states: ['unknown', 'stale'], limit: 2 })).slice(0, 2)), ...ids((await store.list({ states: ['unknown', 'stale'], limit: 4 })).slice(2, 4))]
    t.same(pages, all, 'two pages neither skip nor repeat one')
    // The console's listing (payment-chase.ts) pages through them in the same order.
    const chase = createPaymentChase(store, async () => { throw new Error('not rechecked here') }, () => {})
    const listed = [...(await chase.list({ states: ['stale', 'unknown'], offset: 0, limit: 2 })).payments, ...(await chase.list({ states: ['stale', 'unknown'], offset: 2, limit: 2 })).payments]
    t.same(listed.map((p) => p.id), all)
  })

  t.test(`${factory.name}: retention removes final payments whose notifications are stored, never another`, async (t) => {
    const { store } = await factory.make(t)
    const old = fresh()
    const oldUnnotified = fresh()
    const recent = fresh()
    const stale = fresh()
    for (const r of [old, oldUnnotified, recent, stale]) await store.create(r)
    await store.update({ ...old, state: 'succeeded', settledAtMs: T0 + 1_000 })
    await store.update({ ...oldUnnotified, state: 'failed', settledAtMs: T0 + 1_000, notify: ['payment.failed'], dueAtMs: 0 })
    await store.update({ ...recent, state: 'failed', settledAtMs: T0 + 9_000 })
    await store.update({ ...stale, state: 'stale' })
    t.equal(await store.removeSettledBefore(T0 + 5_000), 1)
    t.equal(await store.get(old.id), null)
    for (const kept of [oldUnnotified, recent, stale]) t.ok(await store.get(kept.id), `${kept.id} kept`)
    t.equal(await store.byReference(old.externalReference, {}), null, 'and its indexes with it')
  })

  t.test(`${factory.name}: the events cursor only moves forward and survives a restart`, async (t) => {
    const { store, reopen } = await factory.make(t)
    t.equal(await store.cursor(), null, 'never set')
    await store.advanceCursor(0)
    t.equal(await store.cursor(), 0)
    await store.advanceCursor(7)
    await store.advanceCursor(5)
    t.equal(await (await reopen()).cursor(), 7)
  })
}
