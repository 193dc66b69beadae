/**
 * `npm run bench -- --workloads webhooks`: the webhook inbox's figures (issues 36 and 46), for the
 * embedded store (SQLite, synced group commits) and for Redis (a local redis-server, appendonly no),
 * each with the event id read at a JSON pointer (`PROXY_WEBHOOK_EVENT_ID_POINTER=/id`, as a real
 * set-up reads it) and with duplicates caught by the body's hash:
 * - intake p50/p99 at a steady rate of 2 KiB events (500/s), with the sidecar's event-loop delay meanwhile;
 * - sustained intake: events/s with 64 senders in a closed loop, and the event-loop delay meanwhile;
 * - receipt -> application's 2xx p95 at 200 events/s (the application here, on this machine, notes
 *   when each delivery arrives; the event carries its send time);
 * - the proxy's GET ~200 B p99 at 2,000 req/s with the inbox idle, and with the inbox saturated by
 *   provider events at the same time (issue 46: the proxy must not be slowed by the inbox), and a
 *   control: the same events/s sent to a server outside the sidecar, so the machine's own share of
 *   the saturated figure is read beside it.
 * Beside every row: the load average and the synced 2 KiB write time of the disk the store is on,
 * measured before and after the row (lib/disk-sync.mjs): the same build reads differently on a quiet
 * and on a busy disk, and every figure must say which it came from.
 *
 * The sidecar runs as `npm start` runs it (dist-bundle/cli.mjs, its Node options), logging at info to
 * a file, with both environments configured against the bench upstream (bench/upstream.mjs), and
 * bench/lib/loop-probe.mjs preloaded to read its event loop. Events are sent by wrk when installed
 * (its paced script for the steady rates, as `npm run bench` does), else by an undici client in this
 * process; the receipt -> 2xx phase always by undici (each event carries its send time). Nothing is
 * pinned: the load generators, the application, the upstream and the sidecar share the machine
 * ("load generator included"), as on the machine the goals are set for.
 *
 * Options: --duration S (5) --rate R (500) --e2e-rate R (200) --senders N (64) --stores sqlite,redis
 * --keys pointer,hash --proxy-rate R (2000) --proxy-rounds N (4) --proxy-duration S (3) --proxy-warmup S (10: the proxy's GET
 * alone at the rate before its windows; 0 for none, as before) --log-level L (info)
 * --busy-rate R (the proxy's busy windows send events at R/s, paced, instead of saturating the inbox:
 * what the proxy's figure would be were the inbox held to R while the proxy serves) --node-args="..." (more
 * Node options for the sidecar, for a variant) --no-control (no control window: the proxy's GET while the same events/s go to a server outside the sidecar)
 * --direct (two more windows per round, inbox idle and saturated, with the same GET sent to the upstream directly: how much of
 * the proxy's tail under a saturated inbox the machine's other processes, the upstream among them, have as well)
 * --phases intake,saturation,e2e,proxy (a subset, for quick comparisons) --cli PATH (another build's dist-bundle/cli.mjs, for before/after) --profile (a CPU profile of the sidecar's threads, summarised) --syscalls (the sidecar under
 * `strace -f -T`: every fsync/fdatasync by file and phase; slows the sidecar, so its figures are not the run's)
 */
import { createServer } from 'node:http'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, closeSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Agent, request } from 'undici'
import { syncedWriteMs } from './lib/disk-sync.mjs'
import { runWrk, wrkVersion, writeBodyFile } from './lib/measure.mjs'
import { ORPHAN_GUARD, cpuLayout, freePort, logFifo, pinProcess, start, stop, stopAll } from './lib/processes.mjs'
import { pooledPercentile } from './lib/report.mjs'
import { CLI, FIAT_SANDBOX_BASE, OUR_NODE_ARGS, ROOT_DIR, ourProxyEnv, startRedis, startUpstream } from './lib/targets.mjs'
import { formatSummary, summariseProfile } from './cpuprofile-summary.mjs'

const { values: argv } = parseArgs({
  strict: false,
  options: {
    duration: { type: 'string', default: '5' },
    rate: { type: 'string', default: '500' },
    'e2e-rate': { type: 'string', default: '200' },
    senders: { type: 'string', default: '64' },
    stores: { type: 'string', default: 'sqlite,redis' },
    keys: { type: 'string', default: 'pointer,hash' },
    'proxy-rate': { type: 'string', default: '2000' },
    'proxy-rounds': { type: 'string', default: '4' },
    'proxy-duration': { type: 'string', default: '3' },
    'log-level': { type: 'string', default: 'info' },
    profile: { type: 'boolean', default: false },
    syscalls: { type: 'boolean', default: false },
    cli: { type: 'string', default: CLI },
    phases: { type: 'string', default: 'intake,saturation,e2e,proxy' },
    pin: { type: 'boolean', default: false },
    'same-session': { type: 'boolean', default: false },
    'no-control': { type: 'boolean', default: false },
    direct: { type: 'boolean', default: false },
    'proxy-warmup': { type: 'string', default: '10' },
    'busy-rate': { type: 'string', default: '' },
    'node-args': { type: 'string', default: '' },
  },
})
const PHASES = new Set(String(argv.phases).split(','))
const LAYOUT = cpuLayout()
if (argv.pin && !LAYOUT.pinning) throw new Error('--pin needs taskset and 2 cores')
/** With --pin, as npm run bench lays a 2-core machine out: the sidecar alone on core 1, everything else on core 0. */
const [LOAD_CORE, TARGET_CORE] = argv.pin ? [0, 1] : [null, null]
if (argv.pin) pinProcess(process.pid, LOAD_CORE)
/**
 * The sidecar, the upstream and each load generator in a session of its own (lib/processes.mjs): each
 * is weighed by the scheduler as a group of its own, as separate containers are by their cgroups,
 * rather than all as processes of one group; --same-session for how it ran before issue 46.
 */
const SESSION = !argv['same-session']
const DURATION_S = Number(argv.duration)
const RATE = Number(argv.rate)
const SENDERS = Number(argv.senders)
const PROXY_RATE = Number(argv['proxy-rate'])
const PROXY_ROUNDS = Number(argv['proxy-rounds'])
const PROXY_DURATION_S = Number(argv['proxy-duration'])
const WARMUP_S = 1
const PROXY_WARMUP_S = Number(argv['proxy-warmup'])
const TOKEN = 'wht_benchBenchBenchBench0001'
const EVENT_BYTES = 2048
const WRK = wrkVersion() !== null
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const quantile = (values, q) => { const s = [...values].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN }
const now = () => performance.timeOrigin + performance.now()
const load1 = () => Math.round(loadavg()[0] * 10) / 10

/** A provider's event of EVENT_BYTES bytes: its id at /id, `[<id>]` replaced per request by wrk (lib/wrk-report.lua). */
function eventBody (id, sentAt = 0) {
  const base = JSON.stringify({ id: `evt_${id}`, type: 'payment.updated', sentAt, data: { externalReference: `ref-${id}`, amount: 1500, currency: 'KES', status: 'SUCCESSFUL' }, pad: '' })
  return `${base.slice(0, -2)}${'x'.repeat(Math.max(0, EVENT_BYTES - base.length))}"}`
}

/** The application: answers every delivery 200 at once, and notes how long an event carrying its send time took to arrive. */
async function startApp () {
  const app = { arrivals: [], delivered: 0 }
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c)).on('end', () => {
      if (req.url === '/sink') return res.end()
      app.delivered++
      const sentAt = JSON.parse(Buffer.concat(chunks).toString()).sentAt
      if (sentAt > 0) app.arrivals.push(now() - sentAt)
      res.end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return Object.assign(app, { server, origin: `http://127.0.0.1:${server.address().port}` })
}

async function startSidecar ({ store, keys, app, upstream, dir }) {
  const port = await freePort()
  const proxyPort = await freePort()
  const probeFile = join(dir, `probe-${store}-${keys}.jsonl`)
  const env = {
    PATH: process.env.PATH,
    ...ourProxyEnv(proxyPort, upstream.origin, argv['log-level']),
    PROXY_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
    PROXY_WEBHOOK_PATH_TOKEN: TOKEN,
    PROXY_WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    PROXY_WEBHOOK_DELIVER_TO: `${app.origin}/events`,
    PROXY_WEBHOOK_STORE_PATH: join(dir, `${store}-${keys}.db`),
    ...(keys === 'pointer' ? { PROXY_WEBHOOK_EVENT_ID_POINTER: '/id' } : {}),
    ...(store === 'redis' ? { PROXY_REDIS_URL: (await startRedis({ core: LOAD_CORE, dir })).url } : {}),
    BENCH_PROBE_FILE: probeFile,
  }
  const profileDir = join(dir, `profile-${store}-${keys}`)
  const nodeArgs = [...OUR_NODE_ARGS, ...String(argv['node-args']).split(' ').filter(Boolean), '--import', ORPHAN_GUARD, '--import', new URL('./lib/loop-probe.mjs', import.meta.url).href, ...(argv.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])]
  const straceLog = join(dir, `strace-${store}-${keys}.log`)
  const [command, args] = argv.syscalls
    ? ['strace', ['-f', '--seccomp-bpf', '-ttt', '-T', '-y', '-e', 'trace=fsync,fdatasync', '-o', straceLog, process.execPath, ...nodeArgs, argv.cli]]
    : [process.execPath, [...nodeArgs, argv.cli]]
  const logFd = logFifo(`sidecar (${store}, ${keys})`, join(dir, `sidecar-${store}-${keys}.log`))
  const proc = start(`sidecar (${store}, ${keys})`, command, args, { core: TARGET_CORE, env, cwd: dir, stdout: logFd, session: SESSION })
  closeSync(logFd)
  // Ready once the inbox answers and the proxy holds its tokens.
  for (let i = 0; ; i++) {
    try {
      await (await request(`http://127.0.0.1:${port}/healthz`)).body.dump()
      const ready = await request(`http://127.0.0.1:${proxyPort}/readyz`)
      await ready.body.dump()
      if (ready.statusCode === 200) break
    } catch {}
    if (i > 300 || proc.child.exitCode !== null) throw new Error(`the sidecar did not start\n${proc.err}`)
    await sleep(50)
  }
  // The pid that gets SIGWINCH: the sidecar itself, under strace its child.
  const sidecarPid = argv.syscalls ? Number(readFileSync(`/proc/${proc.pid}/task/${proc.pid}/children`, 'utf8').trim().split(/\s+/)[0]) : proc.pid
  const probe = async () => {
    process.kill(sidecarPid, 'SIGWINCH')
    // A busy machine may hold the sidecar's main thread for a while: up to 10 s.
    for (let i = 0; i < 1000; i++) {
      // Whole lines only: appendFileSync creates the file before it writes the line.
      const lines = existsSync(probeFile) ? readFileSync(probeFile, 'utf8').split('\n').slice(0, -1) : []
      if (lines.length > probe.read) return JSON.parse(lines[probe.read++])
      await sleep(10)
    }
    throw new Error('the sidecar wrote no probe line')
  }
  probe.read = 0
  return {
    proc, probe, profileDir, straceLog,
    intakeUrl: `http://127.0.0.1:${port}/webhooks/${TOKEN}`,
    proxyUrl: `http://127.0.0.1:${proxyPort}/fiat/bench/small`,
  }
}

/** Events sent by undici when wrk is not installed, and for the receipt -> 2xx phase. */
const agent = new Agent({ connections: 128 })
let sequence = 0
async function sendOne (url) {
  const started = now()
  const res = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: eventBody(`u${sequence++}`, started) })
  await res.body.dump()
  return { ok: res.statusCode === 200, ms: now() - started }
}

/** Open loop: one send per slot of a fixed schedule, each timed from its slot. */
async function undiciPaced (url, rate, durationS) {
  const latencies = []
  let ok = 0
  let failed = 0
  const inflight = []
  const t0 = now()
  for (let i = 0; i < rate * durationS; i++) {
    const slot = t0 + (i * 1000) / rate
    const wait = slot - now()
    if (wait > 0) await sleep(wait)
    inflight.push(sendOne(url).then((r) => { if (r.ok) ok++; else failed++; latencies.push(now() - slot) }))
  }
  await Promise.all(inflight)
  return { ok, failed, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) }
}

async function undiciSaturated (url, senders, durationS, until = null) {
  let ok = 0
  let failed = 0
  const end = now() + durationS * 1000
  await Promise.all(Array.from({ length: senders }, async () => {
    while (until === null ? now() < end : !until.done) {
      const r = await sendOne(url)
      if (r.ok) ok++; else failed++
    }
  }))
  return { ok, failed, perS: ok / durationS }
}

/** The events wrk sends: one body, its `[<id>]` made unique per request. */
let bodyFile = null
const wrkEvents = (url) => ({ url, method: 'POST', headers: { 'content-type': 'application/json' }, bodyFile, uniqueIds: true })

async function intakeAtRate (url, rate, durationS) {
  if (!WRK) return undiciPaced(url, rate, durationS)
  const r = await runWrk(wrkEvents(url), SENDERS, durationS, LOAD_CORE, rate, { session: SESSION })
  return { ok: r.ok, failed: r.non2xx + r.errors, p50: r.latencyMs.p50, p99: r.latencyMs.p99, lateSends: r.lateSends }
}

async function intakeSaturated (url, durationS) {
  if (!WRK) return undiciSaturated(url, SENDERS, durationS)
  const r = await runWrk(wrkEvents(url), SENDERS, durationS, LOAD_CORE, null, { session: SESSION })
  return { ok: r.ok, failed: r.non2xx + r.errors, perS: r.ok / r.durationS }
}

async function drained (app, accepted, limitS = 120) {
  const started = now()
  while (app.delivered < accepted && now() - started < limitS * 1000) await sleep(50)
  return (now() - started) / 1000
}

/**
 * The proxy's GET at PROXY_RATE, paced by wrk: `idle`; `saturated`, while the inbox is saturated by
 * events; or `control`, while the same events go at `controlRate` (what the inbox took in the
 * saturated window before) to a node:http server outside the sidecar that only reads them and
 * answers. The control is the machine's share: its two cores carry the event load generator and a
 * receiver there too, and the sidecar none of the work.
 */
async function proxyGet (sidecar, mode, controlRate, sinkUrl, direct = null) {
  const get = direct ?? { url: sidecar.proxyUrl, method: 'GET', headers: {} }
  if (mode === 'idle') {
    await runWrk(get, 50, WARMUP_S, LOAD_CORE, PROXY_RATE, { session: SESSION })
    return { get: await runWrk(get, 50, PROXY_DURATION_S, LOAD_CORE, PROXY_RATE, { session: SESSION }), events: null }
  }
  // The events start first and last past the measurement on both sides.
  const floodS = PROXY_DURATION_S + 2 * WARMUP_S + 1
  const busyRate = Number(argv['busy-rate'])
  const events = mode === 'saturated'
    ? (busyRate > 0 ? intakeAtRate(sidecar.intakeUrl, busyRate, floodS).then((r) => ({ ...r, perS: r.ok / floodS })) : intakeSaturated(sidecar.intakeUrl, floodS))
    : runWrk(wrkEvents(sinkUrl), SENDERS, floodS, LOAD_CORE, controlRate, { session: SESSION }).then((r) => ({ ok: 0 /* none reached the inbox */, failed: r.non2xx + r.errors, perS: r.ok / r.durationS }))
  await sleep(WARMUP_S * 1000)
  await runWrk(get, 50, WARMUP_S, LOAD_CORE, PROXY_RATE, { session: SESSION })
  const measured = await runWrk(get, 50, PROXY_DURATION_S, LOAD_CORE, PROXY_RATE, { session: SESSION })
  return { get: measured, events: await events }
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-')
const dir = mkdtempSync(join(tmpdir(), 'pap-bench-webhooks-'))
const rows = []
const notes = []
let app = null
try {
  bodyFile = writeBodyFile(join(dir, 'event.json'), eventBody('[<id>]'))
  const upstream = await startUpstream('bench upstream', { core: LOAD_CORE, tokenLifetimeS: 600, session: SESSION })
  app = await startApp()
  // What the load generator reaches against a server that only reads the body and answers (the application here).
  const ceiling = WRK ? await intakeSaturated(`${app.origin}/sink`, 3) : null
  for (const store of String(argv.stores).split(',')) {
    for (const keys of String(argv.keys).split(',')) {
      const row = { store, keys, load: [load1()], syncedWrite: [syncedWriteMs(dir)] }
      const sidecar = await startSidecar({ store, keys, app, upstream, dir })
      const phases = []
      const mark = (name) => phases.push({ name, atS: Date.now() / 1000 })
      let accepted = 0
      const count = (r) => { accepted += r.ok; return r }
      count(await intakeAtRate(sidecar.intakeUrl, 200, WARMUP_S))
      await drained(app, accepted)
      if (PHASES.has('intake')) {
        await sidecar.probe()
        mark('intake at rate')
        row.intake = count(await intakeAtRate(sidecar.intakeUrl, RATE, DURATION_S))
        row.intakeLoop = await sidecar.probe()
      }
      if (PHASES.has('saturation')) {
        mark('saturation')
        row.saturated = count(await intakeSaturated(sidecar.intakeUrl, DURATION_S))
        row.saturatedLoop = await sidecar.probe()
        mark('drain')
        // The saturation phase leaves a backlog: the receipt -> 2xx figure is of a drained inbox.
        row.drainS = await drained(app, accepted)
      }
      if (PHASES.has('e2e')) {
        await drained(app, accepted)
        mark('receipt to application')
        app.arrivals.length = 0
        row.e2eSent = count(await undiciPaced(sidecar.intakeUrl, Number(argv['e2e-rate']), DURATION_S))
        await drained(app, accepted, 10)
        row.e2e = { p50: quantile(app.arrivals, 0.5), p95: quantile(app.arrivals, 0.95), delivered: app.arrivals.length }
      }
      row.proxy = { idle: [], busy: [], control: [], idleLoop: [], busyLoop: [], controlLoop: [], directIdle: [], directBusy: [] }
      // Short windows, idle and saturated alternating which goes first, pooled: the machine's own
      // drift (other processes come and go) falls on both alike. The control follows the saturated
      // window whose rate it repeats.
      // The proxy's GET path has served nothing before this phase: warmed up first (JIT, its pools),
      // as a sidecar that has served its application is, so the first window is not its warm-up.
      if (PHASES.has('proxy') && PROXY_WARMUP_S > 0) {
        mark('proxy warm-up')
        await runWrk({ url: sidecar.proxyUrl, method: 'GET', headers: {} }, 50, PROXY_WARMUP_S, LOAD_CORE, PROXY_RATE, { session: SESSION })
      }
      for (let round = 0; PHASES.has('proxy') && round < PROXY_ROUNDS; round++) {
        for (const mode of round % 2 === 0 ? ['idle', 'saturated', 'control', 'direct idle', 'direct saturated'] : ['saturated', 'control', 'idle', 'direct saturated', 'direct idle']) {
          if (mode === 'control' && (!WRK || argv['no-control'])) continue
          if (mode.startsWith('direct') && !argv.direct) continue
          await drained(app, accepted)
          mark(`proxy, ${mode === 'control' ? 'control' : mode.startsWith('direct') ? mode : `inbox ${mode}`} ${round + 1}`)
          await sidecar.probe()
          const measured = mode.startsWith('direct')
            // The upstream takes its static bench token (bench/upstream.mjs) from a caller other than a proxy.
            ? await proxyGet(sidecar, mode.slice('direct '.length), 0, null, { url: `${upstream.origin}/api/b2b/bench/small`, method: 'GET', headers: { authorization: 'Bearer bench-static' } })
            : await proxyGet(sidecar, mode, Math.round(row.proxy.busy.at(-1)?.events.perS ?? 0), `${app.origin}/sink`)
          const loop = await sidecar.probe()
          if (mode.startsWith('direct')) {
            row.proxy[mode === 'direct idle' ? 'directIdle' : 'directBusy'].push({ ...measured.get, events: measured.events })
            if (measured.events !== null) count(measured.events)
          } else if (mode === 'saturated') {
            count(measured.events)
            row.proxy.busy.push({ ...measured.get, events: measured.events })
            row.proxy.busyLoop.push(loop)
          } else if (mode === 'control') {
            row.proxy.control.push({ ...measured.get, events: measured.events })
            row.proxy.controlLoop.push(loop)
          } else {
            row.proxy.idle.push(measured.get)
            row.proxy.idleLoop.push(loop)
          }
        }
      }
      mark('end')
      row.phases = phases
      await drained(app, accepted)
      await stop(sidecar.proc, 15_000)
      row.load.push(load1())
      row.syncedWrite.push(syncedWriteMs(dir))
      if (argv.profile) row.profiles = summariseProfiles(sidecar.profileDir, `${store}-${keys}`)
      if (argv.syscalls) row.syncs = syncsByPhase(readFileSync(sidecar.straceLog, 'utf8'), phases)
      rows.push(row)
      process.stderr.write(`${store}, ${keys}: done\n`)
    }
  }
  if (ceiling !== null) notes.push(`The load generator (wrk, ${SENDERS} connections, 2 KiB events) reached ${Math.round(ceiling.perS)} req/s against a node:http server that only reads the body and answers.`)
} finally {
  await stopAll()
  await agent.close()
  // The application's keep-alive connections would hold this process open once the report is written.
  app?.server.closeAllConnections()
  app?.server.close()
  if (process.env.BENCH_KEEP_DIR === undefined) rmSync(dir, { recursive: true, force: true }); else process.stderr.write(`kept ${dir}\n`)
}

function summariseProfiles (profileDir, name) {
  const out = []
  for (const file of existsSync(profileDir) ? readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) : []) {
    const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8'))
    const results = join(ROOT_DIR, 'bench', 'results')
    mkdirSync(results, { recursive: true })
    writeFileSync(join(results, `webhooks-${stamp}-${name}-${file}`), JSON.stringify(profile))
    out.push({ file, summary: formatSummary(summariseProfile(profile, 25)) })
  }
  return out
}

/** strace -f -ttt -T -y lines: each sync's duration by phase and by file (the WAL, the database, other). */
function syncsByPhase (log, phases) {
  const byPhase = {}
  for (const line of log.split('\n')) {
    const m = /^\d+\s+(\d+\.\d+) f(?:data)?sync\(\d+<([^>]+)>\)\s+=\s+\S+\s+<(\d+\.\d+)>/.exec(line)
    if (m === null) continue
    const at = Number(m[1])
    const phase = [...phases].reverse().find((p) => p.atS <= at)?.name ?? 'start'
    const file = m[2].endsWith('-wal') ? 'wal' : m[2].endsWith('.db') ? 'database' : 'other'
    ;((byPhase[phase] ??= {})[file] ??= []).push(Number(m[3]) * 1000)
  }
  return Object.fromEntries(Object.entries(byPhase).map(([phase, files]) => [phase, Object.fromEntries(Object.entries(files).map(([file, ms]) => [file, {
    count: ms.length, p50: round(quantile(ms, 0.5)), p99: round(quantile(ms, 0.99)), max: round(Math.max(...ms)), totalMs: round(ms.reduce((a, b) => a + b, 0)),
  }]))]))
}

function round (x, digits = 2) { return Math.round(x * 10 ** digits) / 10 ** digits }
const ms = (v) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(2))
const pooled = (rounds) => pooledPercentile(rounds, 99) ?? Math.max(...rounds.map((r) => r.latencyMs.p99))
const lines = []
lines.push(`# Webhook inbox, ${new Date().toISOString()}`, '')
lines.push(`${argv.cli === CLI ? 'This build' : argv.cli}, Node ${process.version}; events sent by ${WRK ? `wrk (${wrkVersion()})` : 'undici in the bench process'}; the sidecar logs at ${argv['log-level']}; ${DURATION_S} s phases; ${argv.pin ? 'the sidecar alone on core 1, the load generators, the application and the upstream on core 0' : 'nothing pinned'}; the sidecar ${SESSION ? 'in a session (autogroup) of its own' : 'in the benchmark\'s session'}${Number(argv['busy-rate']) > 0 ? `; the proxy's busy ("saturated") windows send events paced at ${argv['busy-rate']}/s` : ''}${argv['node-args'] === '' ? '' : `; the sidecar's extra Node options: ${argv['node-args']}`}.`, '')
/** The inbox's loop: its own thread's, or the main thread's in a build where it ran there. */
const inboxLoop = (probe) => probe?.inbox ?? probe?.main
const delay = (probe, q = 'p99') => ms(probe?.loopDelayMs[q])
lines.push(`| store, event key | load avg (start, end) | synced 2 KiB write p50 / p99, before; after (ms) | intake p50 / p99 at ${RATE}/s (ms) | event-loop delay p99 / max at ${RATE}/s: the inbox's loop; the proxy's (ms) | sustained intake (events/s, ${SENDERS} senders) | event-loop delay p99 saturated: the inbox's; the proxy's (ms) | backlog drained (s) | receipt -> app p50 / p95 at ${argv['e2e-rate']}/s (ms) | proxy GET p99 at ${PROXY_RATE}/s: inbox idle / saturated (ms) | ratio |`)
lines.push('|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const idle = r.proxy.idle.length === 0 ? undefined : pooled(r.proxy.idle)
  const busy = r.proxy.busy.length === 0 ? undefined : pooled(r.proxy.busy)
  const failed = (r.intake?.failed ?? 0) + (r.saturated?.failed ?? 0) + (r.e2eSent?.failed ?? 0) + r.proxy.busy.reduce((n, b) => n + b.events.failed, 0)
  const loops = (probe) => probe === undefined ? '-' : `${delay(inboxLoop(probe))} / ${delay(inboxLoop(probe), 'max')}; ${probe.inbox === undefined ? 'the same loop' : `${delay(probe.main)} / ${delay(probe.main, 'max')}`}`
  lines.push(`| ${r.store}, ${r.keys === 'pointer' ? 'id at /id' : 'body hash'} | ${r.load.join(', ')} | ${r.syncedWrite.map((s) => `${s.p50} / ${s.p99}`).join('; ')} | ${ms(r.intake?.p50)} / ${ms(r.intake?.p99)} | ${loops(r.intakeLoop)} | ${r.saturated === undefined ? '-' : Math.round(r.saturated.perS)}${failed > 0 ? ` (${failed} not 200)` : ''} | ${r.saturatedLoop === undefined ? '-' : `${delay(inboxLoop(r.saturatedLoop))}; ${r.saturatedLoop.inbox === undefined ? 'the same loop' : delay(r.saturatedLoop.main)}`} | ${r.drainS?.toFixed(1) ?? '-'} | ${ms(r.e2e?.p50)} / ${ms(r.e2e?.p95)} | ${ms(idle)} / ${ms(busy)} | ${idle === undefined ? '-' : (busy / idle).toFixed(2)} |`)
}
lines.push('')
for (const r of rows) {
  const events = r.proxy.busy.map((b) => Math.round(b.events.perS))
  const achieved = [...r.proxy.idle, ...r.proxy.busy].map((g) => g.achievedRps)
  const parts = []
  if (events.length > 0) parts.push(`during the proxy's saturated windows the inbox took ${events.join(', ')} events/s; the proxy's achieved rates ${achieved.join(', ')} req/s; the proxy's loop delay p99 ${r.proxy.idleLoop.map((l) => delay(l.main)).join(', ')} ms idle, ${r.proxy.busyLoop.map((l) => delay(l.main)).join(', ')} ms saturated`)
  if (r.proxy.control.length > 0) {
    const control = pooled(r.proxy.control)
    parts.push(`control (the same events/s, ${r.proxy.control.map((c) => Math.round(c.events.perS)).join(', ')}, sent by the same wrk to a node:http server outside the sidecar that only reads them): the proxy's GET p99 ${ms(control)} ms, ${(control / pooled(r.proxy.idle)).toFixed(2)} x idle, its loop delay p99 ${r.proxy.controlLoop.map((l) => delay(l.main)).join(', ')} ms`)
  }
  if (r.proxy.directBusy.length > 0) {
    const [directIdle, directBusy] = [pooled(r.proxy.directIdle), pooled(r.proxy.directBusy)]
    parts.push(`direct (the same GET at ${PROXY_RATE}/s sent to the upstream, not through the sidecar): p99 ${ms(directIdle)} ms with the inbox idle, ${ms(directBusy)} ms with it saturated (${r.proxy.directBusy.map((c) => Math.round(c.events.perS)).join(', ')} events/s), ${(directBusy / directIdle).toFixed(2)} x`)
  }
  if (r.intakeLoop !== undefined) parts.push(`GC of the inbox's thread during ${RATE}/s ${JSON.stringify(inboxLoop(r.intakeLoop).gc)}; its loop's utilisation ${inboxLoop(r.intakeLoop).utilisation} at ${RATE}/s`)
  if (r.saturatedLoop !== undefined) parts.push(`${inboxLoop(r.saturatedLoop).utilisation} saturated`)
  lines.push(`- ${r.store}, ${r.keys}: ${parts.join('; ')}.`)
  if (r.intake?.lateSends > 0) lines.push(`  - at ${RATE}/s, ${r.intake.lateSends} sends went out more than 1 ms late (coordinated omission: their wait is not in the latency).`)
}
for (const note of notes) lines.push(`- ${note}`)
for (const r of rows) {
  if (r.syncs !== undefined) lines.push('', `## Syncs of ${r.store}, ${r.keys} (strace -T, ms)`, '', '```', JSON.stringify(r.syncs, null, 1), '```')
  for (const p of r.profiles ?? []) lines.push('', `## CPU profile of ${r.store}, ${r.keys}: ${p.file}`, '', p.summary)
}
const text = `${lines.join('\n')}\n`
process.stdout.write(`\n${text}`)
const results = join(ROOT_DIR, 'bench', 'results')
mkdirSync(results, { recursive: true })
writeFileSync(join(results, `webhooks-${stamp}.md`), text)
writeFileSync(join(results, `webhooks-${stamp}.json`), JSON.stringify({ argv, wrk: WRK, rows, notes }, null, 1))
process.stderr.write(`written to bench/results/webhooks-${stamp}.md and .json\n`)
