/**
 * Several replicas sharing one inbox in a real Redis (SPEC §10): an event taken by either is
 * delivered once, order per key holds across replicas, and with Redis down intake answers 503
 * WEBHOOK_STORE_UNAVAILABLE within 5 s, never 200.
 */
import t from 'tap'
import { assertProxyError } from '../helpers/proxy-error.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { Registry } from 'prom-client'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { attemptsSeen, inboxEnv, post, startApp, startInbox, type RunningInbox } from './inbox-harness.js'

t.test('two replicas on one Redis deliver each event once, in key order, whichever replica took it', async (t) => {
  const redis = await startRedis(t)
  const app = await startApp(t)
  app.answer((_req, res) => { setTimeout(() => res.end('ok'), 5) })
  const env = inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_REDIS_URL: redis.url, PROXY_WEBHOOK_ORDER_KEY_POINTER: '/ref' })
  // Each replica's attempts as they start, and its passes.
  const observed = [0, 1].map(() => ({ registry: new Registry(), attempts: attemptsSeen(t) }))
  const replicas: RunningInbox[] = []
  for (const o of observed) replicas.push(await startInbox(t, env, { registry: o.registry, dispatcher: o.attempts.dispatcher }))
  await eventually(() => replicas.every((r) => r.store.ready()), { what: 'both replicas connected' })
  // "In the order received" is unambiguous when the provider sends a payment's next event once the
  // previous one was answered: each payment's events go one after another, alternating replicas,
  // and the three payments run side by side.
  const sent: string[] = []
  await Promise.all(['pay_0', 'pay_1', 'pay_2'].map(async (ref, r) => {
    for (let n = 0; n < 20; n++) {
      const res = await post((replicas[(n + r) % 2] ?? replicas[0])?.intakeUrl ?? '', JSON.stringify({ ref, n }))
      if (res.status === 200) sent.push(String(res.json['id']))
    }
  }))
  t.equal(sent.length, 60, 'every event answered 200')
  await eventually(() => new Set(app.deliveries.map((d) => d.headers['webhook-id'])).size === 60, { what: 'all delivered', timeoutMs: HANG_MS, progress: () => app.deliveries.length })
  // Once every event is recorded delivered, no later claim hands one out: two more looks of each
  // replica, each starting what it claimed, and every attempt either made is counted.
  await eventually(async () => (await replicas[0]?.store.stats())?.pending === 0, { what: 'every delivery recorded', timeoutMs: HANG_MS })
  await afterPasses(observed.map((o) => passesIn(o.registry, 'webhooks')), { what: 'both replicas\' deliveries', between: async () => { for (const r of replicas) r.deliverer.wake() } })
  t.equal(observed.reduce((n, o) => n + o.attempts.started.length, 0), 60, 'each event attempted once, by one replica')
  t.equal(app.deliveries.length, 60, 'none delivered twice')
  for (const ref of ['pay_0', 'pay_1', 'pay_2']) {
    const order = app.deliveries.map((d) => JSON.parse(d.body.toString()) as { ref: string, n: number }).filter((b) => b.ref === ref).map((b) => b.n)
    t.same(order, Array.from({ length: 20 }, (_, n) => n), `${ref}: delivered in the order received`)
  }
})

t.test('with Redis down, intake answers 503 WEBHOOK_STORE_UNAVAILABLE within 5 s, and takes events again when it is back', async (t) => {
  const redis = await startRedis(t)
  const app = await startApp(t)
  const registry = new Registry()
  const inbox = await startInbox(t, inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_REDIS_URL: redis.url }), { registry })
  await eventually(() => inbox.store.ready(), { what: 'connected' })
  await redis.stop()
  const started = Date.now()
  const res = await post(inbox.intakeUrl, '{"n":1}')
  await assertProxyError(t, res, 503, 'WEBHOOK_STORE_UNAVAILABLE', 'Redis down')
  t.ok(Date.now() - started < 5_000, `answered in ${Date.now() - started} ms`)
  t.ok(Number(res.headers.get('retry-after')) > 0)
  // The deliveries look every second: two of their looks failed on the stopped Redis, each a chance to log the outage again.
  await afterPasses(passesIn(registry, 'webhooks', 'failed'), { what: 'the deliveries\' failed looks', between: async () => { inbox.deliverer.wake() } })
  await redis.start()
  await eventually(() => inbox.store.ready(), { what: 'reconnected', timeoutMs: HANG_MS })
  t.equal((await post(inbox.intakeUrl, '{"n":2}')).status, 200)
  await eventually(() => app.deliveries.length === 1, { what: 'the event delivered' })
  t.equal(inbox.logs.find('webhook store read failed: deliveries wait until it answers').length, 1, 'the deliverer logs the outage once, not every second')
  await eventually(() => inbox.logs.find('webhook store answers again: deliveries resume').length === 1, { what: 'the recovery line' })
  t.match(inbox.logs.lines.join('\n'), /append-only persistence/, 'the start log warns about appendonly no')
})

t.test('with Redis down, /metrics still answers with the inbox\'s last figures', async (t) => {
  const redis = await startRedis(t)
  const app = await startApp(t)
  const { Registry } = await import('prom-client')
  const registry = new Registry()
  const inbox = await startInbox(t, inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_REDIS_URL: redis.url }), { registry })
  await eventually(() => inbox.store.ready(), { what: 'connected' })
  t.match(await registry.metrics(), /payments_auth_proxy_webhooks_pending 0/)
  await redis.stop()
  t.match(await registry.metrics(), /payments_auth_proxy_webhooks_pending 0/, 'the scrape succeeds')
})
