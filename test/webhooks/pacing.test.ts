/**
 * The inbox yields to the proxy (src/webhooks/intake-pacing.ts, docs/webhooks.md "While the proxy is
 * busy"), over real sockets:
 * - an event the pacer holds is answered 200 after the hold, stored and delivered: held, never
 *   refused; a request the route's checks refuse (path token, method) is refused unheld;
 * - a delivery the pacer holds is made after the hold; a stop during the hold releases the event
 *   without counting an attempt, and does not wait out the hold;
 * - every hold is counted, with its time (webhooks_held_total, webhooks_held_seconds_total);
 * - the proxy marks each forwarded request, and not its own endpoints (/healthz, /readyz, /metrics);
 * - through the sidecar's inbox thread: with the proxy busy, events are taken at
 *   PROXY_WEBHOOK_RATE_WHILE_PROXYING; with it idle, at once.
 */
import t from 'tap'
import { join } from 'node:path'
import { request } from 'undici'
import { Registry } from 'prom-client'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/load-config.js'
import { createProxyActivity, proxyIdleMs } from '../../src/ops/proxy-activity.js'
import { buildInbox } from '../../src/webhooks/inbox-server.js'
import { openStore } from '../../src/webhooks/open-store.js'
import { createStorage } from '../../src/storage/storage.js'
import { startInboxThread } from '../../src/webhooks/inbox-thread.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { captureLogger, providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { inboxEnv, PATH_TOKEN, post, startApp, startInboxAndApp, tempDir } from './inbox-harness.js'

const never = { waitMs: () => 0 }
const holding = (ms: number): { waitMs: () => number, asked: () => number } => {
  let asked = 0
  return { waitMs: () => { asked++; return ms }, asked: () => asked }
}

t.test('an event held by the pacer is answered 200 after the hold, stored and delivered; refusals are not held', async (t) => {
  const intake = holding(400)
  const registry = new Registry()
  const { inbox, app } = await startInboxAndApp(t, {}, { pacers: { intake, delivery: never }, registry })
  const started = performance.now()
  const res = await post(inbox.intakeUrl, '{"n":1}')
  const tookMs = performance.now() - started
  t.equal(res.status, 200)
  t.ok(tookMs >= 390, `answered after the hold (${Math.round(tookMs)} ms)`)
  await eventually(() => app.deliveries.length === 1, { what: 'the held event delivered' })
  const metrics = await registry.metrics()
  t.match(metrics, /payments_auth_proxy_webhooks_held_total\{kind="intake"\} 1\n/, 'the hold counted')
  t.match(metrics, /payments_auth_proxy_webhooks_held_seconds_total\{kind="intake"\} 0\.4\n/, 'its time counted')
  t.match(metrics, /payments_auth_proxy_webhooks_held_total\{kind="delivery"\} 0\n/, 'no delivery held')

  const asked = intake.asked()
  t.equal((await post(`${inbox.url}/webhooks/wht_notTheToken0000000000000`, '{}')).status, 404)
  t.equal((await fetch(inbox.intakeUrl, { method: 'PUT', body: '{}' })).status, 405)
  t.equal(intake.asked(), asked, 'refused unheld: the pacer is asked only for requests that passed the checks')
})

t.test('a delivery held by the pacer is made after the hold', async (t) => {
  const registry = new Registry()
  const { inbox, app } = await startInboxAndApp(t, {}, { pacers: { intake: never, delivery: holding(300) }, registry })
  const answeredAt = Date.now()
  t.equal((await post(inbox.intakeUrl, '{"n":2}')).status, 200)
  await eventually(() => app.deliveries.length === 1, { what: 'the held delivery made' })
  t.ok((app.deliveries[0]?.atMs ?? 0) - answeredAt >= 290, 'after the hold')
  t.match(await registry.metrics(), /payments_auth_proxy_webhooks_held_total\{kind="delivery"\} 1\n/, 'the hold counted')
})

t.test('a stop during a held delivery releases the event without counting an attempt, and does not wait out the hold', async (t) => {
  const app = await startApp(t)
  const { config } = loadConfig(inboxEnv(app.url, join(tempDir(t), 'webhooks.db')))
  if (config.webhooks === null) throw new Error('the inbox is off')
  const delivery = holding(10_000)
  const inbox = await buildInbox(config.webhooks, config.state, { logger: captureLogger().logger, pacers: { intake: never, delivery } })
  await inbox.app.listen({ host: '127.0.0.1', port: 0 })
  const address = inbox.app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  t.equal((await post(`http://127.0.0.1:${address.port}/webhooks/${PATH_TOKEN}`, '{"n":3}')).status, 200)
  // The pacer is asked as the attempt begins: from then on it is held.
  await eventually(() => delivery.asked() === 1, { what: 'the delivery held' })
  const closing = performance.now()
  await inbox.app.close()
  t.ok(performance.now() - closing < 5_000, `closed in ${Math.round(performance.now() - closing)} ms, the hold being 10 s`)
  const storage = createStorage(config.state, 'test')
  const store = await openStore(config.webhooks, { storage, log: captureLogger().logger })
  t.teardown(async () => { await store.close(); await storage.close() })
  t.match(await store.list({}), [{ status: 'pending', attempts: 0, attemptsTotal: 0 }], 'still pending, no attempt recorded')
  t.equal(app.deliveries.length, 0, 'never delivered')
})

t.test('the proxy marks each request it forwards, and not its own endpoints', async (t) => {
  const provider = await startProvider(t)
  const clock = systemClock
  const activity = createProxyActivity(clock)
  const idle = proxyIdleMs(activity.buffer, clock)
  const proxy = await startProxy(t, providerEnv(provider), { activity })
  await waitReady(proxy)
  for (const path of ['/healthz', '/readyz', '/metrics']) await (await request(`${proxy.url}${path}`)).body.dump()
  t.ok(idle() > 1_000_000, 'the proxy\'s own endpoints are not forwarding')
  await (await request(`${proxy.url}/sandbox/fiat/v1/x`)).body.dump()
  t.ok(idle() >= 0 && idle() < 1_000, 'a forwarded request marks the proxy busy')
})

t.test('through the inbox\'s thread: with the proxy busy, events are taken at PROXY_WEBHOOK_RATE_WHILE_PROXYING; idle, at once', async (t) => {
  const app = await startApp(t)
  const activity = createProxyActivity(systemClock)
  const { config } = loadConfig(inboxEnv(app.url, join(tempDir(t), 'webhooks.db'), { PROXY_WEBHOOK_RATE_WHILE_PROXYING: '4' }))
  if (config.webhooks === null) throw new Error('the inbox is off')
  const registry = new Registry()
  const inbox = await startInboxThread(config.webhooks, config.state, {
    logger: captureLogger().logger, logLevel: 'warn', lines: { write: () => true }, registry, proxyActivity: activity.buffer,
  })
  t.teardown(() => inbox.close())
  const url = `http://127.0.0.1:${await inbox.listen('127.0.0.1', 0)}/webhooks/${PATH_TOKEN}`
  const fourAtOnce = async (tag: string): Promise<number> => {
    const started = performance.now()
    const answers = await Promise.all([1, 2, 3, 4].map(async (n) => await post(url, `{"tag":"${tag}","n":${n}}`)))
    t.same(answers.map((a) => a.status), [200, 200, 200, 200], `${tag}: every event taken`)
    return performance.now() - started
  }
  const idleMs = await fourAtOnce('idle')
  activity.forwarded()
  const busyMs = await fourAtOnce('busy')
  // At 4 a second, a burst of 1: held 0, 0.25, 0.5 and 0.75 s. Idle, none is held: the count of
  // holds below is the busy round's three alone; the idle round's time is reported, since a loaded
  // machine stretches it.
  t.ok(busyMs >= 700, `busy: four events took ${Math.round(busyMs)} ms`)
  t.comment(`idle: four events took ${Math.round(idleMs)} ms`)
  await eventually(() => app.deliveries.length === 8, { what: 'all eight delivered', timeoutMs: HANG_MS })
  let heldLine = ''
  await eventually(async () => {
    heldLine = (await registry.metrics()).split('\n').find((line) => line.startsWith('payments_auth_proxy_webhooks_held_total{kind="intake"}')) ?? '(none)'
    return heldLine.endsWith(' 3')
  }, { what: 'the three holds counted on the main thread\'s registry', timeoutMs: HANG_MS, detail: () => `counted: ${heldLine}` })
})
