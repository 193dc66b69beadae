/**
 * The sealed store's own judgement of what the stores find (SPEC §12 "Sealed"): the real SQLite
 * store's columns and indexes live outside the sealed record, so a record an index hands back is
 * judged again by what its seals vouch for. A key index pointed at another payment never joins a
 * forward to it; a reference, a transaction id, a caller or a time in a column never makes another
 * caller's payment visible; a member removed from the JSON is not read as the null it was sealed as.
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { createSqlitePaymentStore } from '../../src/payments/sqlite-payment-store.js'
import type { PaymentStore } from '../../src/payments/payment-store.js'
import { paymentFixture, T0 } from './payment-fixture.js'
import { sealedForTests, tempDir } from './payments-harness.js'

async function opened (t: Parameters<typeof tempDir>[0]): Promise<{ store: PaymentStore, path: string }> {
  const path = join(tempDir(t), 'webhooks.db')
  const store = sealedForTests(await createSqlitePaymentStore(path))
  t.teardown(async () => { await store.close() })
  return { store, path }
}

async function sql (path: string, text: string, ...args: unknown[]): Promise<void> {
  const db = await openDatabase(path)
  try { db.prepare(text).run(...args) } finally { db.close() }
}

const a = paymentFixture({ id: 'pay_AAAAAAAAAAAAAAAAAAAAAA', key: 'key-a', caller: 'agent-a', externalReference: 'ref-a', state: 'pending', transactionId: 'tx-a', transactionIdFrom: 'answer', createdAtMs: T0 })
const b = paymentFixture({ id: 'pay_BBBBBBBBBBBBBBBBBBBBBB', key: 'key-b', caller: 'agent-b', externalReference: 'ref-b', state: 'pending', transactionId: 'tx-b', transactionIdFrom: 'answer', createdAtMs: T0 + 1000 })

t.test('a key index pointed at another payment: the forward is refused, never joined to it', async (t) => {
  const { store, path } = await opened(t)
  await store.create(a)
  await sql(path, 'UPDATE payments SET key = ? WHERE id = ?', 'key-upcoming', a.id)
  await t.rejects(store.create(paymentFixture({ id: 'pay_CCCCCCCCCCCCCCCCCCCCCC', key: 'key-upcoming', externalReference: 'ref-upcoming' })), /key index names payment/)
  t.equal(await store.byKey('key-upcoming'), null)
})

t.test('columns and indexes never make another payment answer for a reference, a transaction, a caller or a time', async (t) => {
  const { store, path } = await opened(t)
  await store.create(a)
  await store.create(b)
  // Payment a's columns now say it is agent-b's, with b's reference and transaction, newer than b.
  await sql(path, 'UPDATE payments SET seq = 1000, caller = ?, reference_sha = (SELECT reference_sha FROM payments WHERE id = ?), transaction_sha = (SELECT transaction_sha FROM payments WHERE id = ?), created_at = ? WHERE id = ?', 'agent-b', b.id, b.id, T0 + 5000, a.id)
  t.not((await store.byReference('ref-b', { caller: 'agent-b' }))?.id, a.id, 'the reference finds b or none, never a, whose sealed reference is another')
  t.not((await store.byTransactionId('tx-b'))?.id, a.id, 'the same for a transaction id')
  t.same((await store.list({ caller: 'agent-b', limit: 10 })).map((r) => r.id), [b.id], 'agent-a\'s payment never listed as agent-b\'s')
  t.same((await store.list({ sinceMs: T0 + 2000, limit: 10 })).map((r) => r.id), [], 'nor by a creation time in a column')
  t.equal((await store.get(a.id))?.caller, 'agent-a', 'read by its id, it is what its seals say')
})

t.test('a member removed from the JSON is not read as the null it was sealed as', async (t) => {
  const { store, path } = await opened(t)
  await store.create({ ...a, state: 'stale', nextLookupAtMs: null })
  await sql(path, 'UPDATE payments SET record = json_remove(record, \'$.nextLookupAtMs\') WHERE id = ?', a.id)
  t.match(await store.get(a.id), { state: 'unverified', unverified: { failed: 'state seal', vouched: 'transaction' } })
  await sql(path, 'UPDATE payments SET record = json_remove(record, \'$.amount\') WHERE id = ?', a.id)
  t.match(await store.get(a.id), { state: 'unverified', unverified: { failed: 'created seal', vouched: 'nothing' } })
})
