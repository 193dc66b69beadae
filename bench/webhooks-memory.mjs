/**
 * `npm run bench -- --workloads webhooks-memory`: the sidecar's resident memory with 1,000,000
 * events stored against an empty store (issue 36: within 10 MiB), for the embedded store and Redis.
 *
 * Per store, two stores side by side: one empty, one filled beforehand with --events 2 KiB events,
 * each delivered (a month of retained events), through the store's own module (dist/webhooks, the
 * code the sidecar runs: the same rows, indexes and Redis keys). Then, --rounds times, A B: the
 * sidecar (as `npm start` runs it) starts on one store, takes 2,000 events over HTTP and delivers them
 * to an application that answers 200 at once, and its RSS is sampled for --watch seconds (peak and
 * last). The medians are compared: one start of Node differs from the next by several MiB, more than
 * the goal, so a single pair would say nothing. The memory of redis-server itself is not the sidecar's
 * and is not counted. Options: --events N (1000000) --rounds N (3) --watch S (10) --stores sqlite,redis
 */
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { readFileSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pino } from 'pino'
import { Agent, request } from 'undici'
import { freePort, start, stop, stopAll, watchPeakRss } from './lib/processes.mjs'
import { CLI, OUR_NODE_ARGS, OUR_START_ENV, startRedis } from './lib/targets.mjs'

const { values: argv } = parseArgs({ strict: false, options: { events: { type: 'string', default: '1000000' }, watch: { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' }, stores: { type: 'string', default: 'sqlite,redis' } } })
const EVENTS = Number(argv.events)
const WATCH_MS = Number(argv.watch) * 1000
const ROUNDS = Number(argv.rounds)
const TOKEN = 'wht_benchBenchBenchBench0001'
const PAD = 'x'.repeat(2048 - 40)
const MAX_BYTES = 8 * 1024 ** 3
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])

async function startApp () {
  const app = { delivered: 0 }
  app.server = createServer((req, res) => { req.resume().on('end', () => { app.delivered++; res.end() }) })
  app.server.listen(0, '127.0.0.1')
  await once(app.server, 'listening')
  app.url = `http://127.0.0.1:${app.server.address().port}/events`
  return app
}

async function startSidecar (store, { appUrl, dbPath, redisUrl, keyPrefix }) {
  const port = await freePort()
  const env = {
    PATH: process.env.PATH, ...OUR_START_ENV, PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_bench', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_bench',
    PROXY_EGRESS_IP_URL: 'off', PROXY_PORT: '0', LOG_LEVEL: 'warn', PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`, PROXY_WEBHOOK_PATH_TOKEN: TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', PROXY_WEBHOOK_DELIVER_TO: appUrl, PROXY_WEBHOOK_STORE_PATH: dbPath,
    PROXY_WEBHOOK_STORE_MAX_EVENTS: String(EVENTS + 10_000), PROXY_WEBHOOK_STORE_MAX_BYTES: String(MAX_BYTES),
    ...(redisUrl === null ? {} : { PROXY_REDIS_URL: redisUrl, PROXY_REDIS_KEY_PREFIX: keyPrefix }),
  }
  const proc = start(`sidecar (${store})`, process.execPath, [...OUR_NODE_ARGS, CLI], { env })
  for (let i = 0; i < 600; i++) {
    try { await request(`http://127.0.0.1:${port}/healthz`); break } catch { await sleep(50) }
  }
  return { proc, url: `http://127.0.0.1:${port}/webhooks/${TOKEN}` }
}

/** Starts the sidecar on the store, sends 2,000 events through it, then samples its RSS for the watch (MiB). */
async function throughAndWatch (store, where, app) {
  const sidecar = await startSidecar(store, where)
  const before = app.delivered
  for (let i = 0; i < 2000; i += 16) {
    await Promise.all(Array.from({ length: 16 }, async (_, j) => {
      const res = await request(sidecar.url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `evt_through_${before + i + j}`, pad: PAD }) })
      await res.body.dump()
      if (res.statusCode !== 200) throw new Error(`intake answered ${res.statusCode}`)
    }))
  }
  while (app.delivered < before + 2000) await sleep(50)
  const peak = watchPeakRss(sidecar.proc.child.pid)
  await sleep(WATCH_MS)
  const rss = { peakMiB: peak.stop() / 1024, lastMiB: rssKb(sidecar.proc.child.pid) / 1024 }
  await stop(sidecar.proc)
  return rss
}

async function fill ({ dbPath, redisUrl, keyPrefix }) {
  const settings = { retentionMs: 30 * 86_400_000, maxEvents: EVENTS + 10_000, maxBytes: MAX_BYTES, orderMaxWaitMs: 900_000 }
  const inbox = redisUrl === null
    ? await (await import('../dist/outbox/sqlite-store.js')).createSqliteStore({ path: dbPath, ...settings })
    : (await import('../dist/outbox/redis-store.js')).createRedisOutboxStore({ url: redisUrl, keyPrefix, log: pino({ level: 'warn' }), ...settings })
  while (!inbox.ready()) await sleep(20)
  const started = performance.now()
  const at = Date.now()
  let n = 0
  const one = () => {
    const body = Buffer.from(JSON.stringify({ id: `evt_fill_${n}`, n: n++, pad: PAD }))
    const sha = createHash('sha256').update(body).digest('hex')
    return inbox.intake({ key: `sha256:${sha}`, bodySha256: sha, orderKey: null, body, headers: [['content-type', 'application/json']], source: '127.0.0.1', receivedAtMs: at })
  }
  while (n < EVENTS) await Promise.all(Array.from({ length: Math.min(512, EVENTS - n) }, one))
  const delivered = { status: 'delivered' }
  for (;;) {
    const due = await inbox.claimDue(at + 1, 512, 600_000)
    if (due.length === 0) break
    await Promise.all(due.map((e) => inbox.settle(e.id, { atMs: at + 1, status: 200, error: null, durationMs: 1 }, delivered)))
  }
  await inbox.close()
  return (performance.now() - started) / 1000
}

const agent = new Agent({ connections: 16 })
const rows = []
const dir = mkdtempSync(join(tmpdir(), 'pap-bench-webhooks-memory-'))
try {
  for (const store of String(argv.stores).split(',')) {
    const app = await startApp()
    const redisUrl = store === 'redis' ? (await startRedis({ core: null, dir })).url : null
    const empty = { appUrl: app.url, dbPath: join(dir, `${store}-empty.db`), redisUrl, keyPrefix: 'pap-empty:' }
    const full = { appUrl: app.url, dbPath: join(dir, `${store}-full.db`), redisUrl, keyPrefix: 'pap-full:' }
    const fillS = await fill(full)
    const runs = { empty: [], full: [] }
    for (let round = 0; round < ROUNDS; round++) {
      runs.empty.push(await throughAndWatch(store, empty, app))
      runs.full.push(await throughAndWatch(store, full, app))
    }
    app.server.close()
    rows.push({ store, runs, fillS, fileGiB: store === 'sqlite' ? statSync(full.dbPath).size / 1024 ** 3 : null })
  }
} finally {
  await stopAll()
  await agent.close()
  rmSync(dir, { recursive: true, force: true })
}
const mib = (v) => v.toFixed(1)
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const summary = (runs, key) => `${mib(median(runs.map((r) => r[key])))} (${mib(Math.min(...runs.map((r) => r[key])))}–${mib(Math.max(...runs.map((r) => r[key])))})`
process.stdout.write(`\n| store | empty store: peak RSS, median (range) | ${EVENTS.toLocaleString('en')} events stored: peak RSS | difference of medians | last RSS, empty / stored (medians) | filled in (s) |\n|---|---|---|---|---|---|\n`)
for (const { store, runs, fillS, fileGiB } of rows) {
  const difference = median(runs.full.map((r) => r.peakMiB)) - median(runs.empty.map((r) => r.peakMiB))
  process.stdout.write(`| ${store}${fileGiB === null ? '' : ` (file ${fileGiB.toFixed(2)} GiB)`} | ${summary(runs.empty, 'peakMiB')} MiB | ${summary(runs.full, 'peakMiB')} MiB | ${mib(difference)} MiB | ${mib(median(runs.empty.map((r) => r.lastMiB)))} / ${mib(median(runs.full.map((r) => r.lastMiB)))} MiB | ${fillS.toFixed(0)} |\n`)
}
