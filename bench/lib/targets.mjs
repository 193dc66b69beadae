/**
 * Starting what is measured: the bench upstream, the bare Fastify proxy, the optional plain
 * node:http proxy and our proxy as users run it (with `npm start`'s Node options, configured by
 * environment variables only, logging at info to a FIFO (a container's stdout) read into a file, metrics on). Every process is pinned by
 * the caller's choice of core and stopped through processes.mjs.
 */
import { createHash } from 'node:crypto'
import { closeSync, readFileSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { ORPHAN_GUARD, freePort, logFifo, start, waitForJsonLine } from './processes.mjs'

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url))
export const ROOT_DIR = fileURLToPath(new URL('../..', import.meta.url))
/** What `npm start` runs, its entry and Node options (the Docker image's NODE_OPTIONS too): measured as shipped. */
const START_SCRIPT = JSON.parse(readFileSync(`${ROOT_DIR}package.json`, 'utf8')).scripts.start.split(/\s+/)
export const CLI_ENTRY = START_SCRIPT.at(-1)
export const CLI = `${ROOT_DIR}${CLI_ENTRY}`
export const OUR_NODE_ARGS = START_SCRIPT.filter((arg) => arg.startsWith('--'))
/** The environment `npm start` sets before exec (`NAME=${NAME:-default}`), at its defaults. */
export const OUR_START_ENV = Object.fromEntries(START_SCRIPT.flatMap((arg) => {
  const match = /^([A-Z_]+)=\$\{\1:-([^}]*)\}$/.exec(arg)
  return match === null ? [] : [[match[1], match[2]]]
}))

/** Not secrets: they only open the bench upstream. */
export const BENCH_CREDENTIALS = {
  production: { apiKey: 'HC_bench_production_api_key', publicKey: 'pk_bench_production' },
  sandbox: { apiKey: 'HC_bench_sandbox_api_key', publicKey: 'pk_bench_sandbox' },
}
export const FIAT_SANDBOX_BASE = '/api/sandbox/b2b'

const node = (script, extra = []) => [...extra, '--import', ORPHAN_GUARD, script]

export async function startUpstream (name, { core, tokenLifetimeS, session = false }) {
  const proc = start(name, process.execPath, node(`${BENCH_DIR}upstream.mjs`), {
    core,
    session,
    env: { PATH: process.env.PATH, BENCH_TOKEN_LIFETIME_S: String(tokenLifetimeS), BENCH_CREDENTIALS: JSON.stringify(BENCH_CREDENTIALS) },
  })
  const { port, smallBytes, largeBytes } = await waitForJsonLine(proc, 'port')
  return { proc, port, origin: `http://127.0.0.1:${port}`, smallBytes, largeBytes }
}

/** `script`: bare-proxy.mjs or plain-proxy.mjs. */
export async function startReferenceProxy (name, script, { core, upstreamOrigin, nodeArgs = [] }) {
  const proc = start(name, process.execPath, node(`${BENCH_DIR}${script}`, nodeArgs), {
    core,
    env: { PATH: process.env.PATH, BENCH_UPSTREAM: upstreamOrigin, BENCH_BASE_PATH: FIAT_SANDBOX_BASE },
  })
  const { port } = await waitForJsonLine(proc, 'port')
  return { proc, port, origin: `http://127.0.0.1:${port}` }
}

/**
 * Our proxy, both environments enabled, sandbox as the default one, run in `cwd` (a scratch
 * directory, so a developer's `.env` cannot change what is measured) with a clean environment.
 */
/** Our proxy's variables in front of the bench upstream: both environments, sandbox default, no egress check. */
export function ourProxyEnv (port, upstreamOrigin, logLevel = 'info') {
  return {
    ...OUR_START_ENV,
    PAYMENTS_FIAT_BASE_URL: `${upstreamOrigin}/api/b2b`,
    PAYMENTS_CRYPTO_BASE_URL: `${upstreamOrigin}/api`,
    PAYMENTS_PRODUCTION_API_KEY: BENCH_CREDENTIALS.production.apiKey,
    PAYMENTS_PRODUCTION_PUBLIC_KEY: BENCH_CREDENTIALS.production.publicKey,
    PAYMENTS_SANDBOX_API_KEY: BENCH_CREDENTIALS.sandbox.apiKey,
    PAYMENTS_SANDBOX_PUBLIC_KEY: BENCH_CREDENTIALS.sandbox.publicKey,
    PROXY_DEFAULT_ENVIRONMENT: 'sandbox',
    PROXY_HOST: '127.0.0.1',
    PROXY_PORT: String(port),
    PROXY_EGRESS_IP_URL: 'off',
    LOG_LEVEL: logLevel,
  }
}

export async function startOurProxy ({ name = 'our proxy', cli = CLI, core, upstreamOrigin, logFile, cwd, refreshMarginS, nodeArgs = OUR_NODE_ARGS, logLevel = 'info', extraEnv = {} }) {
  const port = await freePort()
  const env = {
    PATH: process.env.PATH,
    ...ourProxyEnv(port, upstreamOrigin, logLevel),
    PROXY_TOKEN_REFRESH_MARGIN_SECONDS: String(refreshMarginS),
    ...extraEnv,
  }
  const fd = logFifo(name, logFile)
  const proc = start(name, process.execPath, node(cli, nodeArgs), { core, env, cwd, stdout: fd })
  closeSync(fd)
  const origin = `http://127.0.0.1:${port}`
  await waitReady(proc, `${origin}/readyz`)
  return { proc, port, origin, env }
}

/** /readyz is 200 once every environment holds a token. */
async function waitReady (proc, url, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`our proxy exited at start\n${proc.err}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`our proxy was not ready within ${timeoutMs} ms (${url})\n${proc.err}`)
}

export async function getJson (url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`)
  return res.json()
}

export async function getText (url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
  return res.text()
}

/**
 * A callers file of `count` callers with 10 allow rules each (SPEC §7), and the key of the last
 * one, whose tenth rule is the only one that lets it reach the bench paths: the worst case of the
 * rule scan, behind an identity lookup among `count` keys. Rate limits are counted, never reached.
 */
export function writeCallersFile (path, count) {
  const keyOf = (i) => `pak_bench-caller-${String(i).padStart(6, '0')}-${'x'.repeat(24)}`
  const callers = Array.from({ length: count }, (_, i) => ({
    id: `bench-${i}`,
    keySha256: createHash('sha256').update(keyOf(i)).digest('hex'),
    allow: Array.from({ length: 10 }, (_, j) => ({ environments: ['sandbox'], interfaces: ['fiat'], methods: ['GET', 'POST'], paths: [j === 9 ? '/bench/**' : `/v1/rule-${j}/**`] })),
    rateLimit: { requests: 1_000_000_000, perSeconds: 1 },
  }))
  writeFileSync(path, JSON.stringify({ callers }))
  return keyOf(count - 1)
}

/**
 * --approvals (SPEC §11): two callers files of one key-less caller (the bench's requests come from
 * 127.0.0.1 and carry no key) with the same amount limit on the bench paths; the variant's also has
 * an `approveAbove` above every bench amount (1,500 KES), so approvals are configured and never
 * triggered. Returns each target's extra settings; the signing secret only seals approvals.
 */
export function writeApprovalsCallersFiles (dir) {
  const file = (approveAbove) => {
    const path = `${dir}/callers-${approveAbove ? 'approvals' : 'limits'}.json`
    writeFileSync(path, JSON.stringify({
      callers: [{
        id: 'bench-agent',
        sources: ['127.0.0.1/32'],
        allow: [{ environments: ['sandbox'], interfaces: ['fiat'], methods: ['GET', 'POST'], paths: ['/bench/**'] }],
        amountLimits: [{ paths: ['/bench/**'], amount: '/amount', currency: '/currency', perRequest: { KES: 1_000_000_000 }, ...(approveAbove ? { approveAbove: { KES: 1_000_000 } } : {}) }],
      }],
    }))
    return path
  }
  return {
    ours: { PROXY_CALLERS_FILE: file(false) },
    variant: { PROXY_CALLERS_FILE: file(true), PROXY_APPROVAL_SIGNING_SECRET: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, PROXY_WEBHOOK_STORE_PATH: `${dir}/approvals.db` },
  }
}

/**
 * A local redis-server for --redis (SPEC §9's shared store), as a replica would reach one on the
 * same host: no persistence, noeviction (records must not be evicted, docs/deploy.md). Resolves
 * once it answers PING.
 */
export async function startRedis ({ core, dir }) {
  const port = await freePort()
  const proc = start('redis-server', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction', '--dir', dir], { core })
  const deadline = Date.now() + 10_000
  while (!(await answersPing(port))) {
    if (proc.child.exitCode !== null || Date.now() > deadline) throw new Error(`redis-server did not answer PING on port ${port} (is it installed? bash scripts/ensure-test-tools.sh)\n${proc.err}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return { proc, url: `redis://127.0.0.1:${port}` }
}

function answersPing (port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
    socket.setTimeout(1000, () => { socket.destroy(); resolve(false) })
    socket.once('error', () => resolve(false))
    socket.once('data', (data) => { socket.destroy(); resolve(data.toString().startsWith('+PONG')) })
  })
}

/** `NAME=VALUE,NAME=VALUE` (an option's text) into an object of the proxy's own settings, or glibc's malloc tunables. */
export function parseSettings (option, text) {
  return Object.fromEntries(text.split(',').map((pair) => {
    const at = pair.indexOf('=')
    const name = pair.slice(0, at).trim()
    if (at < 1 || !/^(PROXY|LOG|MALLOC)_[A-Z0-9_]+$/.test(name)) throw new Error(`${option} takes NAME=VALUE pairs of PROXY_*, LOG_* or MALLOC_* (glibc) settings, got "${pair}"`)
    return [name, pair.slice(at + 1)]
  }))
}
