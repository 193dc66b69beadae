/**
 * `worker_passes_total{worker,outcome}` (src/ops/worker-passes.ts): every background loop that looks
 * at a store for due work counts its passes, `done` while its store answers and `failed` while it
 * does not, so an operator sees a loop that is stuck, and the tests that prove something did not
 * happen wait for the loop that would have done it (test/helpers/worker-passes.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { Registry } from 'prom-client'
import { loadConfig } from '../../src/load-config.js'
import { buildInbox } from '../../src/webhooks/inbox-server.js'
import { startInboxThread } from '../../src/webhooks/inbox-thread.js'
import { eventually, HANG_MS } from '../helpers/eventually.js'
import { captureLogger, providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { startRedis } from '../helpers/redis-server.js'
import { afterPasses, passesIn, type WorkerName } from '../helpers/worker-passes.js'
import { inboxEnv, startApp, startInbox } from '../webhooks/inbox-harness.js'

const WORKERS: WorkerName[] = ['approvals', 'approvals_forward', 'payments', 'webhooks', 'approval_notifications', 'payment_notifications']

t.test('each background loop counts its passes, on the proxy\'s /metrics', async (t) => {
  const provider = await startProvider(t)
  const dir = mkdtempSync(join(tmpdir(), 'pap-passes-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const callersFile = join(dir, 'callers.json')
  const approveAbove = [{ amount: '/amount', currency: '/currency', perRequest: { KES: 1000 }, approveAbove: { KES: 100 } }]
  writeFileSync(callersFile, JSON.stringify({ callers: [{ id: 'agent', keySha256: 'a'.repeat(64), allow: [{}], amountLimits: approveAbove }] }))
  const proxy = await startProxy(t, providerEnv(provider, {
    PROXY_CALLERS_FILE: callersFile,
    PROXY_APPROVAL_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    PROXY_APPROVAL_SEALING_SECRET: `whsec_${Buffer.alloc(32, 2).toString('base64')}`,
    PROXY_APPROVAL_NOTIFY_URL: 'http://127.0.0.1:9/approvals',
    PROXY_WEBHOOK_STORE_PATH: join(dir, 'approvals.db'),
    PROXY_PAYMENTS: 'on',
    PROXY_PAYMENTS_NOTIFY_URL: 'http://127.0.0.1:9/notifications',
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }))
  await waitReady(proxy)
  const app = await startApp(t)
  const { config } = loadConfig(inboxEnv(app.url, join(dir, 'webhooks.db')))
  if (config.webhooks === null) throw new Error('inbox off')
  const inbox = await buildInbox(config.webhooks, config.state, { logger: captureLogger().logger, registry: proxy.metrics.registry })
  t.teardown(() => inbox.app.close())
  await inbox.app.ready()

  const exposition = await (await fetch(`${proxy.url}/metrics`)).text()
  t.match(exposition, /^# TYPE payments_auth_proxy_worker_passes_total counter$/m, 'one counter')
  for (const worker of WORKERS) {
    t.match(exposition, new RegExp(`^payments_auth_proxy_worker_passes_total\\{worker="${worker}",outcome="failed"\\} 0$`, 'm'), `${worker}: no failed pass`)
  }
  // Each loop looks once a second at least: two more passes of each, with nothing to do.
  await afterPasses(WORKERS.map((worker) => passesIn(proxy.metrics.registry, worker)), { what: WORKERS.join(', ') })
  t.pass('every loop counted two more passes')
})

t.test('a loop whose store does not answer counts failed passes, and done ones again once it does', async (t) => {
  const redis = await startRedis(t)
  const app = await startApp(t)
  const registry = new Registry()
  const inbox = await startInbox(t, inboxEnv(app.url, '/nonexistent/not-used.db', { PROXY_REDIS_URL: redis.url }), { registry })
  await eventually(() => inbox.store.ready(), { what: 'connected' })
  const failed = async (): Promise<number> => {
    const { values } = await (registry.getSingleMetric('payments_auth_proxy_worker_passes_total') as NonNullable<ReturnType<Registry['getSingleMetric']>>).get()
    return values.find((v) => v.labels['worker'] === 'webhooks' && v.labels['outcome'] === 'failed')?.value ?? 0
  }
  t.equal(await failed(), 0)
  await redis.stop()
  await eventually(async () => await failed() >= 2, { what: 'two failed passes', timeoutMs: HANG_MS })
  await redis.start()
  await eventually(() => inbox.store.ready(), { what: 'reconnected', timeoutMs: HANG_MS })
  await afterPasses(passesIn(registry, 'webhooks'), { what: 'the deliveries' })
  t.pass('done passes again')
})

t.test('the inbox in its thread: its deliveries\' passes reach the main thread\'s registry', async (t) => {
  const app = await startApp(t)
  const dir = mkdtempSync(join(tmpdir(), 'pap-passes-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { config } = loadConfig(inboxEnv(app.url, join(dir, 'webhooks.db')))
  if (config.webhooks === null) throw new Error('inbox off')
  const registry = new Registry()
  const inbox = await startInboxThread(config.webhooks, config.state, { logger: captureLogger().logger, logLevel: 'warn', lines: { write: () => true }, registry })
  t.teardown(() => inbox.close())
  // Deliveries start with the listener.
  await inbox.listen('127.0.0.1', 0)
  await afterPasses(passesIn(registry, 'webhooks'), { what: 'the thread\'s deliveries' })
  t.pass('counted on the main thread')
})
