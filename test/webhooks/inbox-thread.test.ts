/**
 * The inbox as the sidecar runs it (src/webhooks/inbox-thread.ts): whole, in a thread of its own.
 * An event taken there is stored and delivered from there; the thread's log lines reach the main
 * thread's destination whole, with no secret in them; its counts reach the registry the proxy's
 * /metrics serves; payments are told of stored events and read them, bodies as Buffers; a replay
 * from the main thread wakes the thread's deliverer; a taken port fails with its code; a store that
 * cannot be opened fails the start as a sentence for the operator; closing answers what is in
 * progress and ends the thread.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:net'
import { once } from 'node:events'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Registry } from 'prom-client'
import { loadConfig, type Env } from '../../src/load-config.js'
import { OperatorError } from '../../src/operator-error.js'
import { startInboxThread, type ThreadedInbox } from '../../src/webhooks/inbox-thread.js'
import { eventually } from '../helpers/eventually.js'
import { captureLogger } from '../helpers/harness.js'
import { inboxEnv, PATH_TOKEN, post, SIGNING_SECRET, startApp, tempDir, VERIFY_SECRET } from './inbox-harness.js'

interface Threaded { inbox: ThreadedInbox, lines: () => string, registry: Registry, stored: () => number }

async function startThreaded (t: Test, env: Env, logLevel = 'info'): Promise<Threaded> {
  const { config } = loadConfig(env)
  if (config.webhooks === null) throw new Error('the inbox is off')
  let lines = ''
  let stored = 0
  const registry = new Registry()
  const inbox = await startInboxThread(config.webhooks, config.state, {
    logger: captureLogger().logger, logLevel, lines: { write: (text: string) => { lines += text } }, registry, onStored: () => { stored++ },
  })
  t.teardown(() => inbox.close())
  return { inbox, lines: () => lines, registry, stored: () => stored }
}

t.test('an event taken on the inbox\'s thread is stored and delivered there; its lines, counts, readiness and events reach the main thread', async (t) => {
  const app = await startApp(t)
  const { inbox, lines, registry, stored } = await startThreaded(t, inboxEnv(app.url, join(tempDir(t), 'webhooks.db'), {
    PROXY_WEBHOOK_EVENT_ID_POINTER: '/id', PROXY_WEBHOOK_VERIFY_SECRET: VERIFY_SECRET,
  }), 'trace')
  const lastBefore = await inbox.store.lastEventSeq()
  const port = await inbox.listen('127.0.0.1', 0)
  const url = `http://127.0.0.1:${port}/webhooks/${PATH_TOKEN}`
  const res = await post(url, '{"id":"evt_in_thread"}', { 'x-webhook-signature': VERIFY_SECRET })
  t.equal(res.status, 200)
  t.match(res.json, { received: true, id: /^msg_/ })
  t.match(await post(url, '{"id":"evt_in_thread"}', { 'x-webhook-signature': VERIFY_SECRET }), { status: 200, json: { id: res.json['id'], duplicate: true } }, 'a duplicate is caught')
  t.match(await post(url, '{"id":"evt_unsigned"}', { 'x-webhook-signature': 'not-it' }), { status: 401, json: { error: { code: 'WEBHOOK_SIGNATURE_INVALID' } } })
  t.equal((await post(`http://127.0.0.1:${port}/webhooks/wht_notTheToken0000000000000`, '{}')).status, 404)
  await eventually(() => app.deliveries.some((d) => d.headers['webhook-id'] === res.json['id']), { what: 'delivered by the thread\'s deliverer' })
  t.equal(app.deliveries.length, 1, 'delivered once')
  t.equal(app.deliveries[0]?.body.toString(), '{"id":"evt_in_thread"}')
  t.ok(stored() >= 1, 'the main thread was told an event was stored')

  await eventually(() => lines().includes('"msg":"webhook refused"') && lines().includes('"msg":"webhook delivered"'), { what: 'the thread\'s lines written' })
  const records = lines().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.match(records.find((r) => r['msg'] === 'webhook stored'), { level: 30, component: 'webhooks', id: res.json['id'], key: 'id:evt_in_thread' }, 'whole JSON lines, as the sidecar writes its own')
  t.match(records.find((r) => r['msg'] === 'webhook duplicate'), { component: 'webhooks', id: res.json['id'] })
  for (const secret of [PATH_TOKEN, VERIFY_SECRET, SIGNING_SECRET]) t.notOk(lines().includes(secret), `no line holds ${secret.slice(0, 8)}...`)

  await eventually(async () => /webhook_deliveries_total\{outcome="delivered"\} 1\n/.test(await registry.metrics()), { what: 'the delivery counted on the main thread\'s registry' })
  const metrics = await registry.metrics()
  t.match(metrics, /webhooks_received_total\{outcome="stored"\} 1\n/)
  t.match(metrics, /webhooks_received_total\{outcome="duplicate"\} 1\n/)
  t.match(metrics, /webhooks_received_total\{outcome="unauthorized"\} 1\n/)
  t.match(metrics, /webhook_intake_duration_seconds_count 3\n/, 'the stored, the duplicate and the refused intake timed')
  t.match(metrics, /webhooks_pending 0\n/, 'the gauges read the thread\'s store')

  t.match(await inbox.readiness(), { ready: true, pending: 0, failed: 0 })
  const listed = await inbox.store.list({})
  t.match(listed, [{ id: res.json['id'], status: 'delivered' }], 'listed from the thread\'s store')
  const shown = await inbox.store.show(String(res.json['id']))
  t.ok(Buffer.isBuffer(shown?.event.body), 'a shown body is a Buffer again')
  t.equal(shown?.event.body.toString(), '{"id":"evt_in_thread"}')
  const after = await inbox.store.eventsAfter(lastBefore, 10)
  t.match(after, [{ id: res.json['id'] }], 'payments read the event after their cursor')
  t.ok(Buffer.isBuffer(after[0]?.body), 'its body a Buffer')
  t.equal(await inbox.store.lastEventSeq(), after[0]?.seq)
  t.equal(await inbox.store.show('msg_notAnEventOfThisStore'), null)
})

/** A thread of this process: its name (cut at 15 characters by the kernel) and nice value (Linux's /proc). */
function threadStat (task: string): { name: string, nice: number } {
  const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8')
  // The fields after the name: state is the first, nice the 17th.
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) }
}

t.test('the inbox\'s thread and its store\'s SQLite thread run at a lower scheduling priority; the main thread and libuv\'s pool do not', { skip: process.platform !== 'linux' && 'Linux only' }, async (t) => {
  const app = await startApp(t)
  const before = new Set(readdirSync('/proc/self/task'))
  await startThreaded(t, inboxEnv(app.url, join(tempDir(t), 'webhooks.db')))
  const main = threadStat(String(process.pid)).nice
  // Node 22 does not name worker threads for the kernel (24 does): they are found among the threads started meanwhile.
  const started = readdirSync('/proc/self/task').filter((task) => !before.has(task)).map(threadStat)
  const lowered = started.filter((th) => th.nice === Math.min(19, main + 10))
  t.ok(lowered.length >= 2, `the inbox's thread and its SQLite thread (and what they start) at nice ${main} + 10: ${JSON.stringify(started)}`)
  for (const name of ['webhook inbox', 'sqlite outbox']) {
    if (started.some((th) => th.name === name)) t.ok(lowered.some((th) => th.name === name), `${name} is lowered`)
  }
  const pool = readdirSync('/proc/self/task').map(threadStat).filter((th) => th.name === 'libuv-worker')
  t.ok(pool.length > 0, 'libuv\'s pool is started')
  t.ok(pool.every((th) => th.nice === main), `libuv's pool at the main thread's nice ${main}: ${JSON.stringify(pool)}`)
})

t.test('a replay from the main thread wakes the thread\'s deliverer', async (t) => {
  const app = await startApp(t)
  app.answer((_req, res) => { res.statusCode = 500; res.end() })
  const { inbox } = await startThreaded(t, inboxEnv(app.url, join(tempDir(t), 'webhooks.db'), { PROXY_WEBHOOK_RETRY_SCHEDULE: '50ms' }))
  const port = await inbox.listen('127.0.0.1', 0)
  const res = await post(`http://127.0.0.1:${port}/webhooks/${PATH_TOKEN}`, '{"a":1}')
  const id = String(res.json['id'])
  await eventually(async () => (await inbox.store.list({ status: 'failed' })).length === 1, { what: 'failed after its two attempts' })
  app.answer((_req, res) => { res.end('ok') })
  t.same(await inbox.store.replay({ ids: [id] }, Date.now()), [id])
  inbox.deliverer.wake()
  await eventually(async () => (await inbox.store.show(id))?.event.status === 'delivered', { what: 'delivered after the replay', timeoutMs: 3_000 })
  t.equal(app.deliveries.length, 3)
})

t.test('a taken port fails listen with its code, so the CLI names the variable', async (t) => {
  const app = await startApp(t)
  const taken = createServer().listen(0, '127.0.0.1')
  await once(taken, 'listening')
  t.teardown(() => taken.close())
  const address = taken.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  const { inbox } = await startThreaded(t, inboxEnv(app.url, join(tempDir(t), 'webhooks.db')))
  await t.rejects(inbox.listen('127.0.0.1', address.port), { code: 'EADDRINUSE' })
})

t.test('a store that cannot be opened fails the start as a sentence for the operator', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'a-file'), '')
  const { config } = loadConfig(inboxEnv('http://127.0.0.1:9/events', join(dir, 'a-file', 'webhooks.db')))
  if (config.webhooks === null) throw new Error('the inbox is off')
  const started = startInboxThread(config.webhooks, config.state, { logger: captureLogger().logger, logLevel: 'info', lines: { write: () => true } })
  await t.rejects(started, OperatorError)
  await t.rejects(started, { message: /PROXY_WEBHOOK_STORE_PATH=.*cannot be opened/ })
})

t.test('closing answers the intakes in progress and ends the thread; every event answered 200 is in the store', async (t) => {
  const app = await startApp(t)
  const env = inboxEnv(app.url, join(tempDir(t), 'webhooks.db'))
  const { inbox } = await startThreaded(t, env)
  const port = await inbox.listen('127.0.0.1', 0)
  const sending = Array.from({ length: 20 }, (_, i) => post(`http://127.0.0.1:${port}/webhooks/${PATH_TOKEN}`, `{"n":${i}}`))
  await eventually(async () => (await inbox.readiness()).pending + app.deliveries.length > 0, { what: 'the first intake stored' })
  const closed = inbox.close()
  const answers = await Promise.allSettled(sending)
  await closed
  await t.rejects(inbox.store.stats(), /not running/, 'reads fail once the thread ended')
  // A sender got its 200 or no answer at all (refused or closed): never a 200 for an event not stored.
  const answered = answers.flatMap((a) => a.status === 'fulfilled' ? [a.value] : [])
  t.ok(answered.length > 0, 'some were answered')
  for (const a of answered) t.equal(a.status, 200)
  const again = await startThreaded(t, env)
  const kept = new Set((await again.inbox.store.list({ limit: 100 })).map((e) => e.id))
  for (const a of answered) t.ok(kept.has(String(a.json['id'])), `${String(a.json['id'])} is in the store`)
})
