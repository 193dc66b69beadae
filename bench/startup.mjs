/**
 * `npm run bench:startup`: how fast does the sidecar answer after a start, and how much memory does
 * it hold when idle (issue 27)? Against a one-route Fastify server (bench/startup-baseline.mjs)
 * measured in the same run, A B A B, so the machine's drift moves both.
 *
 * Per run: spawn -> first `/healthz` 200 (polled every 5 ms over loopback), the CPU time all its
 * threads had used by then (outside Docker: a busy machine disturbs it less than the wall time),
 * then resident memory (VmRSS) after 5 s idle. Our proxy runs as `npm start` runs it (its Node options and environment
 * default, both environments configured against the bench upstream, egress check off).
 * With --image TAG (a Docker engine in DOCKER_HOST), the same inside the image: `docker run
 * --network host`, the baseline as `node -e` with the image's own Fastify; the time then includes
 * Docker's container start, for both. Peak memory under load is `npm run bench`'s figure.
 *
 * Options: --runs N (5) --idle S (5) --image TAG --cli PATH (another build of ours; default
 * dist-bundle/cli.mjs, as npm start runs it) --baseline-image TAG (where the baseline's Fastify is;
 * the production image bundles ours and has no node_modules: use the demo target, same Node)
 * --our-env NAME=VALUE (repeatable; our proxy only) --baseline-env NAME=VALUE (the same, for the one-route
 * Fastify: e.g. give it the compile cache ours starts with). Prints a markdown table, writes it with the raw
 * figures to bench/results/startup-<time>.{md,json}. Asserts nothing.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { freePort, stopAll } from './lib/processes.mjs'
import { CLI_ENTRY, OUR_NODE_ARGS, ourProxyEnv, ROOT_DIR, startUpstream } from './lib/targets.mjs'

const { values: argv } = parseArgs({ options: { runs: { type: 'string', default: '5' }, idle: { type: 'string', default: '5' }, image: { type: 'string' }, cli: { type: 'string', default: CLI_ENTRY }, 'baseline-image': { type: 'string' }, 'our-env': { type: 'string', multiple: true, default: [] }, 'baseline-env': { type: 'string', multiple: true, default: [] } } })
// Extra environment for our proxy only, for before/after runs: --our-env NODE_DISABLE_COMPILE_CACHE=1
const envPairs = (list) => Object.fromEntries(list.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
const OUR_EXTRA_ENV = envPairs(argv['our-env'])
const BASELINE_EXTRA_ENV = envPairs(argv['baseline-env'])
const RUNS = Number(argv.runs)
const IDLE_MS = Number(argv.idle) * 1000
const image = argv.image
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const BASELINE_INLINE = "import Fastify from 'fastify'; const app = Fastify({ logger: false }); app.get('/healthz', async () => ({ status: 'ok' })); await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) }); process.once('SIGTERM', () => { void app.close() })"

function ourEnv (port, upstreamOrigin) {
  return { ...ourProxyEnv(port, upstreamOrigin), ...OUR_EXTRA_ENV }
}

/** [command, args, env] that start `target` listening on `port`. */
function commandFor (target, port, upstreamOrigin) {
  const env = target === 'ours' ? ourEnv(port, upstreamOrigin) : { PORT: String(port), ...BASELINE_EXTRA_ENV }
  if (image === undefined) {
    return target === 'ours'
      ? [process.execPath, [...OUR_NODE_ARGS, argv.cli], { PATH: process.env.PATH, ...env }]
      : [process.execPath, ['bench/startup-baseline.mjs'], { PATH: process.env.PATH, ...env }]
  }
  const name = `startup-bench-${process.pid}-${port}`
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`])
  const args = ['run', '--rm', '--init', '--name', name, '--network', 'host', ...envArgs]
  if (target === 'ours') args.push(image)
  else args.push('--entrypoint', 'node', argv['baseline-image'] ?? image, '--input-type=module', '-e', BASELINE_INLINE)
  return ['docker', args, process.env, name]
}

function healthz (port) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', timeout: 500 }, (res) => { res.resume(); resolve(res.statusCode === 200) })
    req.once('error', () => resolve(false))
    req.once('timeout', () => { req.destroy(); resolve(false) })
    req.end()
  })
}

function rssKb (pid) {
  const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m)
  return match === null ? NaN : Number(match[1])
}

/** The pid whose memory counts: the node process itself, or the container's main process. */
function nodePid (child, containerName) {
  if (containerName === undefined) return child.pid
  // With --init, the container's PID 1 is tini; node is its child.
  const initPid = execFileSync('docker', ['inspect', '-f', '{{.State.Pid}}', containerName], { encoding: 'utf8' }).trim()
  return Number(readFileSync(`/proc/${initPid}/task/${initPid}/children`, 'utf8').trim().split(/\s+/)[0])
}

async function once (target, upstreamOrigin) {
  const port = await freePort()
  const [command, args, env, containerName] = commandFor(target, port, upstreamOrigin)
  const started = process.hrtime.bigint()
  const child = spawn(command, args, { cwd: ROOT_DIR, env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (s) => { stderr = (stderr + s).slice(-4096) })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const deadline = Date.now() + 30_000
  while (!(await healthz(port))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${target} did not answer /healthz\n${stderr}`)
    await sleep(5)
  }
  const startMs = Number(process.hrtime.bigint() - started) / 1e6
  const cpuMs = containerName === undefined ? cpuMsOf(child.pid) : NaN
  await sleep(IDLE_MS)
  const idleMiB = rssKb(nodePid(child, containerName)) / 1024
  if (containerName === undefined) child.kill('SIGTERM')
  else execFileSync('docker', ['stop', '-t', '10', containerName], { stdio: 'ignore' })
  await exited
  return { startMs, cpuMs, idleMiB }
}

/**
 * CPU time of every thread of `pid` so far (the first field of each thread's schedstat, in ns): what
 * a start cost, which other processes on a busy machine disturb far less than its wall time.
 */
function cpuMsOf (pid) {
  let ns = 0
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try { ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) } catch {}
  }
  return ns / 1e6
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2 }

try {
  const loadAtStart = loadavg()[0]
  const upstream = await startUpstream('bench upstream', { core: null, tokenLifetimeS: 600 })
  const runs = { baseline: [], ours: [] }
  await once('baseline', upstream.origin) // warm-up: file cache, docker's first start
  await once('ours', upstream.origin)
  for (let i = 0; i < RUNS; i++) {
    for (const target of ['baseline', 'ours']) runs[target].push(await once(target, upstream.origin))
  }
  const figure = (target, key) => median(runs[target].map((r) => r[key]))
  const where = image === undefined ? `Node ${process.version}, this machine` : `image ${image} (docker run --init --network host)`
  const row = (label, key, unit, digits) => {
    const b = figure('baseline', key); const o = figure('ours', key)
    return `| ${label} | ${o.toFixed(digits)} ${unit} | ${b.toFixed(digits)} ${unit} | ${(o / b).toFixed(2)} × |`
  }
  const table = [
    `Startup, ${where}${argv['our-env'].length > 0 ? `, ours with ${argv['our-env'].join(' ')}` : ''}${argv['baseline-env'].length > 0 ? `, Fastify with ${argv['baseline-env'].join(' ')}` : ''}: median of ${RUNS} runs each, interleaved; load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`,
    '',
    '| figure | payments-auth-proxy | one-route Fastify | ratio |',
    '|---|---|---|---|',
    row('spawn → first /healthz 200', 'startMs', 'ms', 0),
    ...(image === undefined ? [row('CPU time to the first /healthz 200, all threads', 'cpuMs', 'ms', 0)] : []),
    row(`resident memory after ${IDLE_MS / 1000} s idle`, 'idleMiB', 'MiB', 1),
  ].join('\n')
  process.stdout.write(`${table}\n`)
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  mkdirSync(`${ROOT_DIR}bench/results`, { recursive: true })
  writeFileSync(`${ROOT_DIR}bench/results/startup-${stamp}.md`, `${table}\n`)
  writeFileSync(`${ROOT_DIR}bench/results/startup-${stamp}.json`, `${JSON.stringify({ where, runs, idleMs: IDLE_MS }, null, 2)}\n`)
} finally {
  await stopAll()
}
