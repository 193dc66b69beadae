/**
 * The benchmark's upstream: a plain node:http server, as cheap as possible per request, that plays
 * the provider for both environments and both interfaces (any base path works: only the last path
 * segments matter).
 * - `POST …/auth/generate-bearer-token`: the token endpoint of SPEC §1 (checks `api-key` and
 *   `publicKey`, answers an HS256 JWT and `expiresAt` BENCH_TOKEN_LIFETIME_S ahead; every call issues
 *   a new token). Every call is recorded per environment, so the benchmark can check that the proxy
 *   asked exactly once per refresh window.
 * - `GET …/bench/small` (~200 B JSON), `GET …/bench/large` (64 KiB JSON), `POST …/bench/echo` (reads
 *   the body, answers ~200 B JSON), `POST …/bench/payout` (the same, as a payout answered `pending`
 *   with a new transaction id at `/data/transactionId`, as SPEC §12 follows it): need an
 *   `Authorization` header; a Bearer token this server issued must not be expired (else 401),
 *   `Bearer bench-static` is what the direct and bare targets send.
 * - `GET /__bench/stats`: the counters, as JSON.
 * Prints `{"port": N}` when listening. Env: BENCH_UPSTREAM_PORT (default 0), BENCH_TOKEN_LIFETIME_S
 * (default 60), BENCH_CREDENTIALS (JSON {production|sandbox: {apiKey, publicKey}}).
 */
import { createServer } from 'node:http'
import { createHmac } from 'node:crypto'

const LIFETIME_S = Number(process.env.BENCH_TOKEN_LIFETIME_S ?? 60)
const CREDENTIALS = JSON.parse(process.env.BENCH_CREDENTIALS ?? '{}')
const SECRET = 'bench-signing-secret'
const STATIC_TOKEN = 'bench-static'
const TOKEN_SUFFIX = '/auth/generate-bearer-token'

function json (value, size) {
  const base = JSON.stringify(value)
  // Pad with a field of spaces-free filler so the body has exactly `size` bytes.
  const filler = size - base.length - ',"pad":""'.length
  return Buffer.from(filler > 0 ? `${base.slice(0, -1)},"pad":"${'x'.repeat(filler)}"}` : base)
}

const record = { id: 'txn_01HZX3K6Q2V8M4R7T9W1Y5B3N0', status: 'SUCCESSFUL', amount: 1500, currency: 'KES', externalReference: 'ref-000001' }
const SMALL = json({ success: true, data: record }, 200)
const LARGE = json({ success: true, data: Array.from({ length: 300 }, (_, i) => ({ ...record, externalReference: `ref-${i}` })) }, 64 * 1024)
const HEADERS_SMALL = { 'content-type': 'application/json', 'content-length': String(SMALL.length) }
const HEADERS_LARGE = { 'content-type': 'application/json', 'content-length': String(LARGE.length) }

const stats = {
  tokenRequests: { production: [], sandbox: [] },
  tokenRejected: 0,
  requests: { ok: 0, missingAuthorization: 0, unknownToken: 0, expiredToken: 0, notFound: 0 },
  postBytes: { min: Infinity, max: 0 },
}
/** token -> expiresAt (ms) */
const issued = new Map()
let serial = 0
let payouts = 0

function environmentOf (path) {
  return path.includes('/sandbox/') ? 'sandbox' : 'production'
}

function b64url (value) {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

function issueToken (req, res, path) {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => { body += chunk })
  req.on('end', () => {
    const environment = environmentOf(path)
    const expected = CREDENTIALS[environment]
    let publicKey
    try { publicKey = JSON.parse(body).publicKey } catch {}
    if (expected === undefined || req.headers['api-key'] !== expected.apiKey || publicKey !== expected.publicKey) {
      stats.tokenRejected++
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"success":false,"message":"invalid credentials"}')
      return
    }
    const now = Date.now()
    stats.tokenRequests[environment].push(now)
    const expiresAt = Math.floor(now / 1000) + LIFETIME_S
    const input = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: publicKey, env: environment, iat: Math.floor(now / 1000), exp: expiresAt, jti: ++serial })}`
    const token = `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
    issued.set(token, expiresAt * 1000)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, token, expiresAt }))
  })
}

/** Returns true when the request may be answered. */
function authorized (req, res) {
  const auth = req.headers.authorization
  if (auth === undefined) {
    stats.requests.missingAuthorization++
  } else {
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : ''
    if (token === STATIC_TOKEN) { stats.requests.ok++; return true }
    const expiresAtMs = issued.get(token)
    if (expiresAtMs === undefined) stats.requests.unknownToken++
    else if (expiresAtMs <= Date.now()) stats.requests.expiredToken++
    else { stats.requests.ok++; return true }
  }
  req.resume()
  res.writeHead(401, { 'content-type': 'application/json' }).end('{"success":false,"message":"unauthorized"}')
  return false
}

const server = createServer((req, res) => {
  const url = req.url
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  if (path.endsWith('/bench/small')) {
    if (authorized(req, res)) res.writeHead(200, HEADERS_SMALL).end(SMALL)
  } else if (path.endsWith('/bench/large')) {
    if (authorized(req, res)) res.writeHead(200, HEADERS_LARGE).end(LARGE)
  } else if (path.endsWith('/bench/echo') && req.method === 'POST') {
    if (!authorized(req, res)) return
    let size = 0
    req.on('data', (chunk) => { size += chunk.length })
    req.on('end', () => {
      if (size < stats.postBytes.min) stats.postBytes.min = size
      if (size > stats.postBytes.max) stats.postBytes.max = size
      res.writeHead(200, HEADERS_SMALL).end(SMALL)
    })
  } else if (path.endsWith('/bench/payout') && req.method === 'POST') {
    if (!authorized(req, res)) return
    req.resume()
    req.on('end', () => {
      const body = json({ success: true, data: { transactionId: `txn_${String(++payouts).padStart(12, '0')}`, status: 'pending', amount: 1500, currency: 'KES' } }, 200)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) }).end(body)
    })
  } else if (path.endsWith(TOKEN_SUFFIX) && req.method === 'POST') {
    issueToken(req, res, path)
  } else if (path === '/__bench/stats') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats))
  } else {
    stats.requests.notFound++
    req.resume()
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"success":false,"message":"not found"}')
  }
})
// Idle keep-alive connections between two measurements must not be closed under the client.
server.keepAliveTimeout = 65_000

server.listen(Number(process.env.BENCH_UPSTREAM_PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, smallBytes: SMALL.length, largeBytes: LARGE.length })}\n`)
})
process.once('SIGTERM', () => { server.close(); server.closeAllConnections() })
process.once('SIGINT', () => { server.close(); server.closeAllConnections() })
