import t, { type Test } from 'tap'
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/server.js'
import { assertNothingForwarded, assertStillServes, startRig } from './rig.js'
import { eventually } from '../helpers/eventually.js'
import { assertProxyError } from '../helpers/proxy-error.js'
import { open, parseResponses } from './raw-client.js'
import { startRecordingUpstream } from './recording-upstream.js'

/**
 * Slowloris: a client that trickles its headers or body holds a connection (and, for a streamed
 * body, an upstream request) for as long as the server lets it. Node's defaults never let go
 * (`requestTimeout` 0 before Node 18, 300 s after). The proxy sets both timeouts; to keep this test
 * short they are lowered on the listening server (public `http.Server` properties, read by Node's
 * connection checker every second), and the trickle is scaled down with them.
 */
const LOWERED_HEADERS_MS = 500
const LOWERED_REQUEST_MS = 1000
/** Node checks timeouts once per connectionsCheckingInterval (1 s in server.ts): allow for two checks. */
const SLACK_MS = 2000
const TRICKLE_MS = 200

function lowerTimeouts (server: Server): void {
  server.headersTimeout = LOWERED_HEADERS_MS
  server.requestTimeout = LOWERED_REQUEST_MS
}

/** Writes `bytes` one at a time every TRICKLE_MS until done or the socket is closed. */
function trickle (socket: Socket, bytes: string): void {
  let i = 0
  const timer = setInterval(() => {
    if (i >= bytes.length || socket.destroyed || !socket.writable) {
      clearInterval(timer)
      return
    }
    socket.write(bytes[i++] ?? '')
  }, TRICKLE_MS)
  socket.once('close', () => clearInterval(timer))
}

/** A closed connection is not an answer: the client must have received the 408 in the contract shape. */
async function assertAnswered408 (t: Test, raw: string, label: string): Promise<void> {
  const [res] = parseResponses(raw)
  if (res === undefined) t.fail(`${label}: the connection closed without an answer (${raw.length} bytes)`)
  else await assertProxyError(t, res, 408, 'REQUEST_TIMEOUT', label)
}

t.test('the proxy listens with a headers timeout and a request timeout', async (t) => {
  const rig = await startRig(t)
  const server = rig.proxy.app.server
  t.equal(server.headersTimeout, HEADERS_TIMEOUT_MS, 'headers timeout')
  t.equal(server.requestTimeout, REQUEST_TIMEOUT_MS, 'request timeout')
  t.ok(HEADERS_TIMEOUT_MS > 0 && HEADERS_TIMEOUT_MS <= 30_000, 'headers must arrive within seconds')
  t.ok(REQUEST_TIMEOUT_MS >= HEADERS_TIMEOUT_MS && REQUEST_TIMEOUT_MS <= 120_000, 'a whole payments request within a couple of minutes')
})

t.test('headers sent a byte at a time are cut off at the headers timeout, nothing forwarded', async (t) => {
  const rig = await startRig(t)
  lowerTimeouts(rig.proxy.app.server)
  const { socket, closed } = open(rig.proxy.port)
  t.teardown(() => socket.destroy())
  trickle(socket, 'POST /production/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
  const { raw, afterMs } = await closed
  t.ok(afterMs >= LOWERED_HEADERS_MS - 100 && afterMs <= LOWERED_HEADERS_MS + SLACK_MS, `closed at the headers timeout (${Math.round(afterMs)} ms)`)
  await assertAnswered408(t, raw, 'slow headers')
  assertNothingForwarded(t, rig, 'slow headers')
  await assertStillServes(t, rig, 'slow headers')
})

// With idempotency on (the default) every POST body is held to be read as JSON (SPEC §8): only
// with it off does a POST body stream, which is the case the second half is about.
t.test('a body sent a byte at a time is cut off at the request timeout and its upstream request aborted (PROXY_IDEMPOTENCY=off)', async (t) => {
  const upstream = await startRecordingUpstream(t)
  const rig = await startRig(t, { PAYMENTS_CRYPTO_BASE_URL: upstream.baseUrl, PROXY_IDEMPOTENCY: 'off' })
  const server = rig.proxy.app.server
  server.headersTimeout = LOWERED_HEADERS_MS
  const json = '{"amount":100,"externalReference":"slow-1"}'
  const cases = [
    // Held in memory for a possible 401 retry: the upstream request never starts.
    { label: 'held JSON body', path: '/production/crypto/v1/held', head: `Content-Type: application/json\r\nContent-Length: ${json.length}`, body: json },
    // Streamed: the upstream request starts at once and must be aborted.
    { label: 'streamed chunked body', path: '/production/crypto/v1/streamed', head: 'Content-Type: application/octet-stream\r\nTransfer-Encoding: chunked', body: `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n` },
  ]
  const answered = cases.map(({ label, path, head, body }) => {
    const { socket, closed } = open(rig.proxy.port)
    t.teardown(() => socket.destroy())
    socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${head}\r\n\r\n`)
    trickle(socket, body)
    return { label, closed }
  })
  // The request timeout is lowered once the streamed request has reached the upstream: on a loaded
  // machine the proxy may take longer than the lowered timeout to start it, and then the abort would
  // go untested. Node's checker reads the property at each check, so the timeout applies from here.
  await eventually(() => upstream.requests.length > 0, { what: 'the streamed request to reach the upstream' })
  const loweredAt = performance.now()
  server.requestTimeout = LOWERED_REQUEST_MS
  await Promise.all(answered.map(async ({ label, closed }) => {
    const { raw, afterMs } = await closed
    const sinceLowered = performance.now() - loweredAt
    t.ok(afterMs >= LOWERED_REQUEST_MS - 100 && sinceLowered <= LOWERED_REQUEST_MS + SLACK_MS, `${label}: closed at the request timeout (${Math.round(afterMs)} ms after it was sent, ${Math.round(sinceLowered)} ms after the timeout was lowered)`)
    await assertAnswered408(t, raw, label)
  }))
  t.same(upstream.requests.map((r) => r.url), ['/api/v1/streamed'], 'only the streamed body started an upstream request')
  const streamed = await upstream.settled(1)
  t.equal(streamed.state, 'aborted', 'streamed body: upstream request aborted')
  t.ok(streamed.bytes < json.length, 'streamed body: upstream never got the whole body')
  t.equal(rig.provider.tokenRequests.length, rig.startupTokenRequests, 'no token request')
  await assertStillServes(t, rig, 'slow bodies')
})
