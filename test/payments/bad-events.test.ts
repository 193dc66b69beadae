/**
 * BAD_INPUTS "Payments (SPEC §12)", the rows about events, over real sockets: a forged or replayed
 * "successful" the look-up does not confirm, an event naming a transaction the sidecar never
 * forwarded, an event and a look-up settling one payment at once (both orders), a final state
 * written into the store by hand then contradicted by an event, and an event stored while payments
 * were not reading (a crash between the inbox's 200 and the match).
 */
import t from 'tap'
import { join } from 'node:path'
import { openDatabase } from '../../src/sqlite/open-database.js'
import { createEventMatcher } from '../../src/payments/event-matching.js'
import { createSqlitePaymentStore } from '../../src/payments/sqlite-payment-store.js'
import { createSqliteStore } from '../../src/outbox/sqlite-store.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { metric, notifications, payout, paymentOf, providerEvent, setting, startInProcess, waitForState } from './payments-harness.js'

t.test('a webhook claiming successful for a payout the look-up says pending, then failed: never settled by it; disputed, logged at warn, counted; the payment follows the look-up', async (t) => {
  const { provider, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,30s' })
  const sidecar = await startInProcess(t, env)
  const { data } = await (await payout(sidecar.url, { amount: 9000, currency: 'KES', externalReference: 'forged-1' })).json() as { data: { transactionId: string } }
  const forged = await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, externalReference: 'forged-1', status: 'successful' })
  await eventually(() => sidecar.logs.find('payment looked up').length === 1, { what: 'the confirming look-up' })
  await eventually(async () => (await paymentOf(sidecar.url, 'forged-1'))?.lookups.lastOutcome === 'pending', { what: 'the look-up recorded' })
  t.match(await paymentOf(sidecar.url, 'forged-1'), { state: 'pending', events: [{ id: forged.id, status: 'successful', disputed: false }] }, 'the look-up says pending: not settled, the event unconfirmed')
  provider.transactions.setStatus(data.transactionId, 'failed')
  const failed = await waitForState(sidecar.url, 'forged-1', 'failed', 10_000)
  t.match(failed, { settledBy: 'lookup', events: [{ id: forged.id, disputed: true }] })
  const [warned] = sidecar.logs.find('payment event disputed: its final status disagrees with the payment\'s final state, which stands')
  t.match(warned, { level: 40, payment: failed.id, caller: 'anonymous', reference: 'forged-1', event: forged.id, state: 'failed' })
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_events_total\{outcome="disputed"\}/), 1)
})

t.test('a webhook naming a transaction id the sidecar never forwarded: delivered as §10 says, counted unmatched, no payment created', async (t) => {
  const { app, env } = await setting(t)
  const sidecar = await startInProcess(t, env)
  const event = await providerEvent(sidecar.intakeUrl, { transactionId: 'txn_never_forwarded', externalReference: 'someone-elses', status: 'successful' })
  t.equal(event.status, 200)
  await eventually(() => app.deliveries.some((d) => d.headers['webhook-id'] === event.id), { what: 'the delivery' })
  await eventually(async () => await metric(sidecar.url, /^payments_auth_proxy_payment_events_total\{outcome="unmatched"\}/) === 1, { what: 'counted unmatched' })
  t.same(((await (await fetch(`${sidecar.url}/payments`)).json()) as { payments: unknown[] }).payments, [], 'no payment')
  t.equal(await paymentOf(sidecar.url, 'someone-elses'), null)
  t.same(notifications(app), [])
})

t.test('an event that settles a payment while a look-up for it is in flight, and the reverse: one final state, settled once, one notification', async (t) => {
  const { provider, app, env } = await setting(t, { PROXY_PAYMENTS_CONFIRM: 'event', PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,30s' })
  let release: (() => void) | null = null
  provider.setUpstreamHandler(async (req) => {
    if (req.method === 'GET' && req.url?.includes('hold-') !== true) await new Promise<void>((resolve) => { release = resolve })
    return false
  })
  const sidecar = await startInProcess(t, env)
  const { data } = await (await payout(sidecar.url, { amount: 1, currency: 'KES', externalReference: 'race-1' })).json() as { data: { transactionId: string } }
  provider.transactions.setStatus(data.transactionId, 'successful')
  await eventually(() => release !== null, { what: 'the scheduled look-up in flight', timeoutMs: 5000 })
  await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, status: 'successful' })
  const settled = await waitForState(sidecar.url, 'race-1', 'succeeded')
  t.equal(settled.settledBy, 'event', 'the event settled it while the look-up was in flight')
  ;(release as unknown as () => void)()
  await eventually(async () => (await paymentOf(sidecar.url, 'race-1'))?.lookups.count === 1, { what: 'the late look-up recorded' })
  t.match(await paymentOf(sidecar.url, 'race-1'), { state: 'succeeded', settledBy: 'event', settledAt: settled.settledAt })

  // The reverse: the look-up settles it failed, then an event says successful.
  release = null
  const second = await (await payout(sidecar.url, { amount: 2, currency: 'KES', externalReference: 'race-2' })).json() as { data: { transactionId: string } }
  provider.transactions.setStatus(second.data.transactionId, 'failed')
  await eventually(() => release !== null, { what: 'the second look-up in flight', timeoutMs: 5000 })
  ;(release as unknown as () => void)()
  const failed = await waitForState(sidecar.url, 'race-2', 'failed')
  const late = await providerEvent(sidecar.intakeUrl, { transactionId: second.data.transactionId, status: 'successful' })
  await eventually(async () => (await paymentOf(sidecar.url, 'race-2'))?.events.length === 1, { what: 'the late event recorded' })
  t.match(await paymentOf(sidecar.url, 'race-2'), { state: 'failed', settledBy: 'lookup', settledAt: failed.settledAt, events: [{ id: late.id, disputed: true }] })
  await eventually(() => notifications(app).length === 2, { what: 'the notifications' })
  // The payments loop had its chance to store another (two more passes), and each one it stored (logged as it is) has reached the application.
  await afterPasses(passesIn(sidecar.server.metrics.registry, 'payments'), { what: 'the payments loop', between: async () => { sidecar.server.shared.payments?.running?.wake() } })
  await eventually(() => notifications(app).length >= sidecar.logs.find('payment notification stored').length, { what: 'every notification stored delivered' })
  t.same(notifications(app).map((n) => `${n.type} ${n.payment.externalReference}`), ['payment.succeeded race-1', 'payment.failed race-2'], 'one each')
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_settle_seconds_count\{settled_by="event"\}/), 1)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_settle_seconds_count\{settled_by="lookup"\}/), 1)
})

t.test('a final state written into the store by hand is not believed (SPEC §12 "Sealed"): never succeeded, never notified; the look-up of its sealed transaction id decides', async (t) => {
  const { dir, env, app } = await setting(t)
  const sidecar = await startInProcess(t, env)
  const { data } = await (await payout(sidecar.url, { amount: 3, currency: 'KES', externalReference: 'by-hand-1' })).json() as { data: { transactionId: string } }
  const db = await openDatabase(join(dir, 'webhooks.db'))
  db.prepare(`UPDATE payments SET state = 'succeeded', settled_at = 1, due_at = 0, notify = 1,
    record = json_set(record, '$.state', 'succeeded', '$.settledBy', 'lookup', '$.settledAtMs', 1000, '$.dueAtMs', 0, '$.notify', json('["payment.succeeded"]')) WHERE key IS NOT NULL`).run()
  db.close()
  t.match((await paymentOf(sidecar.url, 'by-hand-1'))?.state, /^(unverified|pending)$/, 'never succeeded')
  await eventually(async () => (await paymentOf(sidecar.url, 'by-hand-1'))?.state === 'pending', { what: 'sealed again from a look-up' })
  t.match(await paymentOf(sidecar.url, 'by-hand-1'), { state: 'pending', settledBy: null, amount: '3', transactionId: data.transactionId, lookups: { lastOutcome: 'pending' } }, 'what the provider said')
  const event = await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, status: 'failed' })
  await eventually(async () => (await paymentOf(sidecar.url, 'by-hand-1'))?.events.length === 1, { what: 'the event recorded' })
  t.match(await paymentOf(sidecar.url, 'by-hand-1'), { state: 'pending', events: [{ id: event.id, status: 'failed' }] }, 'an event asks a look-up, which says pending')
  t.same(notifications(app), [], 'nothing notified')
  t.equal(sidecar.logs.find('payment record failed verification: never notified, never final but by a look-up of its sealed transaction id (was the store written by hand, or sealed with another PROXY_SEALING_SECRET?)').length, 1, 'logged once')
})

t.test('an event stored while payments were not reading (killed between the inbox\'s 200 and the match) is matched from the cursor at the next start', async (t) => {
  const { dir } = await setting(t)
  const path = join(dir, 'webhooks.db')
  const { logger } = captureLogger()
  const inbox = await createSqliteStore({ path, log: logger, retentionMs: 86_400_000, maxEvents: 1000, maxBytes: 1 << 20, orderMaxWaitMs: 86_400_000 })
  const payments = await createSqlitePaymentStore(path)
  t.teardown(async () => { await inbox.close(); await payments.close() })
  const applied: string[] = []
  const metrics = { tracked () {}, settled () {}, lookup () {}, event () {}, pass () {} }
  const apply = async (record: { id: string }): Promise<{ record: null, written: boolean }> => { applied.push(record.id); return { record: null, written: true } }
  const config = { transactionIdPointer: '/data/transactionId', statusPointer: '/data/status', succeededStatuses: ['successful'], failedStatuses: ['failed'], eventTransactionIdPointer: '/data/transactionId', eventReferencePointer: '/data/externalReference' }
  const matcher = (): ReturnType<typeof createEventMatcher> => createEventMatcher({ store: payments, apply, config: config as never, log: logger, metrics })
  await matcher().attach(inbox)
  const { paymentFixture } = await import('./payment-fixture.js')
  await payments.create(paymentFixture({ id: 'pay_AAAAAAAAAAAAAAAAAAAAAB', key: 'k-cursor', externalReference: 'cursor-1', state: 'pending', transactionId: 'tx-cursor', dueAtMs: null }))
  const body = Buffer.from(JSON.stringify({ data: { transactionId: 'tx-cursor', status: 'successful' } }))
  await inbox.intake({ key: 'id:cursor', bodySha256: 'h', orderKey: null, body, headers: [], source: '203.0.113.7', receivedAtMs: Date.now() })
  // The process died here. At the next start a new matcher reads from the stored cursor.
  const restarted = matcher()
  await restarted.attach(inbox)
  await restarted.catchUp()
  t.same(applied, ['pay_AAAAAAAAAAAAAAAAAAAAAB'], 'matched after the restart')
  await restarted.catchUp()
  t.same(applied, ['pay_AAAAAAAAAAAAAAAAAAAAAB'], 'and once: the cursor moved past it')
})
