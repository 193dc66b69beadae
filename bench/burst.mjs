/**
 * `npm run bench -- --workloads burst`: a provider's burst (issue 56 item 5). `--events` (1,000)
 * events of 2 KiB sent at once to the webhook inbox of a sidecar run as `npm start` runs it, each on
 * a connection of its own opened in the same instant (a provider's retry storm after an outage, a
 * batch job), for the SQLite store and a local Redis, with the proxy idle and with the proxy serving
 * its GET at `--proxy-rate` meanwhile (the inbox then holds events up to 0.8 s, intake-pacing.ts).
 * Every event must be answered 200, each within SPEC §10's 5 s.
 *
 * For each burst: the answers by status (a reset or refused connection counted by its error code),
 * the slowest answer and the p50/p99 (from the instant the burst began to the answer's last byte), the
 * slowest connect and how many connects took 1 s or more (a SYN the listener's backlog dropped,
 * retried by the sender's kernel after 1 s, 3 s, 7 s), and the kernel's listen-queue overflows
 * meanwhile (TcpExtListenOverflows, for the whole machine). Beside each: the load average and the
 * synced 2 KiB write time of the store's disk before it (lib/disk-sync.mjs), as the other webhook
 * benches print them: the same build reads differently on a quiet and on a busy machine.
 *
 * Options: --events N (1000) --bytes B (2048) --stores sqlite,redis --rounds N (3)
 * --proxy idle,busy --proxy-rate R (1000) --cli PATH (the build measured) --compare-cli PATH
 * (another build, e.g. a worktree of the previous commit, measured in the same rounds, interleaved)
 */
import { createServer } from 'node:http'
import { connect } from 'node:net'
import { once } from 'node:events'
import { closeSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { syncedWriteMs } from './lib/disk-sync.mjs'
import { ORPHAN_GUARD, freePort, logFifo, start, stop, stopAll } from './lib/processes.mjs'
import { CLI, OUR_NODE_ARGS, ROOT_DIR, ourProxyEnv, startRedis, startUpstream } from './lib/targets.mjs'

const { values: argv } = parseArgs({
  strict: false,
  options: {
    events: { type: 'string', default: '1000' },
    bytes: { type: 'string', default: '2048' },
    stores: { type: 'string', default: 'sqlite,redis' },
    rounds: { type: 'string', default: '3' },
    proxy: { type: 'string', default: 'idle,busy' },
    'proxy-rate': { type: 'string', default: '1000' },
    cli: { type: 'string', default: CLI },
    'compare-cli': { type: 'string' },
  },
})
const EVENTS = Number(argv.events)
const EVENT_BYTES = Number(argv.bytes)
const ROUNDS = Number(argv.rounds)
const PROXY_RATE = Number(argv['proxy-rate'])
const TOKEN = 'wht_benchBenchBenchBench0001'
/** SPEC §10: the store's answer, 200 or 503, within 5 s. */
const ANSWER_WITHIN_MS = 5_000
/** A connection that has answered nothing by then counts as lost ('timeout'). */
const GIVE_UP_MS = 60_000
/** The proxy's GET runs this long before a busy burst: the inbox sees the proxy busy. */
const LOAD_SETTLE_MS = 2_000
const WARM_UP_EVENTS = 200
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const load1 = () => Math.round(loadavg()[0] * 10) / 10
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN

/** A provider's event of EVENT_BYTES bytes, its id at /id (PROXY_WEBHOOK_EVENT_ID_POINTER). */
function eventBody (id) {
  const base = JSON.stringify({ id: `evt_${id}`, type: 'payment.updated', data: { externalReference: `ref-${id}`, amount: 1500, currency: 'KES', status: 'SUCCESSFUL' }, pad: '' })
  return `${base.slice(0, -2)}${'x'.repeat(Math.max(0, EVENT_BYTES - base.length))}"}`
}

/** The kernel's count of connections dropped because a listener's accept queue was full. */
function listenOverflows () {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'))
  const [names, values] = lines.map((l) => l.trim().split(/\s+/))
  const at = names?.indexOf('ListenOverflows') ?? -1
  return at < 0 ? null : Number(values[at])
}

/** The application: answers every delivery 200 at once. */
async function startApp () {
  const app = { delivered: 0 }
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { app.delivered++; res.end() })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return Object.assign(app, { server, url: `http://127.0.0.1:${server.address().port}/events` })
}

async function startSidecar ({ cli, store, app, upstream, dir, name }) {
  const port = await freePort()
  const proxyPort = await freePort()
  const env = {
    PATH: process.env.PATH,
    ...ourProxyEnv(proxyPort, upstream.origin),
    PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    PROXY_WEBHOOK_PATH_TOKEN: TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    PROXY_WEBHOOK_DELIVER_TO: app.url,
    PROXY_WEBHOOK_STORE_PATH: join(dir, `${name}.db`),
    PROXY_WEBHOOK_EVENT_ID_POINTER: '/id',
    ...(store === 'redis' ? { PROXY_REDIS_URL: (await startRedis({ core: null, dir })).url } : {}),
  }
  const logFd = logFifo(`sidecar (${name})`, join(dir, `${name}.log`))
  const proc = start(`sidecar (${name})`, process.execPath, [...OUR_NODE_ARGS, '--import', ORPHAN_GUARD, cli], { env, cwd: dir, stdout: logFd, session: true })
  closeSync(logFd)
  for (let i = 0; ; i++) {
    try {
      const health = await fetch(`http://127.0.0.1:${port}/healthz`)
      const ready = await fetch(`http://127.0.0.1:${proxyPort}/readyz`)
      if (health.ok && ready.ok) break
    } catch {}
    if (i > 600 || proc.child.exitCode !== null) throw new Error(`the sidecar did not start\n${proc.err}`)
    await sleep(50)
  }
  return { proc, port, proxyUrl: `http://127.0.0.1:${proxyPort}/fiat/bench/small`, metricsUrl: `http://127.0.0.1:${proxyPort}/metrics` }
}

/** One event on a connection of its own, all written in one go; resolves with its answer's status (or error code) and times. */
function sendOne (port, body, t0) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let connectMs = null
    let answer = ''
    const timer = setTimeout(() => { socket.destroy(); resolve({ status: 'timeout', connectMs, ms: GIVE_UP_MS }) }, GIVE_UP_MS)
    socket.setEncoding('latin1')
    socket.once('connect', () => {
      connectMs = performance.now() - t0
      // Not ended: a sender's FIN would have Node's server drop the request (no half-open HTTP).
      socket.write(`POST /webhooks/${TOKEN} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
    })
    socket.on('data', (chunk) => { answer += chunk })
    socket.once('error', (err) => { clearTimeout(timer); resolve({ status: err.code ?? 'error', connectMs, ms: performance.now() - t0 }) })
    socket.once('close', () => {
      clearTimeout(timer)
      resolve({ status: /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 'no answer', connectMs, ms: performance.now() - t0 })
    })
  })
}

let sequence = 0
async function burst (port, events = EVENTS) {
  const bodies = Array.from({ length: events }, () => eventBody(`b${sequence++}`))
  const overflowsBefore = listenOverflows()
  const t0 = performance.now()
  const answers = await Promise.all(bodies.map((body) => sendOne(port, body, t0)))
  const overflows = listenOverflows()
  const statuses = {}
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b)
  const connects = answers.map((a) => a.connectMs ?? Infinity)
  return {
    statuses,
    ok: statuses['200'] ?? 0,
    slowestMs: ms.at(-1),
    p50Ms: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    over5s: ms.filter((m) => m > ANSWER_WITHIN_MS).length,
    slowestConnectMs: Math.max(...connects.filter(Number.isFinite), 0),
    connectsOver1s: connects.filter((c) => c >= 1_000).length,
    listenOverflows: overflows === null || overflowsBefore === null ? null : overflows - overflowsBefore,
  }
}

/** The proxy's GET at PROXY_RATE from a load generator of its own (bench/load.mjs), until stopped. */
function proxyLoad (url) {
  const opts = { mode: 'rate', url, rate: PROXY_RATE, connections: 20, durationS: 3_600, warmupS: 0 }
  return start('proxy GET load', process.execPath, [new URL('./load.mjs', import.meta.url).pathname, JSON.stringify(opts)], { session: true })
}

/** Events held while the proxy was busy (webhooks_held_total{kind="intake"}), from the proxy's /metrics. */
async function heldIntakes (sidecar) {
  const text = await (await fetch(sidecar.metricsUrl)).text()
  return Number(/webhooks_held_total\{kind="intake"\} (\d+)/.exec(text)?.[1] ?? 0)
}

async function drained (app, expected, limitMs = 120_000) {
  const deadline = Date.now() + limitMs
  while (app.delivered < expected && Date.now() < deadline) await sleep(50)
}

const builds = [{ label: 'this build', cli: argv.cli }, ...(argv['compare-cli'] === undefined ? [] : [{ label: argv['compare-cli'], cli: argv['compare-cli'] }])]
const stamp = new Date().toISOString().replace(/[:.]/g, '-')
const dir = mkdtempSync(join(tmpdir(), 'pap-bench-burst-'))
const rows = []
let app = null
try {
  const upstream = await startUpstream('bench upstream', { core: null, tokenLifetimeS: 600, session: true })
  app = await startApp()
  let expected = 0
  const sidecars = new Map()
  for (const store of String(argv.stores).split(',')) {
    for (const [b, build] of builds.entries()) {
      const sidecar = await startSidecar({ cli: build.cli, store, app, upstream, dir, name: `${store}-${b}` })
      // A sidecar that has served before: its paths compiled, its store's file and connections warm.
      const warm = await burst(sidecar.port, WARM_UP_EVENTS)
      expected += warm.ok
      sidecars.set(`${store}-${b}`, sidecar)
    }
  }
  await drained(app, expected)
  for (let round = 0; round < ROUNDS; round++) {
    for (const store of String(argv.stores).split(',')) {
      for (const mode of String(argv.proxy).split(',')) {
        // Builds alternate which goes first, so that neither always meets the machine's same moment.
        for (const b of round % 2 === 0 ? builds.keys() : [...builds.keys()].reverse()) {
          const sidecar = sidecars.get(`${store}-${b}`)
          await drained(app, expected)
          const row = { build: builds[b].label, store, mode, round: round + 1, load: load1(), syncedWrite: syncedWriteMs(dir) }
          const load = mode === 'busy' ? proxyLoad(sidecar.proxyUrl) : null
          if (load !== null) await sleep(LOAD_SETTLE_MS)
          const heldBefore = await heldIntakes(sidecar)
          Object.assign(row, await burst(sidecar.port))
          row.held = await heldIntakes(sidecar) - heldBefore
          if (load !== null) await stop(load)
          row.loadAfter = load1()
          expected += row.ok
          rows.push(row)
          process.stderr.write(`${row.build}, ${store}, proxy ${mode}, round ${round + 1}: ${row.ok}/${EVENTS} answered 200, slowest ${Math.round(row.slowestMs)} ms (load ${row.load})\n`)
        }
      }
    }
  }
  for (const sidecar of sidecars.values()) await stop(sidecar.proc, 15_000)
} finally {
  await stopAll()
  app?.server.closeAllConnections()
  app?.server.close()
  rmSync(dir, { recursive: true, force: true })
}

const ms = (v) => (v === undefined || Number.isNaN(v) ? '-' : String(Math.round(v)))
const lines = [`# A burst of webhook events, ${new Date().toISOString()}`, '']
lines.push(`${builds.map((b) => b.label).join(' and ')}, Node ${process.version}; ${EVENTS} events of ${EVENT_BYTES} B sent at once, each on a connection of its own; the proxy idle, or serving its GET at ${PROXY_RATE}/s (bench/load.mjs) from ${LOAD_SETTLE_MS / 1000} s before the burst; nothing pinned; the machine's other processes as they were (the load average).`, '')
lines.push('| build | store | proxy | round | load avg (before, after) | synced 2 KiB write p50 / p99 (ms) | answered 200 | other answers | slowest answer (ms) | p50 / p99 (ms) | over 5 s | slowest connect (ms) | connects ≥ 1 s | listen overflows | held |')
lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const other = Object.entries(r.statuses).filter(([s]) => s !== '200').map(([s, n]) => `${n} ${s}`).join(', ') || '-'
  lines.push(`| ${r.build} | ${r.store} | ${r.mode} | ${r.round} | ${r.load}, ${r.loadAfter} | ${r.syncedWrite.p50} / ${r.syncedWrite.p99} | ${r.ok} / ${EVENTS} | ${other} | ${ms(r.slowestMs)} | ${ms(r.p50Ms)} / ${ms(r.p99Ms)} | ${r.over5s} | ${ms(r.slowestConnectMs)} | ${r.connectsOver1s} | ${r.listenOverflows ?? '-'} | ${r.held} |`)
}
lines.push('', '- slowest answer, p50, p99: from the instant the burst began to the last byte of each answer; connects ≥ 1 s: SYNs a full accept queue dropped, sent again by the sender\'s kernel; listen overflows: the kernel\'s TcpExtListenOverflows over the burst (the whole machine); held: events the inbox held while the proxy was busy.')
const text = `${lines.join('\n')}\n`
process.stdout.write(`\n${text}`)
const results = join(ROOT_DIR, 'bench', 'results')
mkdirSync(results, { recursive: true })
writeFileSync(join(results, `burst-${stamp}.md`), text)
writeFileSync(join(results, `burst-${stamp}.json`), JSON.stringify({ argv, rows }, null, 1))
process.stderr.write(`written to bench/results/burst-${stamp}.md and .json\n`)
