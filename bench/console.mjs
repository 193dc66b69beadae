/**
 * `npm run bench -- --workloads console`: the console's pending-approvals page (SPEC §14, issue 47)
 * with 10,000 pending approvals and 1,000,000 webhook events in the sidecar's store (the embedded
 * SQLite file), server time (the page's `Server-Timing`) and time at the client, p50/p95/p99 over
 * pages spread across the whole list. Goal: server time ≤ 50 ms p95.
 *
 * The store is filled before the sidecar starts, through the stores' own code (dist/): approvals
 * sealed as a hold seals them (so every one verifies, as on a real page), events through the
 * inbox's intake in batches; the events are then marked delivered in one UPDATE, as a store holds
 * them after delivering (a million pending events would have the sidecar deliver them all).
 * The sidecar runs as `npm start` runs it (dist-bundle/cli.mjs), with approvals, the inbox and the
 * console on; the person signs in with `console-link`, as documented.
 * Options: --pending N (10000) --events N (1000000) --requests N (500)
 */
import Database from 'better-sqlite3'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort, start, stopAll } from './lib/processes.mjs'
import { CLI, OUR_NODE_ARGS, ROOT_DIR } from './lib/targets.mjs'

const { values: argv } = parseArgs({ strict: false, options: { pending: { type: 'string', default: '10000' }, events: { type: 'string', default: '1000000' }, requests: { type: 'string', default: '500' } } })
const APPROVALS = Number(argv.pending)
const EVENTS = Number(argv.events)
const REQUESTS = Number(argv.requests)
const SEALING = `whsec_${Buffer.alloc(32, 9).toString('base64')}`
const SIGNING = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
const WEBHOOK_SIGNING = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const quantile = (values, q) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN }

const { createSqliteApprovalStore } = await import(`${ROOT_DIR}dist/approvals/sqlite-approval-store.js`)
const { deriveSealKey, sealHold } = await import(`${ROOT_DIR}dist/approvals/approval-seal.js`)
const { createSqliteStore } = await import(`${ROOT_DIR}dist/outbox/sqlite-store.js`)

async function fill (path) {
  const started = performance.now()
  const approvals = await createSqliteApprovalStore(path)
  const key = deriveSealKey(SEALING)
  const now = Date.now()
  for (let i = 0; i < APPROVALS; i++) {
    const reference = `INV-${String(i).padStart(6, '0')}`
    const body = Buffer.from(JSON.stringify({ amount: 1500 + i, currency: 'KES', externalReference: reference, recipient: { name: 'Wanjiku Kamau', phone: '+254700000001', bank: { code: '01', account: '0123456789' } }, narration: 'Supplier invoice' }))
    const record = {
      id: `apr_bench${String(i).padStart(8, '0')}`, key: `bench-key-${i}`, fingerprint: `fp-${i}`, status: 'pending', caller: 'bench-agent', environment: 'sandbox', interface: 'fiat', method: 'POST',
      path: '/payouts', upstreamUrl: 'http://127.0.0.1:9/api/sandbox/b2b', query: '', headers: { 'content-type': 'application/json' }, body, amount: String(1500 + i), currency: 'KES',
      externalReference: reference, createdAtMs: now - (APPROVALS - i) * 1000, expiresAtMs: now + 86_400_000, reservations: [], decidedBy: null, decidedByCaller: null, reason: null, decidedAtMs: null, forward: 'none', decisionSeal: null, forwardSeal: null,
    }
    await approvals.create({ ...record, holdSeal: sealHold(key, record) })
  }
  await approvals.close()
  const inbox = await createSqliteStore({ path, retentionMs: 7 * 86_400_000, maxEvents: EVENTS + 1000, maxBytes: 4 * 1024 ** 3 })
  const BATCH = 5000
  for (let at = 0; at < EVENTS; at += BATCH) {
    await Promise.all(Array.from({ length: Math.min(BATCH, EVENTS - at) }, (_, j) => {
      const body = Buffer.from(`{"id":"evt_${at + j}","data":{"status":"successful","transactionId":"tx-${at + j}"}}`)
      return inbox.intake({ key: `evt_${at + j}`, bodySha256: `h${at + j}`, orderKey: null, body, headers: [['content-type', 'application/json']], source: '203.0.113.9', receivedAtMs: now - 3_600_000 })
    }))
  }
  await inbox.close()
  const db = new Database(path)
  db.exec("UPDATE events SET status = 'delivered', attempts = 1, is_head = 0")
  db.close()
  return (performance.now() - started) / 1000
}

const dir = mkdtempSync(join(tmpdir(), 'pap-bench-console-'))
try {
  const store = join(dir, 'webhooks.db')
  const fillS = await fill(store)
  const callers = join(dir, 'callers.json')
  writeFileSync(callers, JSON.stringify({ callers: [{ id: 'bench-agent', sources: ['127.0.0.1/32'], allow: [{ environments: ['sandbox'], interfaces: ['fiat'], methods: ['POST'], paths: ['/payouts'] }], amountLimits: [{ amount: '/amount', currency: '/currency', perRequest: { KES: 1_000_000 }, approveAbove: { KES: 1000 } }] }] }))
  const [port, inboxPort] = [await freePort(), await freePort()]
  const env = {
    PATH: process.env.PATH, PAYMENTS_FIAT_BASE_URL: 'http://127.0.0.1:9/api/b2b', PAYMENTS_SANDBOX_API_KEY: 'HC_bench', PAYMENTS_SANDBOX_PUBLIC_KEY: 'pk_bench', PROXY_EGRESS_IP_URL: 'off', PROXY_PORT: '0', LOG_LEVEL: 'warn',
    PROXY_CALLERS_FILE: callers, PROXY_APPROVAL_SIGNING_SECRET: SIGNING, PROXY_APPROVAL_SEALING_SECRET: SEALING, PROXY_WEBHOOK_STORE_PATH: store,
    PROXY_WEBHOOK_LISTEN: `127.0.0.1:${inboxPort}`, PROXY_WEBHOOK_PATH_TOKEN: 'wht_benchBenchBenchBench0001', PROXY_WEBHOOK_SIGNING_SECRET: WEBHOOK_SIGNING, PROXY_WEBHOOK_DELIVER_TO: 'http://127.0.0.1:9/events',
    PROXY_WEBHOOK_STORE_MAX_EVENTS: String(EVENTS + 1000), PROXY_CONSOLE_LISTEN: `127.0.0.1:${port}`, PROXY_CONSOLE_APPROVERS: 'ann@example.com',
  }
  const sidecar = start('sidecar', process.execPath, [...OUR_NODE_ARGS, CLI], { env })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 400; i++) {
    try { if ((await fetch(`${url}/healthz`)).ok) break } catch { await new Promise((resolve) => setTimeout(resolve, 50)) }
  }
  const link = execFileSync(process.execPath, [CLI, 'console-link', '--as', 'ann@example.com'], { env, encoding: 'utf8' }).trim()
  const signin = await fetch(`${url}/signin`, { method: 'POST', redirect: 'manual', headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' }, body: `secret=${link.slice(link.indexOf('#') + 1)}` })
  const cookie = signin.headers.getSetCookie()[0]?.split(';')[0]
  if (signin.status !== 303 || cookie === undefined) throw new Error(`sign-in failed: ${signin.status}\n${sidecar.err}`)
  const pages = Math.ceil(APPROVALS / 25)
  const server = []
  const client = []
  for (let i = 0; i < REQUESTS + 50; i++) {
    const page = 1 + Math.floor(Math.random() * pages)
    const t0 = performance.now()
    const res = await fetch(`${url}/approvals?page=${page}`, { headers: { cookie } })
    const text = await res.text()
    const elapsed = performance.now() - t0
    if (res.status !== 200 || !text.includes(`Page ${page} of ${pages}`) || (text.match(/<article /g) ?? []).length !== Math.min(25, APPROVALS - (page - 1) * 25)) throw new Error(`page ${page}: ${res.status}`)
    if (i < 50) continue
    server.push(Number(/dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1]))
    client.push(elapsed)
  }
  const ms = (v) => v.toFixed(1)
  process.stdout.write(`\nConsole, pending approvals page: ${APPROVALS} pending approvals and ${EVENTS} events in the SQLite store (filled in ${fillS.toFixed(0)} s), ${REQUESTS} requests of random pages, one at a time, after 50 not counted; ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}\n\n`)
  process.stdout.write('| figure | p50 | p95 | p99 | goal |\n|---|---|---|---|---|\n')
  process.stdout.write(`| server time (Server-Timing) | ${ms(quantile(server, 0.5))} ms | ${ms(quantile(server, 0.95))} ms | ${ms(quantile(server, 0.99))} ms | p95 ≤ 50 ms |\n`)
  process.stdout.write(`| at the client (loopback) | ${ms(quantile(client, 0.5))} ms | ${ms(quantile(client, 0.95))} ms | ${ms(quantile(client, 0.99))} ms | |\n`)
} finally {
  await stopAll()
  rmSync(dir, { recursive: true, force: true })
}
