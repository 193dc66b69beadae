/**
 * SPEC §12 "Settled by an event alone", from outside: where no look-up confirms an event (an
 * interface without a look-up path, or PROXY_PAYMENTS_CONFIRM=event), the payment and its
 * notification say `"confirmed": false`, and the start warns, naming the interface; a payment an
 * event settled once a look-up agreed, or a look-up alone, says `true`; one not yet final, `false`.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { notifications, payout, paymentOf, providerEvent, setting, startInProcess, waitForState } from './payments-harness.js'

const WARNING = 'an event alone settles this interface\'s payments: a forged event would too, so they are notified with "confirmed": false; release nothing on them without a check of your own'

t.test('no fiat look-up path: an event alone settles, confirmed false, and the start says so for fiat and crypto', async (t) => {
  const { app, env } = await setting(t, { PROXY_PAYMENTS_LOOKUP_PATH: 'off' })
  const sidecar = await startInProcess(t, env)
  t.match(sidecar.logs.find(WARNING), [{ level: 40, interface: 'fiat', because: 'PROXY_PAYMENTS_LOOKUP_PATH=off' }, { level: 40, interface: 'crypto', because: 'PROXY_PAYMENTS_CRYPTO_LOOKUP_PATH unset' }])
  const { data } = await (await payout(sidecar.url, { amount: 40, currency: 'KES', externalReference: 'alone-1' })).json() as { data: { transactionId: string } }
  t.match(await paymentOf(sidecar.url, 'alone-1'), { state: 'pending', confirmed: false }, 'not final: false')
  await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, externalReference: 'alone-1', status: 'successful' })
  t.match(await waitForState(sidecar.url, 'alone-1', 'succeeded'), { settledBy: 'event', confirmed: false })
  await eventually(() => notifications(app).length === 1, { what: 'the notification' })
  t.match(notifications(app), [{ type: 'payment.succeeded', payment: { externalReference: 'alone-1', confirmed: false } }])
})

t.test('with a look-up path: an event a look-up agreed with is confirmed, and no warning for fiat', async (t) => {
  const { provider, app, env } = await setting(t, {}, { settleAfterMs: 600_000 })
  const sidecar = await startInProcess(t, env)
  t.same(sidecar.logs.find(WARNING).map((l) => (l as { interface?: string }).interface), ['crypto'], 'crypto only: it has no look-up path by default')
  const { data } = await (await payout(sidecar.url, { amount: 41, currency: 'KES', externalReference: 'agreed-1' })).json() as { data: { transactionId: string } }
  provider.transactions.setStatus(data.transactionId, 'successful')
  await providerEvent(sidecar.intakeUrl, { transactionId: data.transactionId, externalReference: 'agreed-1', status: 'successful' })
  t.match(await waitForState(sidecar.url, 'agreed-1', 'succeeded'), { settledBy: 'event', confirmed: true })
  await eventually(() => notifications(app).length === 1, { what: 'the notification' })
  t.match(notifications(app), [{ type: 'payment.succeeded', payment: { externalReference: 'agreed-1', confirmed: true } }])
})
