/**
 * SPEC §12 end to end with the real process (`dist-bundle/cli.mjs`) over real sockets: a payout
 * followed from its answer to a final state, settled by the provider's event once a look-up agrees,
 * settled by a look-up alone, and an event the look-up contradicts (disputed, the look-up stands).
 * The application gets the raw events as §10 delivers them, and one signed notification per payment.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { afterPasses, passesAt } from '../helpers/worker-passes.js'
import { metric, notifications, notificationsDelivered, payout, paymentOf, providerEvent, PROVIDER_SECRET, setting, SIGNING_SECRET, startSidecar, waitForState } from './payments-harness.js'

t.test('followed: pending with the provider\'s transaction id and Payment-Id; the provider\'s event settles it once a look-up agrees, within 1 s; one notification', async (t) => {
  const setup = await setting(t)
  const { provider, app, env } = setup
  const sidecar = await startSidecar(t, env)
  provider.transactions.configure({ settleAfterMs: 400, webhook: { url: sidecar.intakeUrl, secret: PROVIDER_SECRET } })
  const request = { amount: '250.50', currency: 'KES', externalReference: 'e2e-event-1', recipient: '+254700000001' }
  const res = await payout(sidecar.url, request)
  const answer = await res.json() as { data: { transactionId: string, status: string } }
  t.equal(res.status, 200)
  t.equal(answer.data.status, 'pending', 'the provider\'s answer, unchanged')
  const paymentId = res.headers.get('payment-id') ?? ''
  t.match(paymentId, /^pay_[A-Za-z0-9_-]{22}$/)
  const replay = await payout(sidecar.url, request)
  t.equal(replay.headers.get('idempotent-replayed'), 'true')
  t.equal(replay.headers.get('payment-id'), paymentId, 'the replay carries the same Payment-Id')
  t.same(await replay.json(), answer)

  const pending = await paymentOf(sidecar.url, 'e2e-event-1')
  t.match(pending, { id: paymentId, state: 'pending', providerStatus: 'pending', caller: 'anonymous', environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/v1/payouts', externalReference: 'e2e-event-1', transactionId: answer.data.transactionId, amount: '250.50', currency: 'KES', settledAt: null, settledBy: null, events: [] })
  t.ok(Number.isInteger(pending?.createdAt))

  const settled = await waitForState(sidecar.url, 'e2e-event-1', 'succeeded', 10_000, () => sidecar.child.stdout())
  t.match(settled, { id: paymentId, settledBy: 'event', providerStatus: 'successful', events: [{ status: 'successful', disputed: false }], lookups: { lastOutcome: 'final' } })
  const [event] = settled.events
  // Asked by the event, not the schedule: the setting's first scheduled look-up is 30 s after the
  // payout. About a second on a quiet machine; only reported, since a loaded one stretches it.
  const tookS = settled.settledAt === null || event === undefined ? null : settled.settledAt - event.receivedAt
  t.comment(`settled ${String(tookS)} s after the event was stored`)
  t.ok(tookS !== null && tookS < 30, 'the look-up that confirmed it was the one the event asked for, before any scheduled one')
  t.match(settled, { lookups: { count: 1 } }, 'one look-up: the event\'s')
  await eventually(() => notifications(app).length === 1, { what: 'the notification' })
  const [note] = notifications(app)
  t.match(note, { type: 'payment.succeeded', payment: { id: paymentId, state: 'succeeded', settledBy: 'event', transactionId: answer.data.transactionId } })
  // The raw event and the notification come from two outboxes: neither is promised to arrive first.
  await eventually(() => app.deliveries.some((d) => d.headers['webhook-id'] === event?.id), { what: 'the raw event' })
  const raw = app.deliveries.find((d) => d.headers['webhook-id'] === event?.id)
  t.match(JSON.parse(raw?.body.toString() ?? '{}'), { event: 'payout.status.updated', data: { transactionId: answer.data.transactionId, status: 'successful' } }, 'the raw event delivered as §10 says')
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_tracked_total\{outcome="followed"\}/), 1)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_events_total\{outcome="matched"\}/), 1)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_settle_seconds_count\{settled_by="event"\}/), 1)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payments_pending /), 0)
  await sidecar.child.waitFor(new RegExp(`"payment":"${paymentId}","caller":"anonymous","reference":"e2e-event-1"[^\\n]*"msg":"payment settled"`))
  // The payments loop had its chance to store another (two more passes), and every one stored has been delivered.
  await afterPasses(passesAt(sidecar.url, 'payments'), { what: 'the payments loop' })
  t.same((await notificationsDelivered(setup)).map((n) => n.key), [`payment.succeeded:${paymentId}`], 'one notification stored')
  t.equal(notifications(app).length, 1, 'notified once')
  const output = sidecar.child.stdout() + sidecar.child.stderr()
  for (const secret of [SIGNING_SECRET, PROVIDER_SECRET, ...provider.issuedTokens]) t.notOk(output.includes(secret), 'no secret in the log')
})

t.test('settled by a look-up alone: no event, the schedule\'s first look-up finds it final', async (t) => {
  const { provider, app, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,30s' }, { settleAfterMs: 200 })
  const sidecar = await startSidecar(t, env)
  const res = await payout(sidecar.url, { amount: 90, currency: 'KES', externalReference: 'e2e-lookup-1' })
  t.equal(res.status, 200)
  const settled = await waitForState(sidecar.url, 'e2e-lookup-1', 'succeeded', 10_000, () => sidecar.child.stdout())
  t.match(settled, { settledBy: 'lookup', events: [], lookups: { count: 1, lastOutcome: 'final' }, amount: '90' })
  const [transaction] = provider.transactions.list()
  t.equal(provider.transactions.lookups.get(transaction?.transactionId ?? ''), 1, 'looked up once')
  await eventually(() => notifications(app).length === 1, { what: 'the notification' })
  t.match(notifications(app)[0], { type: 'payment.succeeded', payment: { settledBy: 'lookup' } })
})

t.test('disputed: an event claiming successful for a payout the look-up says failed settles it failed; the event is marked, logged and counted, and named in the notification', async (t) => {
  const { provider, app, env } = await setting(t)
  const sidecar = await startSidecar(t, env)
  const res = await payout(sidecar.url, { amount: 5000, currency: 'KES', externalReference: 'e2e-dispute-1' })
  const { data } = await res.json() as { data: { transactionId: string } }
  provider.transactions.setStatus(data.transactionId, 'failed')
  const forged = await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, externalReference: 'e2e-dispute-1', status: 'successful' })
  t.equal(forged.status, 200, 'the inbox takes it: the static secret was right')
  const failed = await waitForState(sidecar.url, 'e2e-dispute-1', 'failed', 10_000, () => sidecar.child.stdout())
  t.match(failed, { settledBy: 'lookup', providerStatus: 'failed', events: [{ id: forged.id, status: 'successful', disputed: true }] })
  await eventually(() => notifications(app).length === 1, { what: 'the notification' })
  t.match(notifications(app)[0], { type: 'payment.failed', payment: { state: 'failed', events: [{ id: forged.id, disputed: true }] } })
  t.ok(app.deliveries.some((d) => d.headers['webhook-id'] === forged.id), 'the event itself is delivered all the same')
  await sidecar.child.waitFor(/"level":40[^\n]*"event":"msg_[^\n]*"msg":"payment event disputed/)
  t.equal(await metric(sidecar.url, /^payments_auth_proxy_payment_events_total\{outcome="disputed"\}/), 1)
})
