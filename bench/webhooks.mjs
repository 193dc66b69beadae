/**
 * `npm run bench -- --workloads webhooks`: the webhook inbox's figures (issue 36), for the embedded
 * store (SQLite, synced group commits) and for Redis (a local redis-server, appendonly no):
 * - intake p50/p99 at a steady rate of 2 KiB events (500/s; an open loop: each send at its slot);
 * - sustained intake: events/s with 64 senders in a closed loop;
 * - receipt -> application's 2xx p95 at 200 events/s (the application here, on this machine, notes
 *   when each delivery arrives; the event carries its send time).
 * The sidecar runs as `npm start` runs it (dist-bundle/cli.mjs). The load and the application share
 * this process and the machine's other core; figures on a shared machine vary between runs.
 * Options: --duration S (5) --rate R (500) --e2e-rate R (200) --senders N (64) --stores sqlite,redis
 */
import { createServer } from 'node:http'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { freePort, start, stop, stopAll, waitForJsonLine } from './lib/processes.mjs'
import { CLI, OUR_NODE_ARGS, startRedis } from './lib/targets.mjs'

const { values: argv } = parseArgs({
  strict: false,
  options: { duration: { type: 'string', default: '5' }, rate: { type: 'string', default: '500' }, 'e2e-rate': { type: 'string', default: '200' }, senders: { type: 'string', default: '64' }, stores: { type: 'string', default: 'sqlite,redis' } },
})
const DURATION_MS = Number(argv.duration) * 1000
const TOKEN = 'wht_benchBenchBenchBench0001'
const PAD = 'x'.repeat(2048 - 60)
const quantile = (values, q) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN }
const now = () => performance.timeOrigin + performance.now()

async function startApp () {
  const arrivals = []
  const app = { arrivals, sent: 0 }
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c)).on('end', () => {
      const sentAt = JSON.parse(Buffer.concat(chunks).toString()).sentAt
      arrivals.push(now() - sentAt)
      res.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return Object.assign(app, { server, url: `http://127.0.0.1:${server.address().port}/events` })
}

async function startSidecar (store, appUrl, dir) {
  const port = await freePort()
  const env = {
    PATH: process.env.PATH, PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_bench', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_bench',
    PROXY_EGRESS_IP_URL: 'off', PROXY_PORT: '0', LOG_LEVEL: 'warn', PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`, PROXY_WEBHOOK_PATH_TOKEN: TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', PROXY_WEBHOOK_DELIVER_TO: appUrl, PROXY_WEBHOOK_STORE_PATH: join(dir, `${store}.db`),
    ...(store === 'redis' ? { PROXY_REDIS_URL: (await startRedis({ core: null, dir })).url } : {}),
  }
  const proc = start(`sidecar (${store})`, process.execPath, [...OUR_NODE_ARGS, CLI], { env })
  // Ready once the inbox answers (LOG_LEVEL=warn hides the ready line).
  for (let i = 0; i < 200; i++) {
    try { await request(`http://127.0.0.1:${port}/healthz`); break } catch { await new Promise((resolve) => setTimeout(resolve, 50)) }
  }
  return { proc, url: `http://127.0.0.1:${port}/webhooks/${TOKEN}` }
}

const agent = new Agent({ connections: 128 })
let seq = 0
let current = null
async function send (url) {
  current.sent++
  const started = now()
  const res = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: seq++, sentAt: started, pad: PAD }) })
  await res.body.dump()
  if (res.statusCode !== 200) throw new Error(`intake answered ${res.statusCode}`)
  return now() - started
}

/** Open loop: one send per slot of a fixed schedule, each timed from its slot. */
async function paced (url, rate, durationMs) {
  const latencies = []
  const inflight = []
  const t0 = now()
  for (let i = 0; i < (rate * durationMs) / 1000; i++) {
    const slot = t0 + (i * 1000) / rate
    const wait = slot - now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    inflight.push(send(url).then(() => { latencies.push(now() - slot) }))
  }
  await Promise.all(inflight)
  return latencies
}

async function saturated (url, senders, durationMs) {
  let done = 0
  const end = now() + durationMs
  await Promise.all(Array.from({ length: senders }, async () => { while (now() < end) { await send(url); done++ } }))
  return done / (durationMs / 1000)
}

const rows = []
const dir = mkdtempSync(join(tmpdir(), 'pap-bench-webhooks-'))
try {
  for (const store of String(argv.stores).split(',')) {
    const app = await startApp()
    current = app
    const sidecar = await startSidecar(store, app.url, dir)
    await paced(sidecar.url, 200, 1000) // warm-up
    const intake = await paced(sidecar.url, Number(argv.rate), DURATION_MS)
    const throughput = await saturated(sidecar.url, Number(argv.senders), DURATION_MS)
    // The saturation phase leaves a backlog: the receipt -> 2xx figure is of a drained inbox.
    const drainStarted = now()
    while (app.arrivals.length < app.sent && now() - drainStarted < 120_000) await new Promise((resolve) => setTimeout(resolve, 100))
    const drainS = (now() - drainStarted) / 1000
    app.arrivals.length = 0
    await paced(sidecar.url, Number(argv['e2e-rate']), DURATION_MS)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    rows.push({ store, drainS, intakeP50: quantile(intake, 0.5), intakeP99: quantile(intake, 0.99), throughput, e2eP50: quantile(app.arrivals, 0.5), e2eP95: quantile(app.arrivals, 0.95), delivered: app.arrivals.length })
    await stop(sidecar.proc)
    app.server.close()
  }
} finally {
  await stopAll()
  await agent.close()
  rmSync(dir, { recursive: true, force: true })
}
const ms = (v) => v.toFixed(2)
process.stdout.write(`\n| store | intake p50 / p99 at ${argv.rate}/s (ms) | sustained intake (events/s, ${argv.senders} senders) | backlog drained in (s) | receipt -> app p50 / p95 at ${argv['e2e-rate']}/s (ms) |\n|---|---|---|---|---|\n`)
for (const r of rows) process.stdout.write(`| ${r.store} | ${ms(r.intakeP50)} / ${ms(r.intakeP99)} | ${Math.round(r.throughput)} | ${r.drainS.toFixed(1)} | ${ms(r.e2eP50)} / ${ms(r.e2eP95)} (${r.delivered} delivered) |\n`)
