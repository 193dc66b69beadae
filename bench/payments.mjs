/**
 * `npm run bench -- --workloads payments`: the figures of payments followed to their final state
 * (issue 44) for the embedded store (SQLite) and for Redis (a local redis-server, appendonly no):
 * - settle: a provider event's arrival -> the payment settled, the confirming look-up on loopback
 *   included, with the default look-up bounds (2 at once, 5 per second) and events arriving at 4/s,
 *   each for a pending payout whose look-up says `successful`. Measured in the sidecar (from its log:
 *   the event stored -> the payment settled) and by the application (the event sent -> the
 *   `payment.succeeded` notification received, which adds the notification's store and delivery);
 * - memory: the sidecar's resident memory (VmRSS, the mean of the last 5 s) with no payment, and
 *   with --pending (100,000) pending payments all due at once, which it looks up meanwhile, at the
 *   configured rate: the busiest second of look-ups seen by the provider is reported beside it.
 * The sidecar runs as `npm start` runs it (dist-bundle/cli.mjs); the fake provider (dist/), the
 * application and this script share the machine's other core.
 * Options: --parts settle,memory --stores sqlite,redis --pending N (100000) --watch S (20: how long each memory run lasts)
 */
import { createServer } from 'node:http'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, rmSync, openSync, closeSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { freePort, start, stop, stopAll } from './lib/processes.mjs'
import { CLI, OUR_NODE_ARGS, ROOT_DIR, startRedis } from './lib/targets.mjs'

const { values: argv } = parseArgs({
  strict: false,
  options: { parts: { type: 'string', default: 'settle,memory' }, stores: { type: 'string', default: 'sqlite,redis' }, pending: { type: 'string', default: '100000' }, watch: { type: 'string', default: '20' } },
})
const { startFakeProvider, proxyEnvFor } = await import(join(ROOT_DIR, 'dist/fake-provider/index.js'))
const TOKEN = 'wht_benchPaymentsBench0001'
const SIGNING = `whsec_${Buffer.alloc(32, 44).toString('base64')}`
const PROVIDER_SECRET = 'bench-provider-secret'
const EVENTS = 120
const EVENT_RATE = 4
const quantile = (values, q) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN }
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
const log = (line) => process.stderr.write(`[bench payments ${new Date().toISOString().slice(11, 19)}] ${line}\n`)

async function startApp () {
  const arrivals = new Map()
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c)).on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString())
      if (body.type === 'payment.succeeded') arrivals.set(body.payment.externalReference, now())
      res.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { arrivals, server, url: `http://127.0.0.1:${server.address().port}/events` }
}

async function startSidecar (store, { provider, appUrl, dir, redisUrl, logFile }) {
  const [port, inboxPort] = [await freePort(), await freePort()]
  const env = {
    PATH: process.env.PATH, ...proxyEnvFor(provider), PROXY_EGRESS_IP_URL: 'off', PROXY_PORT: String(port), LOG_LEVEL: 'info',
    PROXY_PAYMENTS: 'on', PROXY_SEALING_SECRET: `whsec_${Buffer.alloc(32, 45).toString('base64')}`, PROXY_WEBHOOK_LISTEN: `127.0.0.1:${inboxPort}`, PROXY_WEBHOOK_PATH_TOKEN: TOKEN, PROXY_WEBHOOK_SIGNING_SECRET: SIGNING,
    PROXY_WEBHOOK_VERIFY_SECRET: PROVIDER_SECRET, PROXY_WEBHOOK_DELIVER_TO: appUrl, PROXY_WEBHOOK_STORE_PATH: join(dir, `${store}.db`),
    ...(redisUrl === null ? {} : { PROXY_REDIS_URL: redisUrl }),
  }
  const fd = openSync(logFile, 'a')
  const proc = start(`sidecar (${store})`, process.execPath, [...OUR_NODE_ARGS, CLI], { env, stdout: fd })
  closeSync(fd)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 400; i++) {
    try {
      const ready = await (await fetch(`${url}/readyz`)).json()
      if (ready.ready && ready.payments?.ready) break
    } catch {}
    await sleep(50)
  }
  return { proc, url, intakeUrl: `http://127.0.0.1:${inboxPort}/webhooks/${TOKEN}` }
}

async function settle (store, dir, redisUrl) {
  const provider = await startFakeProvider({ transactions: { settleAfterMs: 3_600_000 } })
  const app = await startApp()
  const logFile = join(dir, `settle-${store}.log`)
  const sidecar = await startSidecar(store, { provider, appUrl: app.url, dir, redisUrl, logFile })
  const txids = []
  for (let i = 0; i < EVENTS; i++) {
    const res = await fetch(`${sidecar.url}/sandbox/fiat/v1/payouts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 100 + i, currency: 'KES', externalReference: `bench-settle-${i}` }) })
    txids.push((await res.json()).data.transactionId)
  }
  const sent = new Map()
  const t0 = now()
  for (let i = 0; i < EVENTS; i++) {
    const wait = t0 + (i * 1000) / EVENT_RATE - now()
    if (wait > 0) await sleep(wait)
    provider.transactions.setStatus(txids[i], 'successful')
    sent.set(`bench-settle-${i}`, now())
    const res = await fetch(sidecar.intakeUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-webhook-signature': PROVIDER_SECRET }, body: JSON.stringify({ event: 'payout.status.updated', data: { transactionId: txids[i], externalReference: `bench-settle-${i}`, status: 'successful' } }) })
    await res.arrayBuffer()
  }
  for (let i = 0; i < 100 && app.arrivals.size < EVENTS; i++) await sleep(100)
  await stop(sidecar.proc)
  app.server.close()
  await provider.close()
  const client = [...sent].filter(([ref]) => app.arrivals.has(ref)).map(([ref, at]) => app.arrivals.get(ref) - at)
  // In the sidecar: each event's `webhook stored` -> its payment's `payment settled`, from the log's times.
  const lines = readFileSync(logFile, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  const stored = new Map(lines.filter((l) => l.msg === 'webhook stored').map((l) => [l.id, Date.parse(l.time)]))
  const matched = new Map(lines.filter((l) => l.msg === 'inbox event matched to a payment').map((l) => [l.payment, l.event]))
  const server = lines.filter((l) => l.msg === 'payment settled').map((l) => Date.parse(l.time) - stored.get(matched.get(l.payment))).filter((ms) => Number.isFinite(ms))
  const settledBy = lines.filter((l) => l.msg === 'payment settled').map((l) => l.settledBy)
  return { store, events: EVENTS, settled: server.length, byEvent: settledBy.filter((b) => b === 'event').length, server, client }
}

async function seed (store, count, path, redisUrl) {
  const { createSqlitePaymentStore } = await import(join(ROOT_DIR, 'dist/payments/sqlite-payment-store.js'))
  const { createRedisPaymentStore } = await import(join(ROOT_DIR, 'dist/payments/redis-payment-store.js'))
  const db = store === 'sqlite' ? await createSqlitePaymentStore(path) : await createRedisPaymentStore({ url: redisUrl, keyPrefix: 'pap:', log: pino({ level: 'silent' }) })
  const at = Date.now()
  const record = (i) => ({
    id: `pay_${String(i).padStart(22, '0')}`, key: `bench-${i}`, version: 1, state: 'pending', providerStatus: 'pending', caller: 'anonymous', environment: 'sandbox', interface: 'fiat', method: 'POST', path: '/v1/payouts',
    externalReference: `bench-pending-${i}`, transactionId: `txn_${i}`, transactionIdFrom: 'answer', amount: '100', currency: 'KES', createdAtMs: at - 3_600_000, sentAtMs: at - 3_600_000, sender: 'seed', rejoined: false,
    settledAtMs: null, settledBy: null, events: [], lookups: { count: 0, lastAtMs: null, lastOutcome: null }, scheduleFromMs: at - 3_600_000, step: 1, nextLookupAtMs: at - 60_000 + (i % 1000), lookupNow: false, notify: [], dueAtMs: at - 60_000 + (i % 1000),
  })
  for (let i = 0; i < count; i += 1000) await Promise.all(Array.from({ length: Math.min(1000, count - i) }, (_, j) => db.create(record(i + j))))
  await db.close()
}

async function memory (store, dir, redis, count, watchS) {
  const arrivals = []
  const provider = await startFakeProvider()
  provider.setUpstreamHandler((req, res) => {
    if (req.method !== 'GET' || !req.url.includes('/transactions/')) return false
    arrivals.push(now())
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"data":{"status":"pending"}}')
    return true
  })
  const app = await startApp()
  const run = async (label, seeded) => {
    const runDir = mkdtempSync(join(dir, `${store}-${label}-`))
    const redisUrl = redis === null ? null : `${redis.url}/${seeded === 0 ? 1 : 2}`
    if (seeded > 0) await seed(store, seeded, join(runDir, `${store}.db`), redisUrl)
    arrivals.length = 0
    const sidecar = await startSidecar(store, { provider, appUrl: app.url, dir: runDir, redisUrl, logFile: join(runDir, 'sidecar.log') })
    const started = now()
    const samples = []
    while (now() - started < watchS * 1000) {
      await sleep(500)
      if (now() - started > (watchS - 5) * 1000) samples.push(rssKb(sidecar.proc.child.pid))
    }
    const seen = [...arrivals]
    await stop(sidecar.proc)
    let busiest = 0
    for (const a of seen) busiest = Math.max(busiest, seen.filter((b) => b >= a && b < a + 1000).length)
    return { rssMiB: samples.reduce((s, v) => s + v, 0) / samples.length / 1024, lookups: seen.length, busiest }
  }
  const none = await run('none', 0)
  const loaded = await run('pending', count)
  app.server.close()
  await provider.close()
  return { store, count, watchS, none, loaded }
}

const dir = mkdtempSync(join(tmpdir(), 'pap-bench-payments-'))
const settleRows = []
const memoryRows = []
const loadBefore = loadavg()[0]
try {
  for (const store of String(argv.stores).split(',')) {
    const redis = store === 'redis' ? await startRedis({ core: null, dir }) : null
    if (String(argv.parts).includes('settle')) {
      log(`${store}: settle, ${EVENTS} events at ${EVENT_RATE}/s`)
      settleRows.push(await settle(store, dir, redis === null ? null : `${redis.url}/0`))
    }
    if (String(argv.parts).includes('memory')) {
      log(`${store}: memory, none then ${argv.pending} pending, ${argv.watch} s each`)
      memoryRows.push(await memory(store, dir, redis, Number(argv.pending), Number(argv.watch)))
    }
    if (redis !== null) await stop(redis.proc)
  }
} finally {
  await stopAll()
  rmSync(dir, { recursive: true, force: true })
}
const ms = (v) => v.toFixed(1)
process.stdout.write(`\nmachine load (1-min average) ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after\n`)
if (settleRows.length > 0) {
  process.stdout.write(`\n| store | settled (by event) | event stored -> settled, in the sidecar: p50 / p95 / p99 (ms) | event sent -> payment.succeeded at the application: p50 / p95 / p99 (ms) |\n|---|---|---|---|\n`)
  for (const r of settleRows) process.stdout.write(`| ${r.store} | ${r.settled} of ${r.events} (${r.byEvent}) | ${ms(quantile(r.server, 0.5))} / ${ms(quantile(r.server, 0.95))} / ${ms(quantile(r.server, 0.99))} | ${ms(quantile(r.client, 0.5))} / ${ms(quantile(r.client, 0.95))} / ${ms(quantile(r.client, 0.99))} |\n`)
}
if (memoryRows.length > 0) {
  process.stdout.write(`\n| store | resident memory, no payment (MiB) | with ${Number(argv.pending).toLocaleString('en-US')} pending, all due (MiB) | difference (MiB) | look-ups in ${argv.watch} s, busiest second (configured: 5/s) |\n|---|---|---|---|---|\n`)
  for (const r of memoryRows) process.stdout.write(`| ${r.store} | ${ms(r.none.rssMiB)} | ${ms(r.loaded.rssMiB)} | ${ms(r.loaded.rssMiB - r.none.rssMiB)} | ${r.loaded.lookups}, ${r.loaded.busiest} |\n`)
}
