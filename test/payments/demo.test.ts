/**
 * `npm run demo` (SPEC §6, §12): a newcomer sees a payout settle. The built demo starts with the
 * inbox and payments on; the payout it suggests is answered pending with a Payment-Id, and a few
 * seconds later the demo's application prints the provider's event and `payment.succeeded`.
 */
import t from 'tap'
import { fileURLToPath } from 'node:url'
import { run } from '../helpers/child-proxy.js'
import { freePort } from '../helpers/ports.js'
import { paymentOf, payout } from './payments-harness.js'

t.test('the demo shows a payout settle: pending with a Payment-Id, then the event and payment.succeeded at its application', async (t) => {
  const port = await freePort()
  const demo = run(t, process.execPath, [fileURLToPath(new URL('../../dist/demo.js', import.meta.url))], { PROXY_PORT: String(port) })
  await demo.waitFor(/Ctrl-C stops everything/)
  t.match(demo.stdout(), `curl -s -i -X POST http://127.0.0.1:${port}/sandbox/fiat/v1/payouts`)
  t.match(demo.stdout(), `curl -s http://127.0.0.1:${port}/payments/demo-1`)
  const url = `http://127.0.0.1:${port}`
  const res = await payout(url, { amount: 100, currency: 'KES', externalReference: 'demo-1' })
  t.equal(res.status, 200)
  t.match(res.headers.get('payment-id'), /^pay_/)
  t.match(await paymentOf(url, 'demo-1'), { state: 'pending' })
  await demo.waitFor(/application received msg_\S+: the provider's event payout\.status\.updated \(successful\)/, 15_000)
  await demo.waitFor(/application received msg_\S+: payment\.succeeded for demo-1 \(succeeded, settled by event\)/, 10_000)
  t.match(await paymentOf(url, 'demo-1'), { state: 'succeeded', settledBy: 'event' })
  demo.process.kill('SIGTERM')
  t.equal((await demo.exited).code, 0, 'stops cleanly')
})
