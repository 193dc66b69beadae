/**
 * `npm run bench -- --workloads webhooks-memory`: the sidecar's resident memory with 1,000,000
 * events stored against an empty store (issue 36: within 10 MiB), for the embedded store and Redis.
 *
 * Per store: the sidecar (as `npm start` runs it) on an empty store takes 2,000 events over HTTP and
 * delivers them; its RSS is then sampled for --watch seconds ("empty"). It is stopped, the store is
 * filled to --events 2 KiB events through the store's own module (dist/webhooks, the code the
 * sidecar runs: the same rows, indexes and Redis keys), and the sidecar is started again on it. The
 * application answers 200 at once, so the sidecar spends the watch working through the backlog:
 * peak and last RSS over that time ("full"). The memory of redis-server itself is not the sidecar's
 * and is not counted. Options: --events N (1000000) --watch S (20) --stores sqlite,redis
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

const { values: argv } = parseArgs({ strict: false, options: { events: { type: 'string', default: '1000000' }, watch: { type: 'string', default: '20' }, stores: { type: 'string', default: 'sqlite,redis' } } })
const EVENTS = Number(argv.events)
const WATCH_MS = Number(argv.watch) * 1000
const TOKEN = 'wht_benchBenchBenchBench0001'
const KEY_PREFIX = 'pap:'
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

async function startSidecar (store, { appUrl, dbPath, redisUrl }) {
  const port = await freePort()
  const env = {
    PATH: process.env.PATH, ...OUR_START_ENV, PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_bench', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_bench',
    PROXY_EGRESS_IP_URL: 'off', PROXY_PORT: '0', LOG_LEVEL: 'warn', PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`, PROXY_WEBHOOK_PATH_TOKEN: TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', PROXY_WEBHOOK_DELIVER_TO: appUrl, PROXY_WEBHOOK_STORE_PATH: dbPath,
    PROXY_WEBHOOK_STORE_MAX_EVENTS: String(EVENTS + 10_000), PROXY_WEBHOOK_STORE_MAX_BYTES: String(MAX_BYTES),
    ...(redisUrl === null ? {} : { PROXY_REDIS_URL: redisUrl, PROXY_REDIS_KEY_PREFIX: KEY_PREFIX }),
  }
  const proc = start(`sidecar (${store})`, process.execPath, [...OUR_NODE_ARGS, CLI], { env })
  for (let i = 0; i < 600; i++) {
    try { await request(`http://127.0.0.1:${port}/healthz`); break } catch { await sleep(50) }
  }
  return { proc, url: `http://127.0.0.1:${port}/webhooks/${TOKEN}` }
}

/** Samples RSS for the watch; returns peak and last, in MiB. */
async function watch (pid) {
  const peak = watchPeakRss(pid)
  await sleep(WATCH_MS)
  return { peakMiB: peak.stop() / 1024, lastMiB: rssKb(pid) / 1024 }
}

async function fill (store, { dbPath, redisUrl }) {
  const settings = { retentionMs: 30 * 86_400_000, maxEvents: EVENTS + 10_000, maxBytes: MAX_BYTES }
  const inbox = redisUrl === null
    ? await (await import('../dist/webhooks/sqlite-store.js')).createSqliteStore({ path: dbPath, ...settings })
    : (await import('../dist/webhooks/redis-inbox-store.js')).createRedisInboxStore({ url: redisUrl, keyPrefix: KEY_PREFIX, log: pino({ level: 'warn' }), ...settings })
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
  await inbox.close()
  return (performance.now() - started) / 1000
}

const agent = new Agent({ connections: 16 })
const rows = []
const dir = mkdtempSync(join(tmpdir(), 'pap-bench-webhooks-memory-'))
try {
  for (const store of String(argv.stores).split(',')) {
    const app = await startApp()
    const where = { appUrl: app.url, dbPath: join(dir, `${store}.db`), redisUrl: store === 'redis' ? (await startRedis({ core: null, dir })).url : null }
    const empty = await startSidecar(store, where)
    for (let i = 0; i < 2000; i += 16) {
      await Promise.all(Array.from({ length: 16 }, async (_, j) => {
        const res = await request(empty.url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: `evt_warm_${i + j}`, pad: PAD }) })
        await res.body.dump()
      }))
    }
    while (app.delivered < 2000) await sleep(50)
    const emptyRss = await watch(empty.proc.child.pid)
    await stop(empty.proc)

    const fillS = await fill(store, where)
    const delivered = app.delivered
    const full = await startSidecar(store, where)
    const fullRss = await watch(full.proc.child.pid)
    const worked = app.delivered - delivered
    await stop(full.proc)
    app.server.close()
    rows.push({ store, emptyRss, fullRss, fillS, worked, fileGiB: store === 'sqlite' ? statSync(where.dbPath).size / 1024 ** 3 : null })
  }
} finally {
  await stopAll()
  await agent.close()
  rmSync(dir, { recursive: true, force: true })
}
const mib = (v) => v.toFixed(1)
process.stdout.write(`\n| store | empty: peak / last RSS (MiB) | ${EVENTS.toLocaleString('en')} events stored: peak / last RSS (MiB) | difference of peaks (MiB) | delivered during the watch | filled in (s) |\n|---|---|---|---|---|---|\n`)
for (const r of rows) {
  process.stdout.write(`| ${r.store}${r.fileGiB === null ? '' : ` (file ${r.fileGiB.toFixed(2)} GiB)`} | ${mib(r.emptyRss.peakMiB)} / ${mib(r.emptyRss.lastMiB)} | ${mib(r.fullRss.peakMiB)} / ${mib(r.fullRss.lastMiB)} | ${mib(r.fullRss.peakMiB - r.emptyRss.peakMiB)} | ${r.worked} | ${r.fillS.toFixed(0)} |\n`)
}
