/**
 * Delivery (SPEC §10) to a real application over HTTP: Standard Webhooks headers verified with the
 * `standardwebhooks` package an application would use, retries on a short schedule (real time),
 * Retry-After, redirects, timeouts, order per key, concurrency, and shutdown.
 */
import t from 'tap'
import { Registry } from 'prom-client'
import { Webhook } from 'standardwebhooks'
import { deferred } from '../helpers/deferred.js'
import { eventually } from '../helpers/eventually.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn } from '../helpers/worker-passes.js'
import { PREVIOUS_SIGNING_SECRET, SIGNING_SECRET, attemptsSeen, post, startInboxAndApp, type Delivery } from './inbox-harness.js'

const verifies = (secret: string, d: Delivery): boolean => {
  try {
    new Webhook(secret).verify(d.body, d.headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

t.test('deliveries carry Standard Webhooks headers the standardwebhooks library verifies, with either secret during a rotation, and one webhook-id on every attempt', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_SIGNING_SECRET_PREVIOUS: PREVIOUS_SIGNING_SECRET, PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' })
  let calls = 0
  app.answer((_req, res) => { res.statusCode = ++calls === 1 ? 500 : 200; res.end() })
  const body = '{"event":"payout.settled","amount":"12.50","note":"caf\u00e9"}'
  const answer = await post(inbox.intakeUrl, body, { 'x-provider-trace': 't1' })
  await eventually(() => app.deliveries.length === 2, { what: 'a failed attempt and a retry' })
  for (const d of app.deliveries) {
    t.equal(d.body.toString(), body, 'the body byte for byte')
    t.equal(d.headers['webhook-id'], answer.json['id'], 'webhook-id is the event id')
    t.equal(d.headers['content-type'], 'application/json')
    t.equal(d.headers['x-provider-trace'], 't1', 'provider headers are passed on')
    t.match(d.headers['webhook-signature'], /^v1,\S+ v1,\S+$/, 'two signatures during a rotation')
    t.ok(verifies(SIGNING_SECRET, d), 'the current secret verifies')
    t.ok(verifies(PREVIOUS_SIGNING_SECRET, d), 'the previous secret verifies')
    t.notOk(verifies('whsec_' + Buffer.alloc(32, 7).toString('base64'), d), 'another secret does not')
  }
  t.not(new Webhook(SIGNING_SECRET).verify(app.deliveries[0]?.body ?? '', app.deliveries[0]?.headers as Record<string, string>), undefined)
  await eventually(async () => (await inbox.store.show(String(answer.json['id'])))?.event.status === 'delivered', { what: 'delivered recorded' })
})

t.test('a 429 with Retry-After is not retried sooner; a 301 is a failed attempt, not followed; after the last attempt the event is failed', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms,2s' })
  const answers = [
    { status: 429, headers: { 'retry-after': '1' } },
    { status: 301, headers: { location: '/elsewhere' } },
    { status: 500, headers: {} },
  ]
  app.answer((_req, res) => {
    const next = answers.shift() ?? { status: 200, headers: {} }
    res.writeHead(next.status, next.headers).end()
  })
  const { json } = await post(inbox.intakeUrl, '{"n":1}')
  const id = String(json['id'])
  await eventually(async () => (await inbox.store.show(id))?.event.status === 'failed', { what: 'the event failed', timeoutMs: 10_000 })
  t.equal(app.deliveries.length, 3, 'three attempts (the schedule has two steps)')
  const [first, second] = app.deliveries
  t.ok((second?.atMs ?? 0) - (first?.atMs ?? 0) >= 990, `the retry after the 429 waited for Retry-After (${(second?.atMs ?? 0) - (first?.atMs ?? 0)} ms)`)
  t.ok(app.deliveries.every((d) => d.headers['webhook-id'] === id))
  const shown = await inbox.store.show(id)
  t.same(shown?.attempts.map((a) => a.status), [429, 301, 500], 'every attempt is recorded')
  t.equal(inbox.logs.find('webhook failed after the last attempt').length, 1)
})

t.test('an application that does not answer within the delivery timeout is a failed attempt; the retry delivers', async (t) => {
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_DELIVERY_TIMEOUT_SECONDS: '1', PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' })
  let calls = 0
  app.answer((_req, res) => { if (++calls > 1) res.end('ok') })
  const { json } = await post(inbox.intakeUrl, '{"slow":true}')
  await eventually(async () => (await inbox.store.show(String(json['id'])))?.event.status === 'delivered', { what: 'delivered on the retry', timeoutMs: 5_000 })
  const shown = await inbox.store.show(String(json['id']))
  t.same(shown?.attempts.map((a) => [a.status, a.error]), [[null, 'timeout'], [200, null]])
})

t.test('events sharing an order key are delivered one at a time in the order received; other keys go in parallel', async (t) => {
  const registry = new Registry()
  const attempts = attemptsSeen(t)
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_ORDER_KEY_POINTER: '/ref', PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' }, { registry, dispatcher: attempts.dispatcher })
  const release = deferred()
  let aFailures = 1
  app.answer((_req, res, body) => {
    const event = JSON.parse(body.toString()) as { ref: string, n: number }
    // The first event of pay_A is held, then fails once: pay_A's second must wait through both.
    if (event.ref === 'pay_A' && event.n === 1) {
      void release.promise.then(() => { res.statusCode = aFailures-- > 0 ? 500 : 200; res.end() })
      return
    }
    res.end('ok')
  })
  await post(inbox.intakeUrl, '{"ref":"pay_A","n":1}')
  await post(inbox.intakeUrl, '{"ref":"pay_A","n":2}')
  await post(inbox.intakeUrl, '{"ref":"pay_B","n":1}')
  await post(inbox.intakeUrl, '{"ref":"pay_B","n":2}')
  await eventually(() => app.deliveries.filter((d) => d.body.includes('pay_B')).length === 2, { what: 'pay_B delivered while pay_A is held' })
  // Two more looks for due events, each starting what it claims, had their chance to start pay_A n=2.
  await afterPasses(passesIn(registry, 'webhooks'), { what: 'the deliveries', between: async () => { inbox.deliverer.wake() } })
  t.same(attempts.started.filter((b) => b.includes('pay_A')), ['{"ref":"pay_A","n":1}'], 'pay_A n=2 not started while n=1 is held')
  t.same(app.deliveries.map((d) => d.body.toString()).filter((b) => b.includes('pay_A')), ['{"ref":"pay_A","n":1}'], 'pay_A n=2 waits for n=1')
  release.resolve()
  await eventually(() => app.deliveries.some((d) => d.body.includes('"pay_A","n":2')), { what: 'pay_A n=2' })
  const order = app.deliveries.map((d) => d.body.toString()).filter((b) => b.includes('pay_A'))
  t.same(order, ['{"ref":"pay_A","n":1}', '{"ref":"pay_A","n":1}', '{"ref":"pay_A","n":2}'], 'n=2 only after n=1 was retried and delivered')
  t.same(app.deliveries.filter((d) => d.body.includes('pay_B')).map((d) => d.body.toString()), ['{"ref":"pay_B","n":1}', '{"ref":"pay_B","n":2}'])
})

for (const kind of ['sqlite', 'redis'] as const) {
  t.test(`${kind}: a later event waits behind an earlier one that keeps failing for at most PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS, then is delivered out of order, counted and logged at warn`, async (t) => {
    const redisUrl = kind === 'redis' ? (await startRedis(t)).url : undefined
    const registry = new Registry()
    const { inbox, app } = await startInboxAndApp(t, {
      PROXY_WEBHOOK_ORDER_KEY_POINTER: '/ref', PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS: '1', PROXY_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '200ms').join(','),
      ...(redisUrl === undefined ? {} : { PROXY_REDIS_URL: redisUrl }),
    }, { registry })
    await eventually(() => inbox.store.ready(), { what: 'the store ready' })
    app.answer((_req, res, body) => { res.statusCode = body.includes('"status":"pending"') ? 500 : 200; res.end() })
    const refused = await post(inbox.intakeUrl, '{"ref":"pay_A","status":"pending"}')
    const sentAt = Date.now()
    const result = await post(inbox.intakeUrl, '{"ref":"pay_A","status":"successful"}')
    await eventually(() => app.deliveries.some((d) => d.body.includes('successful')), { what: 'the later event delivered', timeoutMs: 6_000 })
    const delivered = app.deliveries.find((d) => d.body.includes('successful'))
    t.ok((delivered?.atMs ?? 0) - sentAt >= 1000, `it waited the order wait (${(delivered?.atMs ?? 0) - sentAt} ms)`)
    t.ok(app.deliveries.filter((d) => d.body.includes('pending')).length >= 2, 'behind the earlier one, refused meanwhile')
    t.equal((await inbox.store.show(String(refused.json['id'])))?.event.status, 'pending', 'which is still pending')
    await eventually(async () => (await inbox.store.show(String(result.json['id'])))?.event.status === 'delivered', { what: 'recorded' })
    const warned = inbox.logs.find('webhook delivered out of order: it waited the order wait (PROXY_WEBHOOK_ORDER_MAX_WAIT_SECONDS) behind an earlier event of its order key that is not delivered')
    t.same(warned.map((l) => [l['level'], l['id'], l['waitedBehind'], l['orderKey']]), [[40, result.json['id'], refused.json['id'], 'pay_A']], 'logged at warn, once')
    t.match(await registry.metrics(), /payments_auth_proxy_webhooks_out_of_order_total 1\n/, 'counted')
  })
}

t.test('at most PROXY_WEBHOOK_CONCURRENCY deliveries are in flight at once', async (t) => {
  const registry = new Registry()
  const attempts = attemptsSeen(t, { concurrency: 2 })
  const { inbox, app } = await startInboxAndApp(t, { PROXY_WEBHOOK_CONCURRENCY: '2' }, { registry, dispatcher: attempts.dispatcher })
  const release = deferred()
  app.answer((_req, res) => { void release.promise.then(() => res.end('ok')) })
  for (let i = 0; i < 5; i++) await post(inbox.intakeUrl, `{"n":${i}}`)
  await eventually(() => app.deliveries.length === 2, { what: 'two deliveries in flight' })
  // Two more looks for due events had their chance to start a third.
  await afterPasses(passesIn(registry, 'webhooks'), { what: 'the deliveries', between: async () => { inbox.deliverer.wake() } })
  t.equal(attempts.started.length, 2, 'no third started while two are in flight')
  t.equal(app.deliveries.length, 2, 'no third while two are in flight')
  release.resolve()
  await eventually(() => app.deliveries.length === 5, { what: 'all five' })
})

t.test('on close, deliveries in flight are abandoned without counting as an attempt', async (t) => {
  const { inbox, app } = await startInboxAndApp(t)
  app.answer(() => {})
  const { json } = await post(inbox.intakeUrl, '{"n":1}')
  await eventually(() => app.deliveries.length === 1, { what: 'the delivery in flight' })
  await inbox.deliverer.stop()
  const shown = await inbox.store.show(String(json['id']))
  t.equal(shown?.event.status, 'pending')
  t.equal(shown?.attempts.length, 0, 'no attempt recorded')
  t.equal(shown?.event.attempts, 0)
})
