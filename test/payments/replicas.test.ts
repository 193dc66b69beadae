/**
 * SPEC §12 with two replicas on one Redis: each payment is looked up once per step of its schedule
 * (one replica at a time holds its lease), wherever it was created, and notified once.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { notifications, payout, setting, startInProcess } from './payments-harness.js'

t.test('two replicas on one Redis look each payment up once per step, and notify it once', async (t) => {
  const redis = await startRedis(t)
  const { provider, app, env } = await setting(t, {
    PROXY_REDIS_URL: redis.url, PROXY_PAYMENTS_LOOKUP_SCHEDULE: '1s,4s', PROXY_PAYMENTS_LOOKUPS_PER_SECOND: '200', PROXY_PAYMENTS_LOOKUP_CONCURRENCY: '1',
  })
  // Slow look-ups, one at a time per replica: both replicas are at work on the same due payments at once.
  provider.setUpstreamHandler(async (req) => {
    if (req.method === 'GET') await new Promise((resolve) => setTimeout(resolve, 40))
    return false
  })
  const replicas = [await startInProcess(t, env), await startInProcess(t, env)]
  const count = 20
  for (let i = 0; i < count; i++) {
    const res = await payout((replicas[i % 2] as typeof replicas[0]).url, { amount: i + 1, currency: 'KES', externalReference: `replica-${i}` })
    t.equal(res.status, 200)
  }
  await eventually(() => notifications(app).length === count, { what: 'every payment stale and notified', timeoutMs: 15_000 })
  const lookups = provider.transactions.list().map((tx) => provider.transactions.lookups.get(tx.transactionId) ?? 0)
  t.equal(lookups.length, count)
  // Two steps, so two look-ups each; one made after the second step's time counts for both (steps
  // a late look-up passed are not made up), which a loaded machine can cause. Never more than two.
  t.ok(lookups.every((n) => n === 1 || n === 2), `at most one look-up per step: ${lookups.join(' ')}`)
  t.ok(lookups.filter((n) => n === 2).length >= count / 2, 'most payments were looked up at both steps')
  const byReplica = replicas.map((r) => r.logs.find('payment looked up').length)
  const provided = lookups.reduce((sum, n) => sum + n, 0)
  t.equal(byReplica[0] as number + (byReplica[1] as number), provided, `look-ups made by the two replicas: ${byReplica.join(' + ')}, each one the provider saw`)
  t.ok(byReplica.every((n) => n > 0), 'both replicas looked payments up')
  // Both replicas' payments loops had their chance to store another (two more passes each), and each one they stored (logged as it is) has reached the application.
  await afterPasses(replicas.map((r) => passesIn(r.server.metrics.registry, 'payments')), { what: 'both replicas\' payments loops', between: async () => { for (const r of replicas) r.server.shared.payments?.running?.wake() } })
  const stored = (): number => replicas.reduce((n, r) => n + r.logs.find('payment notification stored').length, 0)
  await eventually(() => notifications(app).length >= stored(), { what: 'every notification stored delivered', timeoutMs: 15_000 })
  const types = notifications(app).map((n) => `${n.type} ${n.payment.externalReference}`)
  t.equal(new Set(types).size, count, 'one payment.stale per payment')
  t.ok(types.every((type) => type.startsWith('payment.stale')))
})
