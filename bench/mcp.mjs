/**
 * `npm run bench -- --workloads mcp`: what a tool call costs over the same request over HTTP
 * (SPEC §13, issue 45: at most 1 ms p50 added, at least 0.7 x the throughput). One sidecar as
 * `npm start` runs it, with PROXY_MCP=on and a callers file of one keyed caller, in front of the
 * bench upstream; the same caller sends, interleaved over the rounds:
 * - http: `GET /fiat/bench/small` with its key;
 * - mcp: `POST /mcp`, a stateless 2026-07-28 `tools/call` of `payments_request` making that GET.
 * - oauth: the same tools/call with an OAuth access token (SPEC §15, issue 59: at most 0.1 ms p50
 *   added over the caller key): an ES256 JWT of a local authorization server (its metadata and JWKS
 *   served by this script; what is measured is the sidecar's check of the token), mapped to a
 *   caller with the same rules.
 * For each: req/s and req/CPU-s at saturation (50 connections), p50/p99 at a steady rate. Then
 * `tools/list` alone, and in-process the fixed cost of Fastify's `inject` (what a shared function
 * below the routes could save at most). A tool error is an HTTP 200, so the run checks from
 * `mcp_tool_calls_total` that every call was `ok`.
 * Options: --rounds N (3) --duration S (5) --rate-duration S (3) --rate R (1000) --connections C (50)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { cpuLayout, pinProcess, stopAll } from './lib/processes.mjs'
import { measure, wrkVersion, writeBodyFile } from './lib/measure.mjs'
import { CLI, getText, startOurProxy, startUpstream } from './lib/targets.mjs'

const { values: argv } = parseArgs({
  strict: false,
  options: {
    rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, 'rate-duration': { type: 'string', default: '3' },
    rate: { type: 'string', default: '1000' }, 'rate-warmup': { type: 'string', default: '2' }, connections: { type: 'string', default: '50' },
  },
})
const ROUNDS = Number(argv.rounds)
const DURATION_S = Number(argv.duration)
const RATE_DURATION_S = Number(argv['rate-duration'])
const RATE = Number(argv.rate)
const KEY = `pak_bench-mcp-agent-${'x'.repeat(32)}`
const RESOURCE = 'https://agents.example.com/mcp'
/** The local authorization server of the oauth workload (startIssuer). */
let issuerServer = null
const TOOL = wrkVersion() !== null ? 'wrk' : 'autocannon'
const layout = cpuLayout()
const LOAD_CORE = layout.pinning ? 0 : null
const TARGET_CORE = layout.pinning ? 1 : null
const UPSTREAM_CORE = layout.pinning ? (layout.cores >= 3 ? 2 : 0) : null
const log = (line) => process.stderr.write(`${line}\n`)
const scratch = mkdtempSync(join(tmpdir(), 'payments-auth-proxy-bench-mcp-'))

const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} }
const mcpHeaders = (method, name) => ({
  authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }),
})

try {
  if (LOAD_CORE !== null) pinProcess(process.pid, LOAD_CORE)
  const loadBefore = loadavg()
  const callers = join(scratch, 'callers.json')
  writeFileSync(callers, JSON.stringify({
    callers: [{ id: 'bench-agent', keySha256: createHash('sha256').update(KEY).digest('hex'), allow: [{ environments: ['sandbox'], interfaces: ['fiat'], methods: ['GET'], paths: ['/bench/**'] }], rateLimit: { requests: 1_000_000_000, perSeconds: 1 } },
      { id: 'bench-oauth', oauth: [{ clientId: 'bench-client' }], allow: [{ environments: ['sandbox'], interfaces: ['fiat'], methods: ['GET'], paths: ['/bench/**'] }], rateLimit: { requests: 1_000_000_000, perSeconds: 1 } }],
  }))
  const issuer = await startIssuer()
  const upstream = await startUpstream('upstream', { core: UPSTREAM_CORE, tokenLifetimeS: 3600 })
  const ours = await startOurProxy({ core: TARGET_CORE, upstreamOrigin: upstream.origin, logFile: join(scratch, 'proxy.log'), cwd: scratch, refreshMarginS: 60, extraEnv: { PROXY_MCP: 'on', PROXY_CALLERS_FILE: callers, PROXY_MCP_OAUTH_ISSUER: issuer.url, PROXY_MCP_PUBLIC_URL: RESOURCE } })
  const accessToken = await issuer.token()
  const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'payments_request', arguments: { interface: 'fiat', method: 'GET', path: '/bench/small' }, _meta: ENVELOPE } })
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } })
  const workloads = [
    { name: 'http', label: 'GET /fiat/bench/small over HTTP', request: { url: `${ours.origin}/fiat/bench/small`, method: 'GET', headers: { authorization: `Bearer ${KEY}` }, body: null } },
    { name: 'mcp', label: 'the same GET as a tools/call of payments_request', request: { url: `${ours.origin}/mcp`, method: 'POST', headers: mcpHeaders('tools/call', 'payments_request'), body: call, bodyFile: writeBodyFile(join(scratch, 'call.json'), call) } },
    { name: 'oauth', label: 'the same tools/call with an OAuth access token', request: { url: `${ours.origin}/mcp`, method: 'POST', headers: { ...mcpHeaders('tools/call', 'payments_request'), authorization: `Bearer ${accessToken}` }, body: call, bodyFile: join(scratch, 'call.json') } },
    { name: 'list', label: 'tools/list (no request made)', request: { url: `${ours.origin}/mcp`, method: 'POST', headers: mcpHeaders('tools/list'), body: list, bodyFile: writeBodyFile(join(scratch, 'list.json'), list) } },
  ]
  for (const workload of workloads.slice(1, 3)) {
    const first = await fetch(`${ours.origin}/mcp`, { method: 'POST', headers: workload.request.headers, body: call })
    const firstText = await first.text()
    if (!firstText.includes('"structuredContent":{"status":200')) throw new Error(`the ${workload.name} tool call does not reach the bench upstream: ${firstText.slice(0, 300)}`)
  }
  const one = (kind, workload, durationS) => measure({ kind, tool: TOOL, request: workload.request, connections: Number(argv.connections), durationS, rate: RATE, warmupS: Number(argv['rate-warmup']), loadCore: LOAD_CORE, targetCore: TARGET_CORE, targetPid: ours.proc.pid })
  log(`layout: ${layout.pinning ? `load on core ${LOAD_CORE}, sidecar on core ${TARGET_CORE}, upstream on core ${UPSTREAM_CORE}` : 'not pinned'}; tool: ${TOOL}; warming up`)
  for (const workload of workloads) await one('saturate', workload, 2)
  const rows = Object.fromEntries(workloads.map((w) => [w.name, { saturate: [], rate: [] }]))
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? workloads : [...workloads].reverse()
    for (const workload of order) {
      for (const [kind, durationS] of [['saturate', DURATION_S], ['rate', RATE_DURATION_S]]) {
        const result = await one(kind, workload, durationS)
        rows[workload.name][kind].push(result)
        log(`round ${round} ${workload.name} ${kind}: ${result.rps} req/s${result.rpsPerCpuS === null ? '' : `, ${result.rpsPerCpuS} req/CPU-s`}, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms${result.non2xx > 0 ? `, ${result.non2xx} non-2xx` : ''}, other processes on the sidecar's core ${result.foreignCpuPctOnTargetCore ?? '?'}%`)
      }
    }
  }
  const metrics = await getText(`${ours.origin}/metrics`)
  const outcomes = [...metrics.matchAll(/mcp_tool_calls_total\{caller="bench-(?:agent|oauth)",tool="payments_request",outcome="(\w+)"\} (\d+)/g)].map((m) => [m[1], Number(m[2])])
  if (outcomes.some(([outcome, n]) => outcome !== 'ok' && n > 0)) throw new Error(`tool calls that were not ok: ${JSON.stringify(outcomes)}`)
  print(rows, workloads, { loadBefore, loadAfter: loadavg(), outcomes })
} finally {
  await stopAll()
  issuerServer?.close()
  rmSync(scratch, { recursive: true, force: true })
}

/** A local authorization server: its RFC 8414 metadata, its JWKS, and one access token it signed. */
async function startIssuer () {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk = { ...await exportJWK(publicKey), kid: 'bench-1', alg: 'ES256', use: 'sig' }
  let url = ''
  issuerServer = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/.well-known/oauth-authorization-server') res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks` }))
    else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }))
    else { res.statusCode = 404; res.end('{}') }
  })
  await new Promise((resolve) => issuerServer.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${issuerServer.address().port}`
  return {
    url,
    token: async () => await new SignJWT({ client_id: 'bench-client', sub: 'bench-client', scope: 'payments' })
      .setProtectedHeader({ alg: 'ES256', kid: 'bench-1', typ: 'at+jwt' }).setIssuer(url).setAudience(RESOURCE).setIssuedAt().setExpirationTime('2h').sign(privateKey),
  }
}

function median (xs) {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  return s.length === 0 ? null : s.length % 2 === 1 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

function print (rows, workloads, { loadBefore, loadAfter, outcomes }) {
  const f = (x, digits = 2) => x === null ? 'n/a' : x.toFixed(digits)
  const of = (name, kind, pick) => median(rows[name][kind].map(pick))
  const lines = [
    `\nNode ${process.version}, ${CLI}; ${ROUNDS} rounds of ${DURATION_S} s (saturation, 50 connections) and ${RATE_DURATION_S} s at ${RATE} req/s (p50/p99, medians of the rounds); load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after; tool calls by outcome: ${JSON.stringify(Object.fromEntries(outcomes))}\n`,
    '| workload | req/s | req/CPU-s | p50 (ms) | p99 (ms) | other processes on its core |',
    '|---|---|---|---|---|---|',
    ...workloads.map((w) => `| ${w.label} | ${f(of(w.name, 'saturate', (r) => r.rps), 0)} | ${f(of(w.name, 'saturate', (r) => r.rpsPerCpuS), 0)} | ${f(of(w.name, 'rate', (r) => r.latencyMs.p50), 3)} | ${f(of(w.name, 'rate', (r) => r.latencyMs.p99), 3)} | ${f(of(w.name, 'saturate', (r) => r.foreignCpuPctOnTargetCore), 0)}% |`),
  ]
  const added = of('mcp', 'rate', (r) => r.latencyMs.p50) - of('http', 'rate', (r) => r.latencyMs.p50)
  const oauthAdded = of('oauth', 'rate', (r) => r.latencyMs.p50) - of('mcp', 'rate', (r) => r.latencyMs.p50)
  const perRound = (pick) => rows.mcp.saturate.map((r, i) => pick(r) / pick(rows.http.saturate[i]))
  const throughput = median(perRound((r) => r.rps))
  const perCpu = median(perRound((r) => r.rpsPerCpuS))
  lines.push('', '| figure | measured | goal |', '|---|---|---|',
    `| p50 added by a tool call at ${RATE} req/s | ${f(added, 3)} ms | ≤ 1 ms ${added <= 1 ? '✓' : '✗'} |`,
    `| throughput, tool calls / HTTP (median of the rounds' ratios) | ${f(throughput)} × | ≥ 0.7 × ${throughput >= 0.7 ? '✓' : '✗'} |`,
    `| req/CPU-s, tool calls / HTTP | ${f(perCpu)} × | (the same, robust to neighbours) |`,
    `| p50 added by an OAuth access token over the caller key, at ${RATE} req/s | ${f(oauthAdded, 3)} ms | ≤ 0.1 ms ${oauthAdded <= 0.1 ? '✓' : '✗'} |`,
    `| req/s, OAuth token / caller key | ${f(median(rows.oauth.saturate.map((r, i) => r.rps / rows.mcp.saturate[i].rps)))} × | |`)
  process.stdout.write(`${lines.join('\n')}\n`)
}
