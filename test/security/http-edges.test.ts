import { connect } from 'node:net'
import t from 'tap'
import { providerEnv, startProvider, startProxy, waitReady } from '../helpers/harness.js'
import { readResponse, type RawResponse } from './raw-client.js'
import { assertNothingForwarded, assertProxyError, assertStillServes, assertWarned, send, startRig, type Rig } from './rig.js'

/** A contract answer written before the request was read: the shape, and the connection is closed. */
async function assertEdgeAnswer (t: Parameters<typeof assertProxyError>[0], res: RawResponse, status: number, code: string, label: string): Promise<void> {
  await assertProxyError(t, res, status, code, label)
  t.equal(res.headers['connection'], 'close', `${label}: Connection: close`)
}

async function refused (t: Parameters<typeof assertProxyError>[0], rig: Rig, bytes: string, status: number, code: string, label: string): Promise<void> {
  await assertEdgeAnswer(t, await send(rig, bytes), status, code, label)
  assertNothingForwarded(t, rig, label)
  assertWarned(t, rig, 'malformed request refused', label)
  await assertStillServes(t, rig, label)
}

t.test('malformed requests that never reach a route get the contract shape, a warn line and Connection: close', async (t) => {
  const rig = await startRig(t)
  await refused(t, rig, 'GET /sandbox/fiat/v1 HTTP/1.1 extra\r\nHost: 127.0.0.1\r\n\r\n', 400, 'BAD_REQUEST', 'malformed request line')
  await refused(t, rig, 'GARBAGE\r\n\r\n', 400, 'BAD_REQUEST', 'not HTTP at all')
  await refused(t, rig, `GET /sandbox/fiat/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(32 * 1024)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE', '32 KiB header')
  const smuggled = 'GET /sandbox/fiat/v1/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
  await refused(t, rig, `POST /sandbox/fiat/v1/a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${smuggled.length + 5}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`, 400, 'BAD_REQUEST', 'Content-Length with Transfer-Encoding')
  t.notOk(rig.provider.upstreamRequests.some((r) => r.url.includes('smuggled')), 'the smuggled request never reached an upstream')
  const noHost = await send(rig, 'GET /sandbox/fiat/v1 HTTP/1.1\r\n\r\n')
  await assertProxyError(t, noHost, 400, 'BAD_REQUEST', 'HTTP/1.1 without Host')
  assertNothingForwarded(t, rig, 'HTTP/1.1 without Host')
})

t.test('an Expect other than 100-continue gets 417 EXPECTATION_FAILED in the contract shape', async (t) => {
  const rig = await startRig(t)
  const res = await send(rig, 'POST /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\n{}')
  await assertEdgeAnswer(t, res, 417, 'EXPECTATION_FAILED', 'Expect: something-else')
  assertNothingForwarded(t, rig, '417')
  await assertStillServes(t, rig, '417')
})

t.test('Expect: 100-continue: over the limit by declared length gets 413 and never 100; within it, 100 then forwarded', async (t) => {
  const rig = await startRig(t)
  const over = connect({ port: rig.proxy.port, host: '127.0.0.1' })
  t.teardown(() => over.destroy())
  over.write(`POST /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`)
  const refusedAnswer = await readResponse(over)
  t.notMatch(refusedAnswer.raw, /^HTTP\/1\.1 100/, 'no 100 Continue for a body over the limit')
  await assertEdgeAnswer(t, refusedAnswer, 413, 'BODY_TOO_LARGE', 'over the limit')
  assertNothingForwarded(t, rig, 'over the limit')

  const within = connect({ port: rig.proxy.port, host: '127.0.0.1' })
  t.teardown(() => within.destroy())
  const body = '{"amount":1}'
  within.write(`POST /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`)
  const interim = await new Promise<string>((resolve) => within.once('data', (chunk: Buffer) => { resolve(chunk.toString('latin1')) }))
  t.match(interim, /^HTTP\/1\.1 100 Continue\r\n/, '100 Continue within the limit')
  within.write(body)
  const answer = await readResponse(within)
  t.equal(answer.status, 200, 'forwarded')
  t.equal(rig.provider.upstreamRequests[0]?.body.toString('utf8'), body, 'the body arrived whole')
})

t.test('a client that stops mid-headers gets 408 REQUEST_TIMEOUT, and the next client is served', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider), { httpEdges: { headersTimeoutMs: 300, requestTimeoutMs: 600, linger: { totalMs: 2000, idleMs: 500 } } })
  await waitReady(proxy)
  const socket = connect({ port: proxy.port, host: '127.0.0.1' })
  t.teardown(() => socket.destroy())
  socket.write('GET /sandbox/fiat/v1 HTTP/1.1\r\nHost: 127.0')
  const res = await readResponse(socket, 5000)
  await assertEdgeAnswer(t, res, 408, 'REQUEST_TIMEOUT', 'stalled headers')
  t.same(proxy.logs.find('malformed request refused').map((r) => [r['level'], r['code']]), [[40, 'REQUEST_TIMEOUT']], 'logged once, at warn, with the code')
  const next = await fetch(`${proxy.url}/sandbox/fiat/v1/ping`)
  t.equal(next.status, 200, 'a new connection is served')
  await next.body?.cancel()
})

t.test('a lingering socket is closed at its bound even if the client keeps sending', async (t) => {
  const provider = await startProvider(t)
  const proxy = await startProxy(t, providerEnv(provider), { httpEdges: { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, linger: { totalMs: 600, idleMs: 400 } } })
  await waitReady(proxy)
  // Half-open, as a client that goes on uploading after our answer: Node's default would end the
  // client's side as soon as ours ends, and the test would see that close instead of the bound.
  const socket = connect({ port: proxy.port, host: '127.0.0.1', allowHalfOpen: true })
  socket.on('error', () => {})
  t.teardown(() => socket.destroy())
  const sentAt = performance.now()
  socket.write(`POST /sandbox/fiat/v1/payouts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`)
  const answer = readResponse(socket, 5000)
  let writes = 0
  const drip = setInterval(() => { if (!socket.destroyed) { socket.write('x'.repeat(1024)); writes++ } }, 50)
  t.teardown(() => clearInterval(drip))
  const closed = new Promise<number>((resolve) => socket.once('close', () => { resolve(performance.now() - sentAt) }))
  await assertEdgeAnswer(t, await answer, 413, 'BODY_TOO_LARGE', 'answered while the body still arrives')
  const unclosed = new Promise<number>((resolve) => { setTimeout(() => { resolve(Infinity) }, 3000).unref() })
  const closedAfterMs = await Promise.race([closed, unclosed])
  clearInterval(drip)
  // Answered at once (the declared length is over the limit), then read for at most totalMs (600):
  // the idle bound (400) never fires while the client sends every 50 ms.
  t.ok(writes >= 8, `the client kept sending until the close (${writes} writes)`)
  t.ok(closedAfterMs >= 550 && closedAfterMs <= 1200, `closed ${Math.round(closedAfterMs)} ms after the request: at the 600 ms bound`)
})
